/**
 * Queue faults: a private redis-server (never the shared one on 6379) is
 * killed with SIGKILL in the middle of a verification batch and started again
 * on the same port. With AOF persistence (appendfsync always) the batch
 * completes after Redis returns, every result recorded exactly once. While
 * Redis is down, submitting answers 503 and records nothing.
 */
import { BullExplorer } from '@nestjs/bullmq/dist/bull.explorer';
import { Queue } from 'bullmq';
import { ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseService } from '../../src/database/database.service';
import { redisOptionsFromUrl, VERIFICATION_QUEUE } from '../../src/verification-queue/queue-options';
import { VERIFICATION_WORKER_HOST } from '../../src/verification-queue/verification.worker-host';
import { createWorker } from '../../src/worker';
import { startApp, TestApp } from '../helpers/app';
import { call, freePort, freshReceipt, listen, requireBuild, uniqueName, waitUntil, withTimeout, WORKER_JS } from './helpers';

const N = 3000;
const CHUNK = 100;

/** A private redis-server on `port`, persisting to `dir` with AOF (fsync on every write). */
class PrivateRedis {
  private child: ChildProcess | null = null;
  log = '';
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir, '--daemonize', 'no', '--maxmemory-policy', 'noeviction', '--protected-mode', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-20_000)));
    child.stderr?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-20_000)));
    await waitUntil(`redis-server on ${this.port} (log: ${this.log.slice(-500)})`, 15_000, async () => (child.exitCode === null ? this.ping() : Promise.reject(new Error(`redis-server exited: ${this.log}`))), 100);
  }

  /** PING over a raw socket: true on +PONG (a loading Redis answers -LOADING). */
  ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const s = connect(this.port, '127.0.0.1');
      const done = (ok: boolean): void => (s.destroy(), resolve(ok));
      s.setTimeout(1000, () => done(false));
      s.once('error', () => done(false));
      s.once('data', (d: Buffer) => done(d.toString().startsWith('+PONG')));
      s.once('connect', () => s.write('PING\r\n'));
    });
  }

  async kill(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGKILL');
    await withTimeout(exited, 10_000, 'redis-server to die');
  }
}

/** Signal a child process and wait (bounded) for its exit; resolves to how it ended, or null when it did not. */
async function stopProcess(c: ChildProcess | undefined, signal: NodeJS.Signals, timeoutMs = 10_000): Promise<string | null> {
  if (!c) return 'none';
  if (c.exitCode !== null || c.signalCode !== null) return String(c.exitCode ?? c.signalCode);
  const exited = new Promise<string>((resolve) => c.once('exit', (code, sig) => resolve(String(code ?? sig))));
  c.kill(signal);
  const how = await withTimeout(exited, timeoutMs, 'exit').catch(() => null);
  if (how === null) {
    c.kill('SIGKILL');
    await withTimeout(exited, 5000, 'exit after SIGKILL').catch(() => undefined);
  }
  return how;
}

/** The compiled worker (npm run worker) as its own process, resolved once it is ready. */
async function startWorker(env: Record<string, string>, log: (s: string) => void): Promise<ChildProcess> {
  const child = fork(WORKER_JS, [], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  child.stdout?.on('data', (d: Buffer) => log(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log(d.toString()));
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    }),
    30_000,
    'the worker to start',
  );
  return child;
}

