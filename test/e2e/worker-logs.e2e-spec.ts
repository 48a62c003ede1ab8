/**
 * The worker logs JSON lines like the API (pino): one when it is ready, one
 * per chunk (honest answers issue; it used to print Nest's coloured text,
 * nothing when ready, nothing per chunk). Needs `npm run build` (it runs
 * dist/src/worker.js, as `npm run worker` does).
 */
import { Queue } from 'bullmq';
import { ChildProcess, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisOptionsFromUrl, VERIFICATION_QUEUE } from '../../src/verification-queue/queue-options';
import { startApp, TestApp } from '../helpers/app';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WORKER_JS = process.env.VERIFICATION_WORKER_JS ?? join(__dirname, '../../dist/src/worker.js');
const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: unknown }[] };
const validReceipt = corpus.vectors.find((v) => v.id === 'receipt-core-valid')!.input as Record<string, unknown>;

/** The JSON lines written so far (every stdout line must be one). */
function jsonLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function until<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

describe('worker logs (PostgreSQL, Redis, dist/src/worker.js)', () => {
  jest.setTimeout(90_000);
  const prefix = `aer1t_logs_${Date.now()}_${randomBytes(4).toString('hex')}`;
  let t: TestApp;
  let worker: ChildProcess | undefined;
  let out = '';
  let err = '';

  beforeAll(async () => {
    if (!existsSync(WORKER_JS)) throw new Error(`${WORKER_JS} is missing: run npm run build first`);
    t = await startApp('postgres', { REDIS_URL, QUEUE_PREFIX: prefix, VERIFICATION_CHUNK_SIZE: '2' });
  });
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    const q = new Queue(VERIFICATION_QUEUE, { connection: redisOptionsFromUrl(REDIS_URL), prefix });
    await q.obliterate({ force: true }).catch(() => undefined);
    await q.close();
    await t?.close();
  });

  it('logs JSON: ready, then each chunk with batch id, chunk index, count and duration', async () => {
    worker = fork(WORKER_JS, [], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', LOG_LEVEL: 'info', DATABASE_URL: t.databaseUrl, REDIS_URL, QUEUE_PREFIX: prefix, VERIFICATION_CHUNK_SIZE: '2' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    worker.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const ready = await until('the worker to log ready', 30_000, () => jsonLines(out).find((l) => l.msg === 'worker ready'));
    expect(ready).toMatchObject({ level: 30, context: 'VerificationWorker', queue: VERIFICATION_QUEUE, prefix, concurrency: 1, pid: worker.pid, time: expect.any(Number) });

    for (let i = 0; i < 3; i++) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify({ ...validReceipt, id: randomUUID() }));
      expect(r.status).toBe(201);
    }
    const b = await t.http.post('/api/verification-batches').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send('{"scope":"all"}');
    expect(b.status).toBe(202);
    const batchId = b.body.batch_id as string;
    const chunks = await until('two chunk lines', 30_000, () => {
      const c = jsonLines(out).filter((l) => l.msg === 'chunk verified' && l.batch_id === batchId);
      return c.length >= 2 ? c : undefined;
    });
    expect(chunks.map((c) => [c.chunk_index, c.count, c.recorded, c.skipped]).sort()).toEqual([
      [0, 2, 2, 0],
      [1, 1, 1, 0],
    ]);
    for (const c of chunks) {
      expect(c).toMatchObject({ level: 30, context: 'VerificationProcessor', duration_ms: expect.any(Number) });
      expect(c.duration_ms as number).toBeGreaterThanOrEqual(0);
    }
    expect(err).toBe('');
  });
});
