/**
 * Figure (issue 34, "pages and proofs"): requests per second of a receipt
 * page (`GET /run/{id}`, HTML) and of an inclusion proof
 * (`GET /api/ledger/proof/inclusion`) served by this tree (the API on
 * Nest's Fastify adapter) and by the last commit on Express
 * ({@link BEFORE_COMMIT}), side by side in one run, on both databases.
 *
 * The "before" build is this repository's own history: the commit's tree
 * (`git archive`) compiled in the scratch folder against this checkout's
 * node_modules (that commit's dependencies are a subset of today's). Each
 * build runs as `npm start` runs it, on a database of its own holding the
 * same 200 receipts; autocannon with 50 connections for a fixed time per
 * route, the builds alternating, best run of each. Every answer must be 200.
 */
import autocannon from 'autocannon';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSigningKeyFile } from '../src/log/log-key';
import { createKey, RunningApp, startApp } from './lib/app';
import { BenchDb, createDb, Dialect } from './lib/db';
import { BenchContext, FigureResult, notMeasured } from './lib/figure';
import { fmt, pct } from './lib/measure';
import { receiptBodies } from './lib/receipts';

const execFileP = promisify(execFile);

/** The last commit whose API ran on Express (the next one, 3150c80, moved it to Fastify). */
export const BEFORE_COMMIT = 'a053b87';
const CONNECTIONS = 50;
const RECEIPTS = 200;
const ROUTES = ['receipt page', 'inclusion proof'] as const;
type Route = (typeof ROUTES)[number];

/** Unlimited read budgets: the figure is the stack's rate, not the rate limiter's refusals. */
const READ_ENV = { VERIFY_RATE_LIMIT: '1000000000', KEY_READ_RATE_LIMIT: '1000000000', CHECKPOINT_INTERVAL_MS: '200' };