describe('queue faults: Redis killed and restarted in the middle of a batch (PostgreSQL, BullMQ worker)', () => {
  jest.setTimeout(180_000);
  let dir: string;
  let redis: PrivateRedis;
  let t: TestApp;
  let base: string;
  let worker: ChildProcess | undefined;
  let workerLog = '';
  let queue: Queue | undefined;
  const prefix = uniqueName('aer1rel');

  beforeAll(async () => {
    requireBuild(WORKER_JS);
    dir = mkdtempSync(join(tmpdir(), 'aer1-redis-'));
    redis = new PrivateRedis(await freePort(), dir);
    await redis.start();
    t = await startApp('postgres', { REDIS_URL: redis.url, QUEUE_PREFIX: prefix, VERIFICATION_CHUNK_SIZE: String(CHUNK), BODY_LIMIT_BYTES: String(8 * 1024 * 1024) });
    base = await listen(t.app);
    for (let i = 0; i < N; i += 1000) {
      const r = await call(base, 'POST', '/api/receipts/batch', { key: t.keys.producer, body: Array.from({ length: 1000 }, () => freshReceipt().text).join('\n'), contentType: 'application/x-ndjson' });
      expect(r.status).toBe(200);
      expect(r.body.accepted).toBe(1000);
    }
  });
  afterAll(async () => {
    const steps: [string, () => Promise<unknown>][] = [
      ['worker', () => stopProcess(worker, 'SIGKILL')],
      ['queue', async () => queue?.close()],
      ['api', async () => t?.close()],
      ['redis', async () => redis?.kill()],
    ];
    for (const [, step] of steps) await withTimeout(step(), 20_000, 'cleanup').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const db = (): DatabaseService => t.app.get(DatabaseService);
  const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await db().query<{ n: number | string }>(sql, params))[0].n);
  const status = async (id: string): Promise<{ status: string; total: number; done: number; invalid: number }> => (await call(base, 'GET', `/api/verification-batches/${id}?limit=1`)).body;

  it('completes the batch after Redis returns, with every result recorded exactly once', async () => {
    worker = await startWorker(
      { DATABASE_URL: t.databaseUrl, REDIS_URL: redis.url, QUEUE_PREFIX: prefix, WORKER_CHUNK_DELAY_MS: '250', WORKER_LOCK_DURATION_MS: '3000', WORKER_STALLED_INTERVAL_MS: '1000' },
      (x) => (workerLog = (workerLog + x).slice(-20_000)),
    );
    const submitted = await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: JSON.stringify({ scope: 'all' }) });
    expect(submitted.status).toBe(202);
    expect(submitted.body.total).toBe(N);
    const id = submitted.body.batch_id as string;

    // Mid-batch: some chunks recorded, most not.
    await waitUntil('a few chunks recorded', 60_000, async () => (await status(id)).done >= 3 * CHUNK);
    await redis.kill();
    const atKill = (await status(id)).done;
    expect(atKill).toBeLessThan(N);

    // While Redis is down: a new batch is refused with 503 and nothing is recorded.
    const head = (await call(base, 'GET', '/api/ledger/head')).body;
    const refused = await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: JSON.stringify({ scope: 'all' }) });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('queue_unavailable');
    expect((await call(base, 'GET', '/api/ledger/head')).body).toEqual(head);
    await sleep(3000);
    const whileDown = (await status(id)).done;
    // Only the chunk the worker held when Redis died may still be recorded (its database write needs no Redis).
    // (Before the one-Worker fix, a worker process ran two BullMQ Workers and two chunks were in hand.)
    expect(whileDown - atKill).toBeLessThanOrEqual(CHUNK);

    await redis.start();
    const restartedAt = Date.now();
    await waitUntil('the batch to complete after Redis returned', 120_000, async () => (await status(id)).status === 'completed', 250).catch(async (e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(await status(id))}; worker exit ${worker?.exitCode ?? worker?.signalCode}; worker log: ${workerLog.slice(-3000)}`);
    });
    const s = await status(id);
    expect(s).toMatchObject({ status: 'completed', total: N, done: N, invalid: 0 });
    // Exactly once: one result row per target, and the results in the ledger sum to the total.
    expect(await count('SELECT COUNT(*) AS n FROM verification_results WHERE batch_id = ?', [id])).toBe(N);
    expect(await count('SELECT COUNT(DISTINCT target_id) AS n FROM verification_results WHERE batch_id = ?', [id])).toBe(N);
    const events = await db().query<{ data: string }>("SELECT data FROM events WHERE stream_id = ? AND type = 'VerificationResultsRecorded'", [`batch:${id}`]);
    const ledgered = events.flatMap((e) => (JSON.parse(e.data) as { results: { id: string }[] }).results.map((r) => r.id));
    expect(ledgered.length).toBe(N);
    expect(new Set(ledgered).size).toBe(N);
    expect((await call(base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);

    // The queue itself: every chunk job completed, none failed.
    queue = new Queue(VERIFICATION_QUEUE, { connection: redisOptionsFromUrl(redis.url), prefix });
    const counts = await queue.getJobCounts('completed', 'failed', 'active', 'waiting', 'delayed');
    expect(counts).toMatchObject({ failed: 0, active: 0, waiting: 0, delayed: 0 });
    expect(counts.completed).toBe(N / CHUNK);

    // And the API submits again once Redis is back.
    const again = await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: JSON.stringify({ targets: [{ kind: 'receipt', id: freshReceipt().id }] }) });
    expect(again.status).toBe(202);
    process.stdout.write(`queue faults: Redis killed at ${atKill}/${N} results (${whileDown} while down); completed ${Date.now() - restartedAt} ms after restart\n`);
  });
});

describe('queue faults: shutting down while Redis is down', () => {
  jest.setTimeout(90_000);
  let dir: string;
  let redis: PrivateRedis;
  let worker: ChildProcess | undefined;
  beforeAll(async () => {
    requireBuild(WORKER_JS);
    dir = mkdtempSync(join(tmpdir(), 'aer1-redis-down-'));
    redis = new PrivateRedis(await freePort(), dir);
    await redis.start();
  });
  afterAll(async () => {
    await stopProcess(worker, 'SIGKILL').catch(() => undefined);
    await redis?.kill().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('one worker process runs exactly one BullMQ Worker (was: two; the alias of the host was found as a second processor)', async () => {
    const t = await startApp('sqlite');
    const ctx = await createWorker({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:', REDIS_URL: redis.url, QUEUE_PREFIX: uniqueName('aer1one'), WORKER_CONCURRENCY: '3' });
    try {
      const workers = (ctx.get(BullExplorer, { strict: false }) as unknown as { workers: { opts: { concurrency?: number } }[] }).workers;
      expect(workers).toHaveLength(1);
      expect(workers[0].opts.concurrency).toBe(3);
      expect(ctx.get<{ worker: unknown }>(VERIFICATION_WORKER_HOST).worker).toBe(workers[0]);
    } finally {
      await withTimeout(ctx.close(), 15_000, 'worker close');
      await t.close();
    }
  });

  it('the API closes cleanly and the worker exits on SIGTERM after Redis went away', async () => {
    const prefix = uniqueName('aer1down');
    const t = await startApp('postgres', { REDIS_URL: redis.url, QUEUE_PREFIX: prefix });
    let closed = false;
    try {
      const base = await listen(t.app);
      expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text })).status).toBe(201);
      // The producer connection is up and used; the worker has done its job and waits on the queue.
      const batch = await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: '{"scope":"all"}' });
      expect(batch.status).toBe(202);
      let log = '';
      worker = await startWorker({ DATABASE_URL: t.databaseUrl, REDIS_URL: redis.url, QUEUE_PREFIX: prefix }, (x) => (log = (log + x).slice(-5000)));
      await waitUntil('the batch to complete', 30_000, async () => (await call(base, 'GET', `/api/verification-batches/${batch.body.batch_id}`)).body.status === 'completed');
      await sleep(500);
      await redis.kill();
      await sleep(1000);
      // Shutdown must not depend on Redis: the worker process ends on SIGTERM, and the API's close() resolves.
      const how = await stopProcess(worker, 'SIGTERM', 10_000);
      expect({ how, log: how === null ? log : '' }).toEqual({ how: 'SIGTERM', log: '' });
      await withTimeout(t.close(), 15_000, 'API close with Redis down');
      closed = true;
    } finally {
      if (!closed) await withTimeout(t.close(), 15_000, 'API close').catch(() => undefined);
    }
  });
});
