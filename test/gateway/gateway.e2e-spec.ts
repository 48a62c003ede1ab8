/**
 * `aer1 gateway` end to end: a real MCP tool server and client from the
 * official SDK, over Streamable HTTP and stdio on both sides, through the
 * gateway, into a real ledger over its HTTP API.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { startGateway, GatewayOptions, RunningGateway } from '../../src/cli/gateway/gateway';
import { LEDGER_UNAVAILABLE } from '../../src/cli/gateway/session';
import { cli } from '../cli/helpers';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { recordingFetch, startToolServer, StreamClientTransport, TOOL_SERVER_SCRIPT } from './harness';

interface Receipt {
  id: string;
  tool: string;
  provenance_class: string;
  canonical_bytes: string;
  status: string;
}

/** A port nothing listens on (taken and given back). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

type Side = 'http' | 'stdio';

/** An SDK client connected to the gateway's downstream side; `saved` is every JSON-RPC text the client received. */
async function agent(gw: RunningGateway, down: Side, stdio?: StreamClientTransport, headers: Record<string, string> = {}): Promise<{ client: Client; saved: string[] }> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  if (down === 'stdio') {
    await client.connect(stdio!);
    return { client, saved: stdio!.lines };
  }
  const saved: string[] = [];
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url!), { fetch: recordingFetch(saved), requestInit: { headers } }));
  return { client, saved };
}

/** The saved JSON-RPC response that carries receipt `id`. */
function savedResponse(saved: string[], id: string): string {
  const text = saved.find((s) => s.includes(id));
  expect(text).toBeDefined();
  return text!;
}