/** Compile {@link BEFORE_COMMIT} in `ctx.tmp`; returns its root, or throws saying why it cannot. */
async function buildBefore(ctx: BenchContext): Promise<string> {
  const dir = join(ctx.tmp, `before-${BEFORE_COMMIT}`);
  mkdirSync(dir, { recursive: true });
  await execFileP('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', ctx.root, BEFORE_COMMIT, dir]);
  symlinkSync(join(ctx.root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await execFileP(process.execPath, [join(ctx.root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.build.json')], { cwd: dir });
  if (!existsSync(join(dir, 'dist', 'src', 'main.js'))) throw new Error('the build wrote no dist/src/main.js');
  return dir;
}

interface Served {
  app: RunningApp;
  db: BenchDb;
  ids: string[];
  size: number;
}

let served = 0;
const ORIGIN = 'bench.test/reads';

/** Start the build at `root` on a fresh `dialect` database holding {@link RECEIPTS} receipts, with a checkpoint over them. */
async function serve(ctx: BenchContext, root: string, dialect: Dialect): Promise<Served> {
  const db = await createDb(dialect, ctx.tmp, ctx.pgAdminUrl);
  const key = await createKey(root, db, 'producer');
  const keyFile = join(ctx.tmp, `reads-log-${++served}.key`);
  createSigningKeyFile(keyFile, ORIGIN);
  const app = await startApp(root, db, { ...READ_ENV, LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_ORIGIN: ORIGIN });
  try {
    const ids: string[] = [];
    for (const body of receiptBodies(ctx.root, RECEIPTS)) {
      const r = await fetch(`${app.base}/api/receipts`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      const answer = (await r.json()) as { id?: string };
      if (r.status !== 201 || !answer.id) throw new Error(`POST /api/receipts answered ${r.status}`);
      ids.push(answer.id);
    }
    // The receipts' events are leaves 0..RECEIPTS-1 of a fresh log: wait for a checkpoint that covers them.
    for (let waited = 0; ; waited += 100) {
      const r = await fetch(`${app.base}/api/ledger/proof/inclusion?index=0&tree_size=${RECEIPTS}`);
      const text = await r.text();
      if (r.status === 200) break;
      if (waited > 30_000) throw new Error(`${root === ctx.root ? 'this build' : 'the Express build'}: no inclusion proof at tree size ${RECEIPTS} after 30 s (last answer ${r.status}: ${text.slice(0, 200)})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { app, db, ids, size: RECEIPTS };
  } catch (e) {
    await app.stop();
    await db.drop();
    throw e;
  }
}

/** Requests per second of `route` on `s` under autocannon for `seconds`; throws on any answer but 200. */
async function load(s: Served, route: Route, seconds: number): Promise<{ rate: number; p99: number }> {
  let i = 0;
  const path = (): string => (route === 'receipt page' ? `/run/${s.ids[i++ % s.ids.length]}` : `/api/ledger/proof/inclusion?index=${i++ % s.size}&tree_size=${s.size}`);
  const res = await new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      { url: s.app.base, connections: CONNECTIONS, duration: seconds, timeout: 30, requests: [{ method: 'GET', headers: { accept: route === 'receipt page' ? 'text/html' : 'application/json' }, setupRequest: (req) => ({ ...req, path: path() }) }] },
      (err, r) => (err ? reject(err) : resolve(r)),
    ),
  );
  const ok = res['2xx'];
  if (res.non2xx > 0 || res.errors > 0 || res.timeouts > 0) throw new Error(`${route}: ${res.non2xx} answers not 2xx, ${res.errors} errors, ${res.timeouts} timeouts of ${ok + res.non2xx}`);
  return { rate: ok / seconds, p99: res.latency.p99 };
}

/** The figures: per database and route, this tree's rate against the Express build's, best of alternating runs. */
export async function benchReads(ctx: BenchContext): Promise<FigureResult[]> {
  const seconds = ctx.quick ? 3 : 8;
  const reps = ctx.quick ? 1 : 2;
  const target = 'reported (before and after the move to Fastify)';
  let beforeRoot: string;
  try {
    ctx.log(`reads: compiling the Express build (${BEFORE_COMMIT}) from this repository's history`);
    beforeRoot = await buildBefore(ctx);
  } catch (e) {
    const why = `the Express build (${BEFORE_COMMIT}) could not be made from this checkout's git history: ${(e as Error).message.split('\n')[0]}`;
    return (['sqlite', 'postgres'] as const).flatMap((d) => ROUTES.map((r) => notMeasured(`${r} under load, Fastify vs Express, ${d === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`, 'requests/s', target, why)));
  }
  const out: FigureResult[] = [];
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    ctx.log(`reads ${dialect}: starting both builds, ${RECEIPTS} receipts each`);
    try {
      out.push(...(await compare(ctx, beforeRoot, dialect, name, seconds, reps, target)));
    } catch (e) {
      // One database's failure is reported for its figures; the other database is still measured.
      ctx.log(`reads ${dialect} failed: ${(e as Error).stack ?? String(e)}`);
      out.push(...ROUTES.map((r) => notMeasured(`${r} under load, Fastify vs Express, ${name}`, 'requests/s', target, (e as Error).message)));
    }
  }
  return out;
}

/** Both routes on `dialect`: this tree against the Express build, alternating runs. */
async function compare(ctx: BenchContext, beforeRoot: string, dialect: Dialect, name: string, seconds: number, reps: number, target: string): Promise<FigureResult[]> {
  const out: FigureResult[] = [];
  const before = await serve(ctx, beforeRoot, dialect);
  let after: Served | null = null;
  try {
    after = await serve(ctx, ctx.root, dialect);
    for (const route of ROUTES) {
      const runs: Record<'before' | 'after', { rate: number; p99: number }[]> = { before: [], after: [] };
      await load(before, route, 2); // warm-up of both (JIT, caches)
      await load(after, route, 2);
      for (let k = 0; k < reps; k++) {
        ctx.log(`reads ${dialect}: ${route}, ${seconds} s each, run ${k + 1} of ${reps}`);
        runs.before.push(await load(before, route, seconds));
        runs.after.push(await load(after, route, seconds));
      }
      const bestOf = (xs: { rate: number; p99: number }[]): { rate: number; p99: number } => xs.reduce((a, b) => (b.rate > a.rate ? b : a));
      const b = bestOf(runs.before);
      const a = bestOf(runs.after);
      const what = route === 'receipt page' ? '`GET /run/{id}` (HTML: the receipt re-verified, its chain positions)' : '`GET /api/ledger/proof/inclusion` (a stored-node proof, JSON)';
      out.push({
        figure: `${route} under load, Fastify vs Express, ${name}`,
        value: a.rate,
        unit: 'requests/s',
        reference: { what: `the same requests to the last build on Express (${BEFORE_COMMIT}), this run`, value: b.rate, unit: 'requests/s' },
        ratio: a.rate / b.rate,
        target,
        met: null,
        note: `${what} for ${RECEIPTS} receipts in turn, autocannon ${CONNECTIONS} connections, ${seconds} s a run, the two builds alternating (best of ${reps} each), read budgets unlimited; every answer 200. After / before: ${pct(a.rate / b.rate)}; p99 ${fmt(a.p99)} ms after, ${fmt(b.p99)} ms before.`,
        details: { 'runs after, requests/s': runs.after.map((r) => fmt(r.rate)).join(' / '), 'runs before, requests/s': runs.before.map((r) => fmt(r.rate)).join(' / ') },
      });
    }
  } finally {
    await before.app.stop();
    await before.db.drop();
    if (after) {
      await after.app.stop();
      await after.db.drop();
    }
  }
  return out;
}
