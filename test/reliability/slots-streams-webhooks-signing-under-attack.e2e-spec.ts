/**
 * Attacker review of session 25 (issue 26 changes): the heavy-read limit,
 * the signer's state file, webhook address policy on the new delivery path.
 * Each test is named after the behaviour it pins; the ones that fail today
 * are findings (see the session's attack report), the others show what holds.
 */
import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeavyReads } from '../../src/common/rate-limit';
import { LedgerService } from '../../src/ledger/ledger.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { ApiKeysRepository } from '../../src/auth/api-keys.repository';
import { DatabaseService } from '../../src/database/database.service';
import { EventStreamService } from '../../src/ledger/event-stream.service';
import { WebhookDispatcher } from '../../src/webhooks/webhook.dispatcher';
import { createPgDatabase, DIALECTS, startApp, TestApp } from '../helpers/app';
import { TestReceiver } from '../webhooks/receivers';
import { call, listen, makeEntry, waitUntil } from './helpers';

jest.setTimeout(90_000);

/** Append `n` entries of about `bytes` canonical bytes each to `job` (one request each, under BODY_LIMIT_BYTES). */
async function bigJob(base: string, key: string, job: string, n: number, bytes: number): Promise<void> {
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= n; seq++) {
    const e = makeEntry(job, seq, prev, { nonce: randomBytes(bytes).toString('hex').slice(0, bytes) });
    const r = await call(base, 'POST', `/api/jobs/${job}/entries`, { key, body: JSON.stringify(e) });
    expect([seq, r.status, r.body?.error]).toEqual([seq, 201, undefined]);
    prev = entryDigest(e)!;
  }
}

