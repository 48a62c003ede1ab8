import { INestApplicationContext } from '@nestjs/common';
import { Queue } from 'bullmq';
import { ChildProcess, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseService } from '../../src/database/database.service';
import { redisOptionsFromUrl, VERIFICATION_QUEUE } from '../../src/verification-queue/queue-options';
import { VERIFICATION_WORKER_HOST, VerificationWorkerHost } from '../../src/verification-queue/verification.worker-host';
import { createWorker } from '../../src/worker';
import { createPgDatabase, DIALECTS, startApp, TestApp } from '../helpers/app';

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: unknown }[] };
const validReceipt = corpus.vectors.find((v) => v.id === 'receipt-core-valid')!.input as Record<string, unknown>;
/** The valid corpus receipt under a new id: canonical bytes and output hash stay valid. */
const receiptText = (): string => JSON.stringify({ ...validReceipt, id: randomUUID() });

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Compiled worker for the kill test (CI builds dist before testing); without it the test force-closes an in-process worker instead. */
const WORKER_JS = process.env.VERIFICATION_WORKER_JS ?? join(__dirname, '../../dist/src/worker.js');

interface BatchStatus {
  batch_id: string;
  status: string;
  total: number;
  done: number;
  invalid: number;
  results: { kind: string; id: string; verdict: string; reasons: string[] }[];
  completed_at: string | null;
}

async function submit(t: TestApp, body: unknown, key = t.keys.auditor) {
  return t.http.post('/api/verification-batches').set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
}

async function status(t: TestApp, id: string, query = ''): Promise<BatchStatus> {
  const r = await t.http.get(`/api/verification-batches/${id}${query}`);
  expect(r.status).toBe(200);
  return r.body as BatchStatus;
}

/** Poll until the batch completes; bounded. */
async function waitCompleted(t: TestApp, id: string, timeoutMs: number, query = '?limit=1'): Promise<BatchStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const s = await status(t, id, query);
    if (s.status === 'completed') return s;
    if (Date.now() > end) throw new Error(`batch ${id} not completed within ${timeoutMs} ms: ${JSON.stringify({ ...s, results: undefined })}`);
    await sleep(150);
  }
}

