/**
 * Figure `gateway` (issue 31): the latency `aer1 gateway` adds to one MCP
 * `tools/call`, p50 and p99, against a direct call to the same tool server
 * in the same run. The tool server (the SDK's, test/fixtures) serves
 * Streamable HTTP in this process; the gateway runs in this process too
 * (Streamable HTTP on both sides, the default refuse mode: every call is
 * recorded before it is answered); the ledger is the application as `npm
 * start` runs it, on SQLite, in a child process. Calls are sequential, one
 * client each way, alternating in rounds so both see the same machine.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { startGateway } from '../src/cli/gateway/gateway';
import { appEnv, startApp } from './lib/app';
import { createDb } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt, now } from './lib/measure';

const execFileP = promisify(execFile);

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

async function toolServer(root: string): Promise<{ url: string; close(): Promise<void> }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildServer } = require(join(root, 'test', 'gateway', 'mcp-tool-server.js')) as { buildServer: () => { connect(t: Transport): Promise<void> } };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server: Server = createServer((req, res) => {
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (known) return void known.handleRequest(req, res);
    const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, t) });
    void buildServer().connect(t).then(() => t.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function benchGateway(ctx: BenchContext): Promise<FigureResult[]> {
  const calls = ctx.quick ? 200 : 1000;
  const rounds = 10;
  const db = await createDb('sqlite', ctx.tmp, ctx.pgAdminUrl);
  const { stdout } = await execFileP(process.execPath, [join(ctx.root, 'dist', 'src', 'ledger-cli.js'), 'create-key', '--role', 'producer', '--name', 'bench-gateway', '--gateway'], { cwd: ctx.root, env: appEnv(db) });
  const key = (JSON.parse(stdout.trim().split('\n').pop()!) as { key: string }).key;
  const app = await startApp(ctx.root, db);
  const tools = await toolServer(ctx.root);
  const gw = await startGateway({ server: app.base, key, upstream: { url: tools.url }, listen: '127.0.0.1:0', job: 'bench-gateway', onLedgerDown: 'refuse', warn: (l) => ctx.log(l) });
  const direct = new Client({ name: 'bench-direct', version: '1' });
  const through = new Client({ name: 'bench-gateway', version: '1' });
  try {
    await direct.connect(new StreamableHTTPClientTransport(new URL(tools.url)));
    await through.connect(new StreamableHTTPClientTransport(new URL(gw.url!)));
    const call = async (c: Client, i: number): Promise<number> => {
      const t0 = now();
      const r = await c.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
      const ms = (now() - t0) * 1000;
      if (c === through && !('_receipt' in r)) throw new Error('a call through the gateway came back without a receipt');
      return ms;
    };
    // Warm-up (not counted): JIT, connections, the job's head.
    for (let i = 0; i < 20; i++) {
      await call(direct, i);
      await call(through, i);
    }
    const d: number[] = [];
    const g: number[] = [];
    const per = Math.ceil(calls / rounds);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < per; i++) d.push(await call(direct, i));
      for (let i = 0; i < per; i++) g.push(await call(through, i));
    }
    const dp50 = quantile(d, 0.5);
    const dp99 = quantile(d, 0.99);
    const gp50 = quantile(g, 0.5);
    const gp99 = quantile(g, 0.99);
    const note = `${g.length} sequential tools/call each way, alternating in ${rounds} rounds; through the gateway each call is also recorded (POST /api/receipts and POST /api/jobs/{id}/entries, at once, on SQLite) before it is answered, which is most of what it adds. Gateway and tool server in the bench process, the ledger in a child process.`;
    const details = { 'direct p50 ms': dp50.toFixed(2), 'direct p99 ms': dp99.toFixed(2), 'through the gateway p50 ms': gp50.toFixed(2), 'through the gateway p99 ms': gp99.toFixed(2), calls: fmt(g.length) };
    return [
      { figure: 'gateway: added latency per tools/call, p50', value: gp50 - dp50, unit: 'ms', reference: { what: 'direct call p50, same run', value: dp50, unit: 'ms' }, ratio: null, target: 'reported (issue 31)', met: null, note, details },
      { figure: 'gateway: added latency per tools/call, p99', value: gp99 - dp99, unit: 'ms', reference: { what: 'direct call p99, same run', value: dp99, unit: 'ms' }, ratio: null, target: 'reported (issue 31)', met: null, note: 'As p50; the 99th percentile of each side.' },
    ];
  } finally {
    await Promise.allSettled([direct.close(), through.close()]);
    await gw.close();
    await tools.close();
    await app.stop();
    await db.drop();
  }
}