/** A raw GET whose answer is never read: the socket is paused once the request is sent. */
function stalledGet(base: string, path: string, headers: Record<string, string> = {}): Promise<Socket> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: keep-alive\r\n${extra}\r\n`);
      s.pause();
      resolve(s);
    });
    s.on('error', reject);
  });
}

describe.each(DIALECTS)('%s: a client that stops reading a heavy answer (HEAVY_READ_CONCURRENCY=1)', (dialect) => {
  let t: TestApp;
  let base: string;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    t = await startApp(dialect, { HEAVY_READ_CONCURRENCY: '1', VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await t?.close();
  });

  it("does not hold the heavy-read slot for longer than 15 s: another client's ledger verification is served after it", async () => {
    // ~8 MB of NDJSON: more than the loopback socket buffers hold for a reader that reads nothing.
    await bigJob(base, t.keys.producer, 'job-stall', 20, 400_000);
    const s = await stalledGet(base, '/api/jobs/job-stall/export');
    sockets.push(s);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(t.app.get(HeavyReads).inFlight).toBe(1); // the stalled export holds the slot now
    // Another client, reading normally, keeps asking for 15 s.
    const until = Date.now() + 15_000;
    let last = await call(base, 'GET', '/api/ledger/verify');
    while (last.status === 429 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 1_000));
      last = await call(base, 'GET', '/api/ledger/verify');
    }
    expect({ status: last.status, error: last.body?.error }).toEqual({ status: 200, error: undefined });
  });
});

describe.each(DIALECTS)('%s: an evidence pack waiting for its checkpoint (HEAVY_READ_CONCURRENCY=1, PACK_CHECKPOINT_WAIT_MS=20000)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { HEAVY_READ_CONCURRENCY: '1', PACK_CHECKPOINT_WAIT_MS: '20000', CHECKPOINT_INTERVAL_MS: '3600000', VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('gives its heavy-read slot back within 2 s when the client leaves during the wait', async () => {
    await bigJob(base, t.keys.producer, 'job-wait', 1, 10);
    const ac = new AbortController();
    const waiting = fetch(`${base}/api/jobs/job-wait/evidence`, { headers: { authorization: `Bearer ${t.keys.auditor}` }, signal: ac.signal }).catch(() => null);
    await waitUntil('the pack holds the slot', 5_000, () => t.app.get(HeavyReads).inFlight === 1);
    ac.abort();
    await waiting;
    await waitUntil('the slot is given back', 2_000, () => t.app.get(HeavyReads).inFlight === 0);
    expect((await call(base, 'GET', '/api/ledger/verify')).status).toBe(200);
  });
});

describe.each(DIALECTS)('%s: the webhook address policy on the catch-up delivery path', (dialect) => {
  let dir: string;
  let databaseUrl: string;
  let drop: (() => Promise<void>) | undefined;
  let rx: TestReceiver;
  let t: TestApp | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-attack25-wh-'));
    if (dialect === 'sqlite') databaseUrl = `sqlite:${join(dir, 'ledger.sqlite')}`;
    else ({ url: databaseUrl, drop } = await createPgDatabase());
    rx = new TestReceiver();
    await rx.start();
  });
  afterAll(async () => {
    await t?.app.close();
    await rx.stop();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = (allowPrivate: boolean) => ({ DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: String(allowPrivate), WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '2000' });

  it('refuses loopback spellings at creation, and a subscription stored while private addresses were allowed gets nothing once they are not', async () => {
    t = await startApp(dialect, env(true));
    const owner = await t.app.get(ApiKeysService).create('hooks-key', 'compliance', { owner: 'hooks-co' });
    const subscribe = (app: TestApp, url: string) =>
      app.http.post('/api/webhooks').set('Authorization', `Bearer ${owner.key}`).set('Content-Type', 'application/json').send(JSON.stringify({ url, events: ['ledger.checkpoint.witness_lag'] }));
    const port = new URL(rx.url).port;
    const stored = await subscribe(t, `${rx.url}/stored`);
    expect(stored.status).toBe(201);
    await t.app.close();

    t = await startApp(dialect, env(false));
    for (const url of [`http://localhost:${port}/`, `http://127.1:${port}/`, `http://0x7f000001:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://[::ffff:0:7f00:1]:${port}/`, `http://[64:ff9b::7f00:1]:${port}/`, `http://[::1]:${port}/`, `http://[::127.0.0.1]:${port}/`]) {
      const r = await subscribe(t, url);
      expect({ url, status: r.status, error: r.body.error }).toEqual({ url, status: 422, error: 'webhook_address_refused' });
    }
    const dispatcher = t.app.get(WebhookDispatcher);
    await dispatcher.emit('ledger.checkpoint.witness_lag', { origin: 'ledger.test', witness: 'w', checkpoint_size: 1, cosigned_size: null, lag_seconds: 700, threshold_seconds: 600 }, 'attack25-1');
    await waitUntil('an attempt to the stored subscription', 10_000, () => dispatcher.attempts.some((a) => a.subscription_id === stored.body.id));
    const a = dispatcher.attempts.find((x) => x.subscription_id === stored.body.id)!;
    expect(a.result).toMatchObject({ ok: false, status: null, reason: expect.stringContaining('127.0.0.1') });
    expect(rx.got.filter((g) => g.path === '/stored')).toEqual([]);
  });
});

describe.each(DIALECTS)('%s: evidence packs and the key read budget (KEY_READ_RATE_LIMIT=3)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { KEY_READ_RATE_LIMIT: '3', VERIFY_RATE_LIMIT: '3' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an evidence pack (a heavy keyed read) spends its key read budget: past it, 429 rate_limited', async () => {
    await bigJob(base, t.keys.producer, 'job-packed', 3, 1000);
    await t.app.get(CheckpointSigner).tick();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await call(base, 'GET', '/api/jobs/job-packed/evidence', { key: t.keys.auditor })).status);
    expect(statuses[0]).toBe(200); // a real pack, built from the records and their proofs
    // Each pack is at least as costly as a 1-unit read: a budget of 3 admits at most 3 of them in the window.
    expect(statuses.filter((s) => s !== 429).length).toBeLessThanOrEqual(3);
  });
});

