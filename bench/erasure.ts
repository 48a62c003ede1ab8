/**
 * Erasure and retention at scale (issue 29, "Measured"), on SQLite and
 * PostgreSQL, the application in this process (as `npm start` builds it,
 * listening on 127.0.0.1):
 *   - erasing one job of 10,000 entries (`POST /api/erasures {"job_ids"}`):
 *     its time, and the latency of single receipt writes (`POST
 *     /api/receipts`, one at a time) during it against the same writes
 *     without it (p50/p99): the erasure works outside the write lock and in
 *     pages (1000 positions on PostgreSQL, 250 on SQLite), each a background
 *     write that lets every queued write go first, so a write waits at most
 *     for one page;
 *   - retention over N events (100,000; quick 10,000) past their period: one
 *     run's time (and concurrent writes meanwhile), extrapolated linearly to
 *     1,000,000 events (said so in the output), and the hourly cost of a run
 *     that finds nothing left to erase.
 */
import { INestApplication } from '@nestjs/common';
import { createApp } from '../src/app.factory';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { timelineEntries } from '../src/cli/generate';
import { RetentionService } from '../src/erasure/retention.service';
import { createDb, Dialect } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt, now } from './lib/measure';
import { receiptBodies } from './lib/receipts';

/** A write waits for at most about one erasure page: its p99 during erasure stays under this (ms). */
const P99_BOUND_MS = 500;

interface Latencies {
  p50: number;
  p99: number;
  n: number;
}

function percentiles(ms: number[]): Latencies {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]);
  return { p50: at(0.5), p99: at(0.99), n: s.length };
}

class Bench {
  private bodies: string[];
  private next = 0;
  constructor(
    readonly app: INestApplication,
    readonly base: string,
    readonly keys: { producer: string; privacy: string },
    root: string,
    writes: number,
  ) {
    this.bodies = receiptBodies(root, writes);
  }

  async post(path: string, body: string, key: string): Promise<{ status: number; json: unknown }> {
    const r = await fetch(`${this.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const text = await r.text();
    return { status: r.status, json: text ? (JSON.parse(text) as unknown) : null };
  }

  /** Single receipt writes, one at a time, until `until()` or `count` writes; their latencies in ms. */
  async writes(until: () => boolean, count = Infinity): Promise<number[]> {
    const out: number[] = [];
    while (!until() && out.length < count) {
      if (this.next >= this.bodies.length) throw new Error('out of receipt bodies');
      const t0 = now();
      const r = await this.post('/api/receipts', this.bodies[this.next++], this.keys.producer);
      if (r.status !== 201) throw new Error(`receipt write: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      out.push((now() - t0) * 1000);
    }
    return out;
  }