async function waitUntil(what: string, timeoutMs: number, fn: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

const count = async (t: TestApp, sql: string, params: unknown[] = []): Promise<number> => Number((await t.app.get(DatabaseService).query<{ n: number | string }>(sql, params))[0].n);

describe('verification batches, in process (no REDIS_URL, SQLite)', () => {
  let t: TestApp;
  const ids: string[] = [];
  beforeAll(async () => {
    t = await startApp('sqlite');
    for (let i = 0; i < 50; i++) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(receiptText());
      expect(r.status).toBe(201);
      ids.push(r.body.id as string);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('verifies everything recorded, then finds exactly the one tampered receipt', async () => {
    const r = await submit(t, { scope: 'all' });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ batch_id: expect.any(String), total: 50, status_url: `https://ledger.test/api/verification-batches/${r.body.batch_id}` });
    const s = await waitCompleted(t, r.body.batch_id, 20_000, '');
    expect(s).toMatchObject({ status: 'completed', total: 50, done: 50, invalid: 0 });
    expect(s.results).toHaveLength(50);
    expect(s.results.map((x) => x.id)).toEqual(ids);
    expect(s.results.every((x) => x.verdict === 'valid' && x.kind === 'receipt')).toBe(true);
    expect(s.completed_at).toEqual(expect.any(String));
    const page = await status(t, r.body.batch_id, '?offset=45&limit=10');
    expect(page.results.map((x) => x.id)).toEqual(ids.slice(45));

    // Tamper with one stored receipt's bytes (the projection table is not trigger-protected).
    const victim = ids[17];
    const row = (await t.app.get(DatabaseService).query<{ raw: string }>('SELECT raw FROM receipts WHERE id = ?', [victim]))[0];
    const tampered = JSON.stringify({ ...JSON.parse(row.raw), canonical_bytes: Buffer.from('{"price":"1.00","symbol":"BTC"}').toString('base64') });
    await t.app.get(DatabaseService).write((tx) => tx.query('UPDATE receipts SET raw = ? WHERE id = ?', [tampered, victim]));
    const again = await submit(t, { scope: 'all' });
    expect(again.status).toBe(202);
    const s2 = await waitCompleted(t, again.body.batch_id, 20_000, '?limit=1000');
    expect(s2).toMatchObject({ total: 50, done: 50, invalid: 1 });
    expect(s2.results.filter((x) => x.verdict !== 'valid')).toEqual([expect.objectContaining({ kind: 'receipt', id: victim, verdict: 'invalid', reasons: ['output_hash_mismatch'] })]);
    // The first batch's results are unchanged.
    expect((await status(t, r.body.batch_id)).invalid).toBe(0);
  });

  it('takes explicit targets (deduplicated; unknown ones are invalid results) and since_position scopes', async () => {
    const r = await submit(t, { targets: [{ kind: 'receipt', id: ids[0].toUpperCase() }, { kind: 'receipt', id: ids[0] }, { kind: 'job', id: 'no-such-job' }, { kind: 'workflow', id: randomUUID() }] });
    expect(r.status).toBe(202);
    expect(r.body.total).toBe(3);
    const s = await waitCompleted(t, r.body.batch_id, 20_000, '');
    expect(s).toMatchObject({ total: 3, done: 3, invalid: 2 });
    expect(s.results.map((x) => [x.kind, x.verdict, x.reasons])).toEqual([
      ['receipt', 'valid', []],
      ['job', 'invalid', ['not_found']],
      ['workflow', 'invalid', ['not_found']],
    ]);
    const pos = Number((await t.app.get(DatabaseService).query<{ position: number }>('SELECT position FROM receipts WHERE id = ?', [ids[39]]))[0].position);
    const since = await submit(t, { scope: { since_position: pos } });
    expect(since.body.total).toBe(10);
    expect((await waitCompleted(t, since.body.batch_id, 20_000)).done).toBe(10);
  });

  it('checks the request, the role and the batch id', async () => {
    expect((await submit(t, { scope: 'some' })).body.error).toBe('invalid_scope');
    expect((await submit(t, { targets: [{ kind: 'plan', id: 'x' }] })).body.error).toBe('invalid_targets');
    expect((await submit(t, { scope: 'all', targets: [] })).status).toBe(400);
    expect((await submit(t, { scope: 'all' }, t.keys.producer)).status).toBe(403);
    expect((await t.http.get(`/api/verification-batches/${randomUUID()}`)).status).toBe(404);
    expect((await t.http.get(`/api/verification-batches/${randomUUID()}?limit=5000`)).status).toBe(400);
  });
});

describe.each(DIALECTS)('verification batch counts per outcome (%s, in process)', (dialect) => {
  let t: TestApp;
  const example = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');
  const workflowId = (JSON.parse(example('workflow-draft-example.json')) as { workflow_id: string }).workflow_id;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts valid, invalid, historical, incomplete and not found apart (was: only `invalid`, so historical and incomplete read as verified)', async () => {
    const send = (method: 'post' | 'put', path: string, body: string) => t.http[method](path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(body);
    const good = await send('post', '/api/receipts', receiptText());
    const bad = await send('post', '/api/receipts', receiptText());
    expect((await send('put', '/api/jobs/job-old/timeline', example('timeline-historical-06.json'))).status).toBe(201);
    expect((await send('post', '/api/workflows', example('workflow-draft-example.json'))).status).toBe(201);
    const row = (await t.app.get(DatabaseService).query<{ raw: string }>('SELECT raw FROM receipts WHERE id = ?', [bad.body.id]))[0];
    const tampered = JSON.stringify({ ...JSON.parse(row.raw), canonical_bytes: Buffer.from('tampered').toString('base64') });
    await t.app.get(DatabaseService).write((tx) => tx.query('UPDATE receipts SET raw = ? WHERE id = ?', [tampered, bad.body.id]));
    const targets = [
      { kind: 'receipt', id: good.body.id },
      { kind: 'receipt', id: bad.body.id },
      { kind: 'job', id: 'job-old' },
      { kind: 'workflow', id: workflowId },
      { kind: 'job', id: 'job-nobody' },
      { kind: 'receipt', id: randomUUID() },
    ];
    const r = await submit(t, { targets });
    expect(r.status).toBe(202);
    const s = (await waitCompleted(t, r.body.batch_id, 20_000, '')) as BatchStatus & { counts: unknown };
    // `invalid` keeps its meaning (verdict invalid, not-found targets included); `counts` adds up to `done`.
    expect(s).toMatchObject({ total: 6, done: 6, invalid: 3 });
    expect(s.counts).toEqual({ valid: 1, invalid: 1, historical: 1, incomplete: 1, not_found: 2 });
    expect(s.results.map((x) => [x.kind, x.verdict, x.reasons])).toEqual([
      ['receipt', 'valid', []],
      ['receipt', 'invalid', ['output_hash_mismatch']],
      ['job', 'historical', ['historical_06_construction']],
      ['workflow', 'incomplete', ['step_receipts_unavailable']],
      ['job', 'invalid', ['not_found']],
      ['receipt', 'invalid', ['not_found']],
    ]);
    // Counts are of the whole batch, not of the page.
    expect(((await status(t, r.body.batch_id, '?offset=5&limit=1')) as BatchStatus & { counts: unknown }).counts).toEqual(s.counts);
  });
});

