/**
 * Slow webhook receivers (issue 26): an attempt has one overall deadline
 * (a receiver that drips its answer cannot hold it); one owner's slow
 * receivers take at most WEBHOOK_OWNER_CONCURRENCY delivery slots, so another
 * owner's delivery goes out while they hang; close() aborts attempts in
 * flight after WEBHOOK_SHUTDOWN_GRACE_MS, and their events are delivered
 * after a restart with the same webhook-id, the others not again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { postOnce } from '../../src/webhooks/webhook-http';
import { deliveryId, WebhookDispatcher } from '../../src/webhooks/webhook.dispatcher';
import { WitnessLagPayload } from '../../src/webhooks/webhook.events';
import { createPgDatabase, DIALECTS, startApp, TestApp } from '../helpers/app';
import { TestReceiver } from './receivers';

const LAG: WitnessLagPayload = { origin: 'ledger.test/aer1', witness: 'witness-a', checkpoint_size: 7, cosigned_size: null, lag_seconds: 900, threshold_seconds: 600 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('one webhook attempt has an overall deadline', () => {
  let rx: TestReceiver;
  beforeAll(async () => {
    rx = new TestReceiver();
    await rx.start();
  });
  afterAll(() => rx.stop());

  it('a 200 whose body drips ends at the deadline by its status; no answer at all fails at the deadline', async () => {
    rx.mode = 'drip';
    let started = Date.now();
    const dripped = await postOnce(`${rx.url}/drip`, '{}', {}, { allowPrivate: true, timeoutMs: 700 });
    const drippedMs = Date.now() - started;
    expect(dripped).toEqual({ ok: true, status: 200 });
    rx.mode = 'silent';
    started = Date.now();
    const silent = await postOnce(`${rx.url}/silent`, '{}', {}, { allowPrivate: true, timeoutMs: 700 });
    const silentMs = Date.now() - started;
    expect(silent).toEqual({ ok: false, status: null, reason: 'no answer within 700 ms' });
    // Held until the deadline, not for ever (the drip sends a byte a second, which an idle timeout never sees).
    for (const ms of [drippedMs, silentMs]) {
      expect(ms).toBeGreaterThanOrEqual(650);
      expect(ms).toBeLessThan(5000);
    }
    await rx.until(() => rx.open === 0, 3000); // the connections were closed by the sender
    // An abort (shutdown) ends an attempt at once and says so.
    const abort = new AbortController();
    const pending = postOnce(`${rx.url}/silent`, '{}', {}, { allowPrivate: true, timeoutMs: 60_000, signal: abort.signal });
    await rx.until(() => rx.open === 1, 3000);
    abort.abort();
    expect(await pending).toEqual({ ok: false, status: null, reason: 'aborted at shutdown', aborted: true });
  });
});

describe.each(DIALECTS)('slow webhook receivers on %s', (dialect) => {
  jest.setTimeout(60_000);
  let dir: string;
  let databaseUrl: string;
  let drop: (() => Promise<void>) | undefined;
  let rx: TestReceiver;
  let t: TestApp | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-wh-'));
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

  const env = () => ({
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_TIMEOUT_MS: '60000',
    WEBHOOK_CONCURRENCY: '4',
    WEBHOOK_OWNER_CONCURRENCY: '2',
    WEBHOOK_SHUTDOWN_GRACE_MS: '300',
    WEBHOOK_POLL_MS: '100',
  });

  it("one owner's dripping receivers do not hold another owner's delivery nor close(); their events come after restart with the same ids", async () => {
    t = await startApp(dialect, env());
    const keys = t.app.get(ApiKeysService);
    const slow = await keys.create('slow-co-key', 'compliance', { owner: 'slow-co' });
    const fast = await keys.create('fast-co-key', 'compliance', { owner: 'fast-co' });
    const subscribe = async (key: string, path: string) =>
      (await t!.http.post('/api/webhooks').set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify({ url: `${rx.url}${path}`, events: ['ledger.checkpoint.witness_lag'] }))).body as { id: string; secret: string };
    const slowSubs: { id: string; secret: string }[] = [];
    for (let i = 0; i < 4; i++) slowSubs.push(await subscribe(slow.key, `/slow${i}`));
    const fastSub = await subscribe(fast.key, '/fast');
    const slowPaths = slowSubs.map((_, i) => `/slow${i}`);

    // Every slow path drips; /fast answers at once.
    const isSlow = (p: string) => p.startsWith('/slow');
    rx.mode = (p) => (isSlow(p) ? 'drip' : 'fast');
    const dispatcher = t.app.get(WebhookDispatcher);
    const pos = (await dispatcher.emit('ledger.checkpoint.witness_lag', LAG, 'slow-1'))!;
    await rx.until(() => rx.at('/fast').length >= 1, 10_000);
    // While slow-co's attempts hang, fast-co's went out: slow-co holds exactly WEBHOOK_OWNER_CONCURRENCY (2) of the 4 slots.
    await sleep(500);
    expect(rx.got.filter((g) => isSlow(g.path))).toHaveLength(2);
    expect(dispatcher.attempts.filter((a) => slowSubs.some((s) => s.id === a.subscription_id))).toEqual([]);
    expect(rx.at('/fast')[0].headers['webhook-id']).toBe(deliveryId(fastSub.id, pos));
    const before = new Map(rx.got.filter((g) => isSlow(g.path)).map((g) => [g.path, g.headers['webhook-id']]));

    // close() waits WEBHOOK_SHUTDOWN_GRACE_MS (300 ms), then aborts the two hanging attempts (their deadline is 60 s).
    const closing = Date.now();
    await t.app.close();
    t = undefined;
    const closeMs = Date.now() - closing;
    expect(closeMs).toBeLessThan(10_000);
    await rx.until(() => rx.open === 0, 5000);

    // Restart on the same database with every receiver answering: each slow subscription gets the event, once, the same id as before.
    rx.mode = 'fast';
    const seen = rx.got.length;
    t = await startApp(dialect, env());
    await rx.until(() => slowPaths.every((p) => rx.got.slice(seen).some((g) => g.path === p)), 20_000);
    await sleep(500);
    const after = rx.got.slice(seen);
    expect(after.map((g) => g.path).sort()).toEqual([...slowPaths].sort());
    for (const [i, s] of slowSubs.entries()) {
      const g = after.find((x) => x.path === `/slow${i}`)!;
      expect(g.headers['webhook-id']).toBe(deliveryId(s.id, pos));
      if (before.has(g.path)) expect(g.headers['webhook-id']).toBe(before.get(g.path));
      expect(new Webhook(s.secret).verify(g.body, g.headers as Record<string, string>)).toMatchObject({ type: 'ledger.checkpoint.witness_lag', data: LAG });
    }
    expect(before.size).toBe(2);
  });
});

describe('two API processes on one PostgreSQL database', () => {
  jest.setTimeout(60_000);
  let a: TestApp;
  let b: TestApp;
  let rx: TestReceiver;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createPgDatabase();
    drop = db.drop;
    const env = { DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' };
    a = await startApp('postgres', env);
    b = await startApp('postgres', env);
    rx = new TestReceiver();
    await rx.start();
  });
  afterAll(async () => {
    await a.app.close();
    await b.app.close();
    await rx.stop();
    await drop();
  });

  it('send each event to each subscription once between them (a subscription is leased by one process at a time)', async () => {
    const subs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await a.http.post('/api/webhooks').set('Authorization', `Bearer ${a.keys.compliance}`).set('Content-Type', 'application/json').send(JSON.stringify({ url: `${rx.url}/s${i}`, events: ['ledger.checkpoint.witness_lag'] }));
      expect(r.status).toBe(201);
      subs.push(r.body.id as string);
    }
    const positions: number[] = [];
    for (let i = 0; i < 6; i++) positions.push((await (i % 2 ? b : a).app.get(WebhookDispatcher).emit('ledger.checkpoint.witness_lag', { ...LAG, checkpoint_size: 10 + i }, `two-${i}`))!);
    await rx.until(() => rx.got.length >= 18, 20_000);
    await sleep(1000);
    const expected = subs.flatMap((s) => positions.map((p) => deliveryId(s, p)));
    expect(rx.got.map((g) => g.headers['webhook-id']).sort()).toEqual([...expected].sort());
    // Per subscription, in feed order.
    for (const [i, s] of subs.entries()) expect(rx.at(`/s${i}`).map((g) => g.headers['webhook-id'])).toEqual(positions.map((p) => deliveryId(s, p)));
    // One attempt per delivery between the two processes (no second send of a leased subscription).
    const sent = [a, b].map((t) => t.app.get(WebhookDispatcher).attempts.length);
    expect(sent[0] + sent[1]).toBe(18);
  });
});