  /** Append a timeline of `entries` to `job`, 1000 entries a request. */
  async timeline(job: string, entries: number): Promise<void> {
    const all = [...timelineEntries({ entries, job })];
    for (let i = 0; i < all.length; i += 1000) {
      const r = await this.post(`/api/jobs/${job}/entries`, JSON.stringify(all.slice(i, i + 1000)), this.keys.producer);
      if (r.status !== 201) throw new Error(`append ${job} ${i}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    }
  }

  /** Run `work` while writing one receipt at a time; the work's seconds and the writes' latencies. */
  async during<T>(work: () => Promise<T>): Promise<{ seconds: number; value: T; lat: Latencies }> {
    let done = false;
    const t0 = now();
    const writing = this.writes(() => done);
    try {
      const value = await work();
      return { seconds: now() - t0, value, lat: percentiles(await ((done = true), writing)) };
    } finally {
      done = true;
      await writing.catch(() => undefined);
    }
  }
}

async function withApp<T>(ctx: BenchContext, dialect: Dialect, writes: number, fn: (b: Bench) => Promise<T>): Promise<T> {
  const db = await createDb(dialect, ctx.tmp, ctx.pgAdminUrl);
  // Retention is run by the bench itself (its hourly check would not fire during a run).
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://ledger.test', VERIFY_RATE_LIMIT: '1000000', BODY_LIMIT_BYTES: String(64 * 1024 * 1024), RETENTION_PERIOD: 'PT1H', DATABASE_URL: db.url };
  delete env.REDIS_URL; // retention in process: the bench calls its runs
  const app = await createApp(env);
  try {
    await app.listen(0, '127.0.0.1');
    const port = (app.getHttpServer().address() as { port: number }).port;
    const keys = app.get(ApiKeysService);
    const b = new Bench(app, `http://127.0.0.1:${port}`, { producer: (await keys.create('bench-producer', 'producer')).key, privacy: (await keys.create('bench-privacy', 'privacy')).key }, ctx.root, writes);
    return await fn(b);
  } finally {
    await app.close();
    await db.drop();
  }
}

const ms = (x: number) => `${fmt(x, x < 10 ? 1 : 0)} ms`;

/** Erasing one job of 10,000 entries (quick: 1,000) on one database. */
async function eraseJob(ctx: BenchContext, dialect: Dialect): Promise<FigureResult> {
  const entries = ctx.quick ? 1_000 : 10_000;
  return withApp(ctx, dialect, 20_000, async (b) => {
    ctx.log(`erasure ${dialect}: appending a job of ${entries} entries`);
    await b.timeline('job-erase-bench', entries);
    await b.writes(() => false, 50); // warm-up
    const t0 = now();
    const without = percentiles(await b.writes(() => now() - t0 > (ctx.quick ? 2 : 5)));
    ctx.log(`erasure ${dialect}: erasing the job while writing single receipts`);
    const r = await b.during(() => b.post('/api/erasures', JSON.stringify({ job_ids: ['job-erase-bench'], reason: 'bench', legal_basis: 'bench' }), b.keys.privacy));
    const answer = r.value.json as { positions?: number[]; erasure_positions?: number[] };
    if (r.value.status !== 201 || !answer.positions) throw new Error(`erasure: ${r.value.status} ${JSON.stringify(answer).slice(0, 300)}`);
    return {
      figure: `erase one job of ${fmt(entries)} entries (${dialect})`,
      value: r.seconds,
      unit: 's',
      reference: { what: 'concurrent single-write p99 without erasure', value: without.p99, unit: 'ms' },
      ratio: r.lat.p99 / without.p99,
      target: `reported; concurrent write p99 during < ${P99_BOUND_MS} ms (not held)`,
      met: r.lat.p99 < P99_BOUND_MS,
      note: `Targets resolved and retained data computed on a read snapshot, then ${answer.erasure_positions?.length ?? '?'} background write(s) of at most ${dialect === 'sqlite' ? 250 : 1000} positions, each its own PayloadsErased event (every write queued meanwhile goes first); single receipt writes went on meanwhile, one at a time, from the same process.`,
      details: {
        'events erased': answer.positions.length,
        'PayloadsErased events (pages)': answer.erasure_positions?.length ?? 0,
        'erased events per second': answer.positions.length / r.seconds,
        'concurrent writes during erasure (n, p50, p99)': `${r.lat.n}, ${ms(r.lat.p50)}, ${ms(r.lat.p99)}`,
        'writes without erasure (n, p50, p99)': `${without.n}, ${ms(without.p50)}, ${ms(without.p99)}`,
      },
    };
  });
}

/** Retention over N events past their period on one database, extrapolated to 1,000,000. */
async function retention(ctx: BenchContext, dialect: Dialect): Promise<FigureResult> {
  const n = ctx.quick ? 10_000 : 100_000;
  return withApp(ctx, dialect, 40_000, async (b) => {
    ctx.log(`retention ${dialect}: appending ${n} entries (${n / 10_000} jobs of 10,000)`);
    for (let j = 0; j < n / 10_000; j++) await b.timeline(`job-retention-${j}`, 10_000);
    await b.writes(() => false, 50);
    const t0 = now();
    const without = percentiles(await b.writes(() => now() - t0 > (ctx.quick ? 2 : 5)));
    const service = b.app.get(RetentionService);
    ctx.log(`retention ${dialect}: one run over ${n} events past the period, writing meanwhile`);
    const r = await b.during(() => service.run(new Date(Date.now() + 2 * 3600_000)));
    if (r.value.erased < n) throw new Error(`retention erased ${r.value.erased} of ${n}`);
    const idle = now();
    const again = await service.run(new Date(Date.now() + 2 * 3600_000));
    const idleSeconds = now() - idle;
    const perMillion = (r.seconds * 1_000_000) / r.value.erased;
    return {
      figure: `retention over ${fmt(n)} events (${dialect}), extrapolated to 1,000,000`,
      value: perMillion,
      unit: 's per 1M (extrapolated)',
      reference: { what: `measured over ${fmt(r.value.erased)} erased`, value: r.seconds, unit: 's' },
      ratio: null,
      target: `reported; concurrent write p99 during < ${P99_BOUND_MS} ms (not held)`,
      met: r.lat.p99 < P99_BOUND_MS,
      note: `Measured over ${fmt(n)} events and EXTRAPOLATED linearly to 1,000,000 (not measured at 1,000,000): candidates read 2,000 positions a query outside the write lock (driven by the position range, not the index on type), erased ${dialect === 'sqlite' ? 250 : 1000} a background write.`,
      details: {
        'events erased (measured)': r.value.erased,
        'PayloadsErased events (pages)': r.value.erasures.reduce((a, e) => a + e.erasure_positions.length, 0),
        'erased events per second': r.value.erased / r.seconds,
        'concurrent writes during retention (n, p50, p99)': `${r.lat.n}, ${ms(r.lat.p50)}, ${ms(r.lat.p99)}`,
        'writes without retention (n, p50, p99)': `${without.n}, ${ms(without.p50)}, ${ms(without.p99)}`,
        'a run with nothing left to erase (the hourly cost), s': `${fmt(idleSeconds, 2)} over ${fmt(again.scanned)} positions (${fmt((idleSeconds * 1_000_000) / Math.max(1, again.scanned), 1)} s per 1M, extrapolated)`,
      },
    };
  });
}

/** Every erasure figure, both databases. */
export async function benchErasure(ctx: BenchContext): Promise<FigureResult[]> {
  const out: FigureResult[] = [];
  for (const d of ['sqlite', 'postgres'] as const) out.push(await eraseJob(ctx, d));
  for (const d of ['sqlite', 'postgres'] as const) out.push(await retention(ctx, d));
  return out;
}