describe('verification batches with Redis and workers (PostgreSQL)', () => {
  jest.setTimeout(180_000);
  const prefix = `aer1t_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const workerEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    WORKER_LOCK_DURATION_MS: '3000',
    WORKER_STALLED_INTERVAL_MS: '1000',
  };
  let t: TestApp;
  let queue: Queue;
  const contexts: INestApplicationContext[] = [];
  const children: ChildProcess[] = [];
  const N = 10_000;

  beforeAll(async () => {
    t = await startApp('postgres', { REDIS_URL, QUEUE_PREFIX: prefix, BODY_LIMIT_BYTES: String(8 * 1024 * 1024) });
    queue = new Queue(VERIFICATION_QUEUE, { connection: redisOptionsFromUrl(REDIS_URL), prefix });
    for (let i = 0; i < N; i += 1000) {
      const lines = Array.from({ length: 1000 }, receiptText).join('\n');
      const r = await t.http.post('/api/receipts/batch').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/x-ndjson').send(lines);
      expect(r.status).toBe(200);
      expect({ accepted: r.body.accepted, firstRejection: (r.body.results as { status: number }[]).find((x) => x.status >= 400) }).toEqual({ accepted: 1000, firstRejection: undefined });
    }
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const c of contexts) await c.close().catch(() => undefined);
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await t?.close();
  });

  const resultRows = (batchId: string) => count(t, 'SELECT COUNT(*) AS n FROM verification_results WHERE batch_id = ?', [batchId]);
  /** Results recorded in the ledger for a batch, summed over its events: equals the total only if none was recorded twice. */
  const ledgeredResults = async (batchId: string): Promise<number> => {
    const rows = await t.app.get(DatabaseService).query<{ data: string }>("SELECT data FROM events WHERE stream_id = ? AND type = 'VerificationResultsRecorded'", [`batch:${batchId}`]);
    return rows.reduce((n, r) => n + (JSON.parse(r.data) as { results: unknown[] }).results.length, 0);
  };

  it('queues without processing in the API, and two workers verify 10,000 receipts exactly once', async () => {
    const started = Date.now();
    const r = await submit(t, { scope: 'all' });
    expect(r.status).toBe(202);
    expect(r.body.total).toBe(N);
    expect(await queue.getJobCounts('waiting', 'active')).toMatchObject({ waiting: N / 500, active: 0 });
    expect(await queue.getJob(`${r.body.batch_id}_0`)).toBeDefined();
    await sleep(500);
    expect((await status(t, r.body.batch_id)).status).toBe('queued'); // RUN_WORKER_IN_API is not set
    contexts.push(await createWorker({ ...workerEnv, DATABASE_URL: t.databaseUrl }), await createWorker({ ...workerEnv, DATABASE_URL: t.databaseUrl }));
    const s = await waitCompleted(t, r.body.batch_id, 120_000);
    expect(s).toMatchObject({ status: 'completed', total: N, done: N, invalid: 0 });
    expect(await resultRows(r.body.batch_id)).toBe(N);
    expect(await ledgeredResults(r.body.batch_id)).toBe(N);
    expect(await count(t, "SELECT COUNT(*) AS n FROM verification_results WHERE batch_id = ? AND verdict = 'valid'", [r.body.batch_id])).toBe(N);
    for (const c of contexts.splice(0)) await c.close();
    process.stdout.write(`verification-queue: 10,000 receipts verified by 2 workers in ${Date.now() - started} ms\n`);
  });

  it('completes a batch when one of two workers is killed mid-chunk, recording no result twice', async () => {
    const slowEnv = { ...workerEnv, DATABASE_URL: t.databaseUrl, WORKER_CHUNK_DELAY_MS: '600' };
    let kill: () => Promise<void>;
    if (existsSync(WORKER_JS)) {
      // Two worker processes (the compiled `npm run worker`); the first is killed with SIGKILL.
      const forkWorker = async (): Promise<ChildProcess> => {
        const child = fork(WORKER_JS, [], { env: { ...process.env, ...slowEnv }, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
        children.push(child);
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`worker did not start within 30 s: ${stderr}`)), 30_000);
          child.once('message', () => (clearTimeout(timer), resolve()));
          child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`worker exited with ${code}: ${stderr}`))));
        });
        return child;
      };
      const [victim] = await Promise.all([forkWorker(), forkWorker()]);
      kill = async () => {
        victim.kill('SIGKILL');
        await new Promise((resolve) => (victim.exitCode !== null || victim.signalCode !== null ? resolve(null) : victim.once('exit', resolve)));
      };
    } else {
      // Without a build: two in-process workers, the first force-closed.
      const ctx = await createWorker(slowEnv);
      contexts.push(ctx, await createWorker(slowEnv));
      kill = async () => {
        await ctx.get<VerificationWorkerHost>(VERIFICATION_WORKER_HOST).worker.close(true);
      };
    }
    const r = await submit(t, { scope: 'all' });
    expect(r.status).toBe(202);
    const id = r.body.batch_id as string;
    // Mid-batch: some chunks recorded, and both workers hold a chunk.
    await waitUntil('the first chunk and both workers busy', 60_000, async () => (await status(t, id)).done >= 500 && (await queue.getActiveCount()) >= 2);
    await kill();
    const before = (await status(t, id)).done;
    expect(before).toBeLessThan(N);
    const s = await waitCompleted(t, id, 90_000);
    expect(s).toMatchObject({ status: 'completed', total: N, done: N, invalid: 0 });
    expect(await resultRows(id)).toBe(N);
    expect(await ledgeredResults(id)).toBe(N);
  });
});

describe('verification batches with Redis down', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite', { REDIS_URL: 'redis://127.0.0.1:6390', QUEUE_PREFIX: `aer1t_down_${randomBytes(4).toString('hex')}` });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 queue_unavailable and records nothing', async () => {
    const head = (await t.http.get('/api/ledger/head')).body;
    const started = Date.now();
    const r = await submit(t, { scope: 'all' });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('queue_unavailable');
    expect(r.body.message).toMatch(/Redis.*unavailable.*nothing was recorded/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await count(t, 'SELECT COUNT(*) AS n FROM verification_batches')).toBe(0);
    expect(await count(t, "SELECT COUNT(*) AS n FROM events WHERE type = 'VerificationBatchRequested'")).toBe(0);
    expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
  });
});

describe('verification batches whose queued jobs were lost (Redis restarted without its data)', () => {
  jest.setTimeout(60_000);
  const prefix = `aer1t_lost_${Date.now()}_${randomBytes(4).toString('hex')}`;
  let db: { url: string; drop: () => Promise<void> };
  const env = (): Record<string, string> => ({ REDIS_URL, QUEUE_PREFIX: prefix, DATABASE_URL: db.url });
  let t: TestApp | undefined;
  let queue: Queue | undefined;
  let worker: INestApplicationContext | undefined;
  afterAll(async () => {
    await worker?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await t?.close();
    await db?.drop();
  });

  it('are queued again when the API starts, and complete with each result recorded once', async () => {
    db = await createPgDatabase();
    t = await startApp('postgres', env());
    for (let i = 0; i < 30; i++) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(receiptText());
      expect(r.status).toBe(201);
    }
    const submitted = await submit(t, { scope: 'all' });
    expect(submitted.status).toBe(202);
    const id = submitted.body.batch_id as string;
    const q = (queue = new Queue(VERIFICATION_QUEUE, { connection: redisOptionsFromUrl(REDIS_URL), prefix }));
    expect(await q.count()).toBe(1);
    await q.obliterate({ force: true }); // the jobs are gone, as after a Redis restart without AOF
    expect(await q.count()).toBe(0);

    // Restart the API on the same database: it re-queues the unfinished batch.
    await t.close();
    t = await startApp('postgres', env());
    await waitUntil('the chunk to be queued again', 10_000, async () => (await q.count()) === 1);
    worker = await createWorker({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env() });
    const done = await waitCompleted(t, id, 30_000);
    expect(done).toMatchObject({ total: 30, done: 30, invalid: 0 });
    expect(await count(t, 'SELECT COUNT(*) AS n FROM verification_results WHERE batch_id = ?', [id])).toBe(30);
  });
});

describe('verification batch paging', () => {
  let t: TestApp;
  afterAll(async () => {
    await t?.close();
  });
  it('accepts limit=0 for counts only and refuses a limit above 1000', async () => {
    t = await startApp('sqlite');
    const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(receiptText());
    expect(r.status).toBe(201);
    const id = (await submit(t, { scope: 'all' })).body.batch_id as string;
    await waitCompleted(t, id, 10_000);
    const counts = await t.http.get(`/api/verification-batches/${id}?limit=0`);
    expect(counts.body).toMatchObject({ total: 1, done: 1, limit: 0, results: [] });
    expect((await t.http.get(`/api/verification-batches/${id}?limit=1001`)).body.error).toBe('invalid_query');
  });
});