describe.each(DIALECTS)('%s: webhook caps under concurrent creation (WEBHOOK_MAX_PER_KEY=2, WEBHOOK_MAX_PER_OWNER=3)', (dialect) => {
  let t: TestApp;
  let rx: TestReceiver;
  beforeAll(async () => {
    rx = new TestReceiver();
    await rx.start();
    t = await startApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_MAX_PER_KEY: '2', WEBHOOK_MAX_PER_OWNER: '3' });
  });
  afterAll(async () => {
    await t?.close();
    await rx.stop();
  });

  it('twenty creations at once by two keys of one owner take exactly the owner cap, each key at most its own, the rest 409', async () => {
    const keys = t.app.get(ApiKeysService);
    const k1 = await keys.create('cap-1', 'compliance', { owner: 'cap-co' });
    const k2 = await keys.create('cap-2', 'compliance', { owner: 'cap-co' });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http
          .post('/api/webhooks')
          .set('Authorization', `Bearer ${(i % 2 ? k1 : k2).key}`)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ url: `${rx.url}/cap${i}`, events: ['ledger.checkpoint.witness_lag'] })),
      ),
    );
    const created = replies.filter((r) => r.status === 201);
    expect(created).toHaveLength(3);
    expect(replies.filter((r) => r.status === 409).map((r) => r.body.error).sort()).toEqual(expect.arrayContaining(['webhook_limit_owner']));
    expect(replies.every((r) => r.status === 201 || (r.status === 409 && ['webhook_limit_key', 'webhook_limit_owner'].includes(r.body.error)))).toBe(true);
    const perKey = new Map<string, number>();
    for (const r of created) perKey.set(r.body.key_id, (perKey.get(r.body.key_id) ?? 0) + 1);
    expect(Math.max(...perKey.values())).toBeLessThanOrEqual(2);
  });
});

describe.each(DIALECTS)('%s: an event stream whose client stopped reading, its key revoked by another process', (dialect) => {
  let t: TestApp;
  let base: string;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await t?.close();
  });

  it('ends (its stream slot freed) within 5 s of the revocation, though its socket is full', async () => {
    await bigJob(base, t.keys.producer, 'job-sse-stall', 20, 400_000);
    const k = await t.app.get(ApiKeysService).create('sse-stalled', 'auditor');
    const s = await stalledGet(base, '/api/ledger/events/stream?after=0', { authorization: `Bearer ${k.key}`, accept: 'text/event-stream' });
    sockets.push(s);
    const streams = t.app.get(EventStreamService);
    await waitUntil('the stream is open', 5_000, () => streams.open === 1);
    await new Promise((r) => setTimeout(r, 1_000)); // the first page fills the socket
    // What `npm run ledger -- revoke-key` does from its own process: the row only.
    await t.app.get(DatabaseService).write((tx) => t.app.get(ApiKeysRepository).revoke(tx, k.id, new Date().toISOString()));
    const until = Date.now() + 5_000;
    while (streams.open > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    expect(streams.open).toBe(0);
  });
});

describe.each(DIALECTS)('%s: an evidence pack while checkpoint signing is stopped (PACK_CHECKPOINT_WAIT_MS=3000)', (dialect) => {
  let t: TestApp;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-attack25-state-'));
    t = await startApp(dialect, { LEDGER_CHECKPOINT_STATE_FILE: join(dir, 'state.checkpoint'), PACK_CHECKPOINT_WAIT_MS: '3000', HEAVY_READ_CONCURRENCY: '1' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers at once with 503 log_unavailable naming the stopped signer, not a full wait ending in "not yet in a signed checkpoint, retry"', async () => {
    const signer = t.app.get(CheckpointSigner);
    await signer.tick();
    writeFileSync(join(dir, 'state.checkpoint'), '{"format":"aer1-log-signer-state/v1","size":');
    await bigJob(base, t.keys.producer, 'job-never-signed', 1, 10); // an unusable state file does not refuse writes (README)
    await signer.tick();
    const h = (await call(base, 'GET', '/health')).body;
    expect(h.details.log).toMatchObject({ signing: 'stopped', reason_code: 'checkpoint_state_unusable' });
    const started = Date.now();
    const r = await call(base, 'GET', '/api/jobs/job-never-signed/evidence', { key: t.keys.auditor });
    const took = Date.now() - started;
    expect({ status: r.status, error: r.body.error, fast: took < 1_000 }).toEqual({ status: 503, error: 'log_unavailable', fast: true });
  });

  it("an anonymous /health does not show the server's file system paths (where the state file and the signing key live)", async () => {
    // Runs after the test above: signing is stopped by the unusable state file.
    const h = await call(base, 'GET', '/health');
    expect(h.body.details.log.signing).toBe('stopped');
    expect(h.text.includes(dir)).toBe(false);
  });
});