describe.each(DIALECTS)('aer1 gateway, ledger on %s', (dialect) => {
  let t: TestApp;
  let ledgerUrl: string;
  let key: string;
  let tools: Awaited<ReturnType<typeof startToolServer>>;
  let dir: string;
  beforeAll(async () => {
    t = await startApp(dialect);
    await t.app.listen(0, '127.0.0.1');
    ledgerUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
    key = (await t.app.get(ApiKeysService).create('mcp-gateway', 'producer', { gateway: true, systems: [] })).key;
    tools = await startToolServer();
    dir = mkdtempSync(join(tmpdir(), 'aer1-gateway-'));
  });
  afterAll(async () => {
    await tools.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const timeline = async (job: string) =>
    (await t.http.get(`/api/jobs/${encodeURIComponent(job)}/timeline`)).body as {
      entries: { id: string; seq: number; tool: string; provenance_class: string; close?: boolean }[];
      head: { seq: number; closed: boolean };
      commitments: { issued_by: string | null; binding_at_record: boolean }[];
    };
  const verdict = async (job: string) => {
    const v = (await t.http.get(`/api/jobs/${encodeURIComponent(job)}/verify`)).body as { verdict: string; reasons: string[] };
    return [v.verdict, v.reasons];
  };

  async function gateway(up: Side, down: Side, extra: Partial<GatewayOptions> = {}): Promise<{ gw: RunningGateway; stdio?: StreamClientTransport }> {
    const stdio = down === 'stdio' ? new StreamClientTransport() : undefined;
    const gw = await startGateway({
      server: ledgerUrl,
      key,
      upstream: up === 'http' ? { url: tools.url } : { command: process.execPath, args: [TOOL_SERVER_SCRIPT] },
      ...(down === 'http' ? { listen: '127.0.0.1:0' } : { stdio: { stdin: stdio!.toServer, stdout: stdio!.fromServer } }),
      onLedgerDown: 'refuse',
      warn: () => undefined,
      ...extra,
    });
    return { gw, stdio };
  }

  const combos: [Side, Side][] = dialect === 'sqlite' ? [['http', 'http'], ['http', 'stdio'], ['stdio', 'http'], ['stdio', 'stdio']] : [['http', 'http'], ['stdio', 'stdio']];
  it.each(combos)('upstream %s, downstream %s: the answer carries a receipt aer1 verify accepts, the timeline has the call, a failing tool is a failed call', async (up, down) => {
    const job = `gw-${dialect}-${up}-${down}`;
    const { gw, stdio } = await gateway(up, down, { job });
    try {
      const { client, saved } = await agent(gw, down, stdio);
      const ok = (await client.callTool({ name: 'echo', arguments: { text: 'héllo "quoted"' } })) as unknown as { content: { text: string }[]; _receipt: Receipt };
      expect(ok.content[0].text).toBe('echo: héllo "quoted"');
      const r = ok._receipt;
      expect(r).toMatchObject({ tool: 'echo', provenance_class: 'OBSERVED VIA GATEWAY', status: 'ok', verification_status: 'execution_observed', hash_algorithm: 'sha256' });
      // The committed bytes are the upstream's result member as it was written (the SDK server writes JSON.stringify of it).
      const { _receipt: _, ...result } = ok;
      expect(Buffer.from(r.canonical_bytes, 'base64').toString('utf8')).toBe(JSON.stringify(result));

      const failed = (await client.callTool({ name: 'fail', arguments: {} })) as unknown as { isError: boolean; _receipt: Receipt };
      expect(failed.isError).toBe(true);
      expect(failed._receipt).toMatchObject({ tool: 'fail', status: 'tool_error', provenance_class: 'OBSERVED VIA GATEWAY' });

      // The saved JSON-RPC responses verify with the offline verifier.
      for (const id of [r.id, failed._receipt.id]) {
        const file = join(dir, `${job}-${id}.json`);
        writeFileSync(file, savedResponse(saved, id));
        const v = await cli(['verify', file, '--json']);
        expect(v.err).toBe('');
        expect(v.code).toBe(0);
        expect(JSON.parse(v.out)).toMatchObject({ verdict: 'valid', form: 'transport', wrapped_in: 'jsonrpc', id });
      }

      // Recorded in the ledger and appended to the job's timeline, in call order.
      const tl = await timeline(job);
      expect(tl.entries.map((e) => [e.seq, e.id, e.tool, e.provenance_class])).toEqual([
        [1, r.id, 'echo', 'OBSERVED VIA GATEWAY'],
        [2, failed._receipt.id, 'fail', 'OBSERVED VIA GATEWAY'],
      ]);
      const jv = (await t.http.get(`/api/jobs/${encodeURIComponent(job)}/verify`)).body;
      // Every link holds; the chain is open while the session runs, which S7 reports as not_closed. The failing tool is a failed call.
      expect([jv.verdict, jv.reasons, jv.failed_calls]).toEqual(['invalid', ['not_closed'], 1]);
      const stored = await t.http.get(`/api/receipts/${failed._receipt.id}/verify`);
      expect(stored.status).toBe(200);
      expect(stored.body.verdict).toBe('valid');
      // Every other message passed through: the tool list is the server's.
      expect((await client.listTools()).tools.map((x) => x.name).sort()).toEqual(['count', 'echo', 'fail']);
      await client.close();
    } finally {
      await gw.close();
    }
    // The session ended (stdio: the agent closed stdin; HTTP: the gateway stopped): the ledger closed the job with its
    // closing marker, recorded with the gateway's key, and issued its endpoint commitment.
    const tl = await timeline(job);
    expect(tl.entries.map((e) => [e.seq, e.tool, e.provenance_class, e.close ?? false])).toEqual([
      [1, 'echo', 'OBSERVED VIA GATEWAY', false],
      [2, 'fail', 'OBSERVED VIA GATEWAY', false],
      [3, 'aer1.job.close', 'OBSERVED VIA GATEWAY', true],
    ]);
    expect(tl.head).toMatchObject({ seq: 3, closed: true });
    expect(tl.commitments).toMatchObject([{ issued_by: 'ledger', binding_at_record: true }]);
    expect(await verdict(job)).toEqual(['valid', []]);
    // The closing marker is the close, not a call: two calls, one failed.
    const closed = (await t.http.get(`/api/jobs/${encodeURIComponent(job)}/verify`)).body;
    expect([closed.entry_count, closed.failed_calls]).toEqual([3, 1]);
    expect(closed.headline).toMatch(/; 1 of 2 recorded calls failed$/);
    expect((await t.http.get(`/jobs/${encodeURIComponent(job)}`)).text).toContain('1 of 2 calls failed (recorded status not ok)');
  });

  it('closes a job when the last session recording in it ends (HTTP DELETE), not while another session still records in it', async () => {
    const job = `gw-shared-${dialect}`;
    const { gw } = await gateway('http', 'http', { job });
    try {
      const a = await agent(gw, 'http');
      const b = await agent(gw, 'http');
      await a.client.callTool({ name: 'echo', arguments: { text: 'a' } });
      await b.client.callTool({ name: 'echo', arguments: { text: 'b' } });
      await (a.client.transport as StreamableHTTPClientTransport).terminateSession();
      await a.client.close();
      // b still records in the job: it stays open, and b's next call is appended.
      await b.client.callTool({ name: 'count', arguments: {} });
      expect((await timeline(job)).head).toMatchObject({ seq: 3, closed: false });
      await (b.client.transport as StreamableHTTPClientTransport).terminateSession();
      await b.client.close();
      // The close runs after b's session ended, before gw.close returns; wait for it here, the gateway still up.
      for (let i = 0; i < 100 && !(await timeline(job)).head.closed; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await timeline(job)).entries.map((e) => e.tool)).toEqual(['echo', 'echo', 'count', 'aer1.job.close']);
      expect(await verdict(job)).toEqual(['valid', []]);
    } finally {
      await gw.close();
    }
    // A closed job takes no more calls: refused before the tool runs, by this gateway's kind and by a fresh one (which reads the head first).
    const ran = tools.calls.length;
    const again = await gateway('http', 'http', { job });
    try {
      const { client } = await agent(again.gw, 'http');
      await expect(client.callTool({ name: 'echo', arguments: { text: 'late' } })).rejects.toMatchObject({ code: LEDGER_UNAVAILABLE, data: { reason: 'timeline_closed', job_id: job } });
      await client.close();
    } finally {
      await again.gw.close();
    }
    expect(tools.calls.length).toBe(ran);
    expect((await timeline(job)).head.seq).toBe(4);
  });

  it('closeOnExit false (--no-close-on-exit): the job continues across sessions and stays open', async () => {
    const job = `gw-continues-${dialect}`;
    for (const text of ['first session', 'second session']) {
      const { gw, stdio } = await gateway('stdio', 'stdio', { job, closeOnExit: false });
      try {
        const { client } = await agent(gw, 'stdio', stdio);
        await client.callTool({ name: 'echo', arguments: { text } });
        await client.close();
        await gw.done;
      } finally {
        await gw.close();
      }
    }
    const tl = await timeline(job);
    expect(tl.entries.map((e) => [e.seq, e.tool])).toEqual([
      [1, 'echo'],
      [2, 'echo'],
    ]);
    expect(tl.head.closed).toBe(false);
    expect(await verdict(job)).toEqual(['invalid', ['not_closed']]);
  });

  it('takes the job from X-AER1-Job, then params._meta["aer1/job_id"], else the MCP session id', async () => {
    const { gw } = await gateway('http', 'http');
    try {
      const byHeader = await agent(gw, 'http', undefined, { 'X-AER1-Job': `hdr-${dialect}` });
      await byHeader.client.callTool({ name: 'echo', arguments: { text: 'a' } });
      const plain = await agent(gw, 'http');
      await plain.client.callTool({ name: 'echo', arguments: { text: 'b' }, _meta: { 'aer1/job_id': `meta-${dialect}` } });
      const r = (await plain.client.callTool({ name: 'echo', arguments: { text: 'c' } })) as unknown as { _receipt: Receipt };
      expect((await timeline(`hdr-${dialect}`)).entries).toHaveLength(1);
      expect((await timeline(`meta-${dialect}`)).entries).toHaveLength(1);
      const session = (plain.client.transport as StreamableHTTPClientTransport).sessionId!;
      expect((await timeline(session)).entries.map((e) => e.id)).toEqual([r._receipt.id]);
      await byHeader.client.close();
      await plain.client.close();
    } finally {
      await gw.close();
    }
  });

  it('a coverage report over a job recorded only through the gateway shows every call OBSERVED VIA GATEWAY', async () => {
    const job = `gw-coverage-${dialect}`;
    const plan = await t.http.post('/api/plans').set('Authorization', `Bearer ${t.keys.compliance}`).set('Content-Type', 'application/json')
      .send(JSON.stringify({ job_id: job, title: 'gateway only', expected_actions: [{ action_id: 'say', tool: 'echo' }, { action_id: 'try', tool: 'fail', must_succeed: false }] }));
    expect(plan.status).toBe(201);
    const { gw } = await gateway('stdio', 'http', { job });
    try {
      const { client } = await agent(gw, 'http');
      await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      await client.callTool({ name: 'fail', arguments: {} });
      await client.close();
    } finally {
      await gw.close();
    }
    const rep = await t.http.post('/api/coverage-reports').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send(JSON.stringify({ job_id: job }));
    expect(rep.status).toBe(201);
    const report = (await t.http.get(`/api/coverage-reports/${rep.body.report_id}`)).body.report as { actions: { action_id: string; evidence: { provenance_class: string; outcome: string }[] }[] };
    const evidence = report.actions.flatMap((a) => a.evidence.map((e) => [a.action_id, e.provenance_class, e.outcome]));
    expect(evidence).toEqual([
      ['say', 'OBSERVED VIA GATEWAY', 'success'],
      ['try', 'OBSERVED VIA GATEWAY', 'failure'],
    ]);
  });

  if (dialect !== 'sqlite') return;

  it('commits to the exact bytes of the upstream result (spacing, escapes, number forms), never re-serialized', async () => {
    // A hand-written Streamable HTTP server answering in JSON, with a result no JSON writer would produce.
    const RESULT = '{ "content" : [ {"type":"text", "text":"caf\\u00e9"} ],"n":1.0, "big":12345678901234567890 }';
    const raw = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      if (req.headers.authorization !== 'Bearer tool-secret') return void res.writeHead(401).end(); // --upstream-header reaches it
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const m = JSON.parse(body) as { id?: number; method: string };
        if (m.id === undefined) return void res.writeHead(202).end();
        const result = m.method === 'initialize' ? JSON.stringify({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } }) : RESULT;
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'raw-session' }).end(`{"jsonrpc":"2.0","id":${m.id},"result":${result}}`);
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', () => resolve()));
    const { gw } = await gateway('http', 'http', { job: 'gw-exact', upstream: { url: `http://127.0.0.1:${(raw.address() as { port: number }).port}/mcp`, headers: { Authorization: 'Bearer tool-secret' } } });
    try {
      const { client, saved } = await agent(gw, 'http');
      const r = (await client.callTool({ name: 'anything', arguments: {} })) as unknown as { _receipt: Receipt };
      expect(Buffer.from(r._receipt.canonical_bytes, 'base64').toString('utf8')).toBe(RESULT);
      const file = join(dir, 'exact.json');
      writeFileSync(file, savedResponse(saved, r._receipt.id));
      expect((await cli(['verify', file])).code).toBe(0);
      await client.close();
    } finally {
      await gw.close();
      raw.close();
    }
  });

  it('ledger down: refuses the call with a JSON-RPC error naming the cause, and the tool never runs', async () => {
    const port = await freePort();
    const before = tools.calls.length;
    const { gw } = await gateway('http', 'http', { server: `http://127.0.0.1:${port}`, job: 'never' });
    try {
      const { client } = await agent(gw, 'http');
      await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: LEDGER_UNAVAILABLE, message: expect.stringMatching(/cannot be reached \(ECONNREFUSED\)/) });
      expect(tools.calls.length).toBe(before);
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('a tool server that cannot be reached: the agent is answered with an error, not left waiting', async () => {
    const { gw } = await gateway('http', 'http', { upstream: { url: `http://127.0.0.1:${await freePort()}/mcp` } });
    try {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(gw.url!)))).rejects.toThrow(/aer1 gateway: the tool server cannot be reached/);
    } finally {
      await gw.close();
    }
  });

  it('a key that may not claim OBSERVED VIA GATEWAY: the answer is withheld with the ledger\'s reason, nothing recorded', async () => {
    const plain = (await t.app.get(ApiKeysService).create('not-a-gateway', 'producer', { systems: ['ACME'] })).key;
    const { gw } = await gateway('http', 'http', { key: plain, job: 'gw-no-permission', onLedgerDown: 'queue', spool: join(dir, 'unused.spool') });
    try {
      const { client } = await agent(gw, 'http');
      await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: LEDGER_UNAVAILABLE, message: expect.stringContaining('403 provenance_not_permitted') });
      expect(gw.spool!.size).toBe(0); // a refusal is not an outage: nothing spooled
      await client.close();
    } finally {
      await gw.close();
    }
    expect((await t.http.get('/api/jobs/gw-no-permission/timeline')).status).toBe(404);
  });

  it('--on-ledger-down queue: forwards, spools to a file, and delivers after a restart exactly once', async () => {
    const job = 'gw-queue';
    const spool = join(dir, 'gateway.spool');
    const port = await freePort();
    const down = `http://127.0.0.1:${port}`;
    const first = await gateway('stdio', 'http', { server: down, job, onLedgerDown: 'queue', spool, retryMs: 60_000 });
    const ids: string[] = [];
    try {
      const { client } = await agent(first.gw, 'http');
      for (const text of ['one', 'two']) ids.push(((await client.callTool({ name: 'echo', arguments: { text } })) as unknown as { _receipt: Receipt })._receipt.id);
      ids.push(((await client.callTool({ name: 'fail', arguments: {} })) as unknown as { _receipt: Receipt })._receipt.id);
      expect(first.gw.spool!.size).toBe(3);
      await client.close();
    } finally {
      await first.gw.close();
    }
    // The session ended with its receipts in the spool: the close of its job waits there, after them.
    expect(first.gw.spool!.size).toBe(4);
    const copy = join(dir, 'gateway-copy.spool');
    copyFileSync(spool, copy);

    // The ledger comes up at the address the gateway was given; a restarted gateway delivers the spool.
    const proxy = createServer((c) => {
      const s = connect(Number(new URL(ledgerUrl).port), '127.0.0.1');
      c.pipe(s).pipe(c);
      s.on('error', () => c.destroy());
      c.on('error', () => s.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', () => resolve()));
    try {
      const second = await gateway('stdio', 'http', { server: down, job, onLedgerDown: 'queue', spool, retryMs: 60_000 });
      await second.gw.spool!.flush();
      expect(second.gw.spool!.size).toBe(0);
      await second.gw.close();
      const tl = await timeline(job);
      expect(tl.entries.slice(0, 3).map((e) => e.id)).toEqual(ids);
      expect(tl.entries.map((e) => [e.tool, e.close ?? false])).toEqual([['echo', false], ['echo', false], ['fail', false], ['aer1.job.close', true]]);
      expect(await verdict(job)).toEqual(['valid', []]);
      // A spool delivered before a crash could write `done` is delivered again: nothing is recorded twice (the job is closed already: the close counts as delivered).
      const third = await gateway('stdio', 'http', { server: down, job, onLedgerDown: 'queue', spool: copy, retryMs: 60_000 });
      expect(third.gw.spool!.size).toBe(4);
      await third.gw.spool!.flush();
      expect(third.gw.spool!.size).toBe(0);
      await third.gw.close();
      expect((await timeline(job)).entries.map((e) => e.id)).toEqual(tl.entries.map((e) => e.id));
      for (const id of ids) expect((await t.http.get(`/api/receipts/${id}/verify`)).status).toBe(200);
    } finally {
      proxy.close();
    }
  });
});