describe.each(DIALECTS)('%s: webhook receivers that redirect or answer huge bodies (WEBHOOK_ALLOW_PRIVATE=true, 127.0.0.1 only)', (dialect) => {
  let t: TestApp;
  let server: Server;
  let url = '';
  const hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      req.resume();
      req.on('end', () => {
        if (req.url === '/redirect') return void res.writeHead(307, { Location: `${url}/target` }).end();
        if (req.url === '/huge') {
          res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
          const chunk = Buffer.alloc(64 * 1024, 120);
          let sent = 0;
          const pump = (): void => {
            while (sent < 512 && res.write(chunk)) sent++;
            if (sent < 512) res.once('drain', pump);
            else res.end();
          };
          return pump();
        }
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_MAX_ATTEMPTS: '1' });
  });
  afterAll(async () => {
    await t?.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a 307 is a failed attempt and its Location is never requested; a 32 MB answer counts by its 200 without being read whole', async () => {
    const k = await t.app.get(ApiKeysService).create('redirect-co-key', 'compliance', { owner: 'redirect-co' });
    const sub = async (path: string) =>
      (await t.http.post('/api/webhooks').set('Authorization', `Bearer ${k.key}`).set('Content-Type', 'application/json').send(JSON.stringify({ url: `${url}${path}`, events: ['ledger.checkpoint.witness_lag'] }))).body as { id: string };
    const redirect = await sub('/redirect');
    const huge = await sub('/huge');
    const dispatcher = t.app.get(WebhookDispatcher);
    await dispatcher.emit('ledger.checkpoint.witness_lag', { origin: 'ledger.test', witness: 'w', checkpoint_size: 2, cosigned_size: null, lag_seconds: 700, threshold_seconds: 600 }, 'attack25-redirect');
    await waitUntil('both attempts', 10_000, () => [redirect.id, huge.id].every((id) => dispatcher.attempts.some((a) => a.subscription_id === id)));
    expect(dispatcher.attempts.find((a) => a.subscription_id === redirect.id)!.result).toMatchObject({ ok: false, status: 307, reason: expect.stringContaining('not followed') });
    expect(dispatcher.attempts.find((a) => a.subscription_id === huge.id)!.result).toEqual({ ok: true, status: 200 });
    await new Promise((r) => setTimeout(r, 300));
    expect(hits.filter((h) => h === '/target')).toEqual([]);
  });
});

describe.each(DIALECTS)('%s: a state file that cannot be written (its folder does not exist)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { LEDGER_CHECKPOINT_STATE_FILE: join(tmpdir(), `aer1-attack25-missing-${process.pid}`, 'state.checkpoint') });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('signs nothing, and /health says so (degraded, with the error), never "active" with a growing unsigned tail', async () => {
    await bigJob(base, t.keys.producer, 'job-unwritable', 2, 10);
    await t.app.get(CheckpointSigner).tick();
    const h = await call(base, 'GET', '/health');
    expect(h.status).toBeLessThan(500);
    expect(h.body.status).toBe('degraded');
    expect(h.body.details.log.checkpoint_size).toBeNull();
    expect(h.body.details.log.last_error?.message ?? h.body.details.log.reason).toEqual(expect.any(String));
  });
});

describe.each(DIALECTS)('%s: whole-timeline reads and the heavy-read limit (HEAVY_READ_CONCURRENCY=1)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { HEAVY_READ_CONCURRENCY: '1' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
  });

  it('re-verifying a whole timeline (JSON and badge: each reads and hashes every entry, as the export reads them) waits its turn like the export: 429 server_busy while the slot is taken', async () => {
    await bigJob(base, t.keys.producer, 'job-heavy', 3, 10);
    const ledger = t.app.get(LedgerService);
    const real = ledger.verifyChain.bind(ledger);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    jest.spyOn(ledger, 'verifyChain').mockImplementationOnce(async (...args) => {
      entered();
      await gate;
      return real(...args);
    });
    const first = call(base, 'GET', '/api/ledger/verify');
    await inside;
    expect((await call(base, 'GET', '/api/jobs/job-heavy/export')).body.error).toBe('server_busy');
    const others: Record<string, number> = {};
    for (const p of ['/api/jobs/job-heavy/verify', '/badge/job/job-heavy.svg']) others[p] = (await call(base, 'GET', p)).status;
    open();
    expect((await first).status).toBe(200);
    expect(others).toEqual({ '/api/jobs/job-heavy/verify': 429, '/badge/job/job-heavy.svg': 429 });
  });
});
