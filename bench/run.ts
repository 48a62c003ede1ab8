/**
 * `npm run bench` / `npm run bench -- --quick`: every figure of the
 * benchmark issue, each measured side by side with its reference in one
 * run, printed with the machine's facts and written to bench/RESULTS.md.
 *
 * Options:
 *   --quick          small sizes (1/10 to 1/20), a whole run in about 2 minutes; its figures are
 *                    not comparable with the targets: written to bench/out/RESULTS-quick.md,
 *                    never over bench/RESULTS.md
 *   --only a,b       run only these figures: timeline, cli, batch, startup, merkle, tlog, ingest, otlp, coverage, queue, pack, gateway, tiles, erasure, format, heads, reads
 *                    (cli needs timeline's in-process rate and runs it too)
 *   --reps N         repetitions of the in-process and CLI timings (best reported; default 5, quick 3)
 *   --out FILE       where to write the report (default bench/RESULTS.md)
 *   --no-write       print only
 *
 * Only 127.0.0.1 is used: PostgreSQL (BENCH_PG_URL, default
 * postgres://postgres@127.0.0.1:5432/test), Redis (BENCH_REDIS_URL, default
 * redis://127.0.0.1:6379). Needs `npm run build` first (the npm script does it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { benchBatch } from './batch';
import { benchCli } from './cli';
import { benchCoverage } from './coverage';
import { benchErasure } from './erasure';
import { benchGateway } from './gateway';
import { benchEventFormat } from './event-format';
import { benchIngest } from './ingest';
import { BenchContext, FigureResult, notMeasured } from './lib/figure';
import { machineFacts, MachineFacts } from './lib/machine';
import { fmt, now, pct } from './lib/measure';
import { benchMerkle } from './merkle';
import { benchOtlp } from './otlp';
import { benchPack } from './pack';
import { benchQueue } from './queue';
import { benchReads } from './reads';
import { benchStartup } from './startup';
import { benchStreamHeads } from './stream-heads';
import { benchTimeline, timelineSize } from './timeline';
import { benchTlogProofs } from './tlog-proofs';
import { benchTlogIntegrate } from './tlog-integrate';
import { benchTiles } from './tiles';

const FIGURES = ['timeline', 'cli', 'batch', 'startup', 'merkle', 'tlog', 'ingest', 'otlp', 'coverage', 'queue', 'pack', 'gateway', 'tiles', 'erasure', 'format', 'heads', 'reads'] as const;
type FigureName = (typeof FIGURES)[number];

/** 127.0.0.1 only: refuse anything else. */
function loopbackOnly(url: string, what: string): string {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') throw new Error(`${what} must be on 127.0.0.1 (got ${host})`);
  return url;
}

interface Args {
  quick: boolean;
  only: Set<FigureName>;
  reps: number | null;
  out: string | null;
  write: boolean;
}

/** Parse the command line (throws on an unknown option). */
export function parseArgs(argv: string[]): Args {
  const a: Args = { quick: false, only: new Set(FIGURES), reps: null, out: null, write: true };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i];
    const val = (): string => {
      const eq = x.indexOf('=');
      if (eq >= 0) return x.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${x} needs a value`);
      return v;
    };
    if (x === '--quick') a.quick = true;
    else if (x === '--no-write') a.write = false;
    else if (x.startsWith('--only')) {
      const names = val().split(',').map((s) => s.trim());
      for (const n of names) if (!FIGURES.includes(n as FigureName)) throw new Error(`unknown figure ${n}; one of ${FIGURES.join(', ')}`);
      a.only = new Set(names as FigureName[]);
    } else if (x.startsWith('--reps')) a.reps = Math.max(1, Number(val()));
    else if (x.startsWith('--out')) a.out = val();
    else if (x === '--help' || x === '-h') {
      process.stdout.write(readFileSync(__filename, 'utf8').split('*/')[0] + '*/\n');
      process.exit(0);
    } else throw new Error(`unknown option ${x}`);
  }
  return a;
}

function fmtValue(v: number | null, unit: string): string {
  if (v === null) return 'not measured';
  return `${v >= 100 ? fmt(v) : fmt(v, v >= 10 ? 1 : 2)} ${unit}`;
}

/** Printed at the start and the end of a quick run. */
export const QUICK_NOTICE = 'QUICK RUN: reduced sizes; these figures are NOT comparable with the targets or with bench/RESULTS.md (met/missed is shown for orientation only)';

/** A figure's result against its target; a quick run says its figures are not comparable. */
export function status(r: FigureResult, quick = false): string {
  if (r.value === null) return 'NOT MEASURED';
  const s = r.met === null ? 'reported (no target)' : r.met ? 'met' : 'MISSED';
  return quick ? `${s} at reduced size (not comparable)` : s;
}

/**
 * Where the report goes: null with --no-write; --out FILE; else
 * bench/RESULTS.md for a full run and bench/out/RESULTS-quick.md for a quick
 * one. A quick run never writes bench/RESULTS.md (throws when --out names it).
 */
export function reportPath(a: Pick<Args, 'quick' | 'out' | 'write'>, root: string): string | null {
  if (!a.write) return null;
  const reference = join(root, 'bench', 'RESULTS.md');
  if (!a.quick) return a.out ? resolve(a.out) : reference;
  const out = a.out ? resolve(a.out) : join(root, 'bench', 'out', 'RESULTS-quick.md');
  if (out === reference) throw new Error('--quick figures are not comparable with the targets: not writing them over bench/RESULTS.md (give another --out, or run without --quick)');
  return out;
}

function factsLines(m: MachineFacts & { loadEnd?: string }): string[] {
  return [
    `cpu: ${m.cpu}, ${m.cores} cores; memory ${m.memory}; ${m.os}`,
    `node ${m.node} (V8 ${m.v8}); ${m.sqlite}; ${m.postgres}; ${m.redis}`,
    `code measured: ${m.revision}`,
    `scratch files: ${m.tmpfs}; load average (1/5/15 min) at start: ${m.load}${m.loadEnd ? `, at end: ${m.loadEnd}` : ''}`,
  ];
}

function printResult(r: FigureResult, quick: boolean): void {
  const ref = r.reference ? `  reference: ${fmtValue(r.reference.value, r.reference.unit)} (${r.reference.what})` : '';
  const ratio = r.ratio !== null && r.reference ? `  ratio ${pct(r.ratio)}` : '';
  process.stdout.write(`\n* ${r.figure}: ${fmtValue(r.value, r.unit)}${ratio}  target ${r.target}: ${status(r, quick)}\n${ref ? ref + '\n' : ''}  ${r.note}\n`);
  for (const [k, v] of Object.entries(r.details ?? {})) process.stdout.write(`    ${k}: ${typeof v === 'number' ? fmt(v) : v}\n`);
}

function markdown(results: FigureResult[], m: MachineFacts & { loadEnd?: string }, a: Args, seconds: number, root: string): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const lines: string[] = [];
  lines.push('# Benchmark results');
  lines.push('');
  lines.push(`Generated by \`npm run bench${a.quick ? ' -- --quick' : ''}\` on ${new Date().toISOString()} (${a.quick ? `**${QUICK_NOTICE}**` : 'full run'}; ${fmt(seconds)} s${a.only.size < FIGURES.length ? `; figures: ${[...a.only].join(', ')}` : ''}).`);
  lines.push('Every ratio compares two figures measured side by side in this one run. In-process and CLI rates are the best of the repetitions listed under each figure (the least disturbed run on a shared machine); the NDJSON batch figures and their raw references are the best of 3 alternating runs each; the other HTTP figures and the queue figures are single runs after a warm-up.');
  lines.push('');
  lines.push('## Machine');
  lines.push('');
  for (const l of factsLines(m)) lines.push(`- ${l}`);
  lines.push('');
  lines.push('## Figures');
  lines.push('');
  lines.push('| figure | value | reference (same run) | ratio | target | result |');
  lines.push('| --- | ---: | --- | ---: | --- | --- |');
  for (const r of results) {
    const ref = r.reference ? `${fmtValue(r.reference.value, r.reference.unit)}: ${r.reference.what}` : '-';
    const ratio = r.ratio !== null && r.reference ? pct(r.ratio) : '-';
    lines.push(`| ${esc(r.figure)} | ${fmtValue(r.value, r.unit)} | ${esc(ref)} | ${ratio} | ${esc(r.target)} | ${status(r, a.quick)} |`);
  }
  lines.push('');
  lines.push('## What bounds each figure');
  lines.push('');
  for (const r of results) {
    lines.push(`### ${r.figure}`);
    lines.push('');
    lines.push(`**${status(r, a.quick)}** (${fmtValue(r.value, r.unit)}; target ${r.target}). ${r.note}`);
    const d = Object.entries(r.details ?? {});
    if (d.length) {
      lines.push('');
      for (const [k, v] of d) lines.push(`- ${k}: ${typeof v === 'number' ? fmt(v) : v}`);
    }
    lines.push('');
  }
  const profile = join(root, 'bench', 'PROFILE.md');
  if (existsSync(profile)) {
    lines.push(readFileSync(profile, 'utf8').trim().replace(/^# /, '## '));
    lines.push('');
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const root = resolve(__dirname, '..', '..', '..', '..');
  const outPath = reportPath(a, root); // before measuring: a refused --out fails at once
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js')) || !existsSync(join(root, 'dist', 'src', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm run bench does)');
  }
  const tmp = mkdtempSync(join(tmpdir(), 'aer1-bench-'));
  const ctx: BenchContext = {
    quick: a.quick,
    tmp,
    root,
    reps: a.reps ?? (a.quick ? 3 : 5),
    log: (msg) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`),
    pgAdminUrl: loopbackOnly(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test', 'BENCH_PG_URL'),
    redisUrl: loopbackOnly(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', 'BENCH_REDIS_URL'),
  };
  const t0 = now();
  const facts = await machineFacts(ctx.pgAdminUrl, ctx.redisUrl, root);
  process.stdout.write(`AER-1 ledger benchmarks (${a.quick ? 'quick' : 'full'} run)\n${a.quick ? `${QUICK_NOTICE}\n` : ''}${factsLines(facts).join('\n')}\n`);

  const results: FigureResult[] = [];
  const add = (rs: FigureResult | FigureResult[]): void => {
    for (const r of Array.isArray(rs) ? rs : [rs]) {
      results.push(r);
      printResult(r, a.quick);
    }
  };
  const guard = async (name: string, fallback: () => FigureResult[], fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (e) {
      const msg = e instanceof Error ? e.message.split('\n')[0].slice(0, 600) : String(e);
      ctx.log(`${name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      add(fallback().map((r) => ({ ...r, note: `not measured: ${name} failed: ${msg}` })));
    }
  };

  try {
    let core: { rate: number; entries: number } | null = null;
    if (a.only.has('timeline') || a.only.has('cli')) {
      await guard('timeline', () => [notMeasured('timeline verification, core in process', 'entries/s', '>= 40% of the floor', '')], async () => {
        const t = await benchTimeline(ctx);
        core = { rate: t.coreRate, entries: t.entries };
        add(t.result);
      });
    }
    if (a.only.has('cli')) {
      const cliFallback = (): FigureResult[] => [notMeasured('aer1 verify --kind chain (child process)', 'entries/s', '>= 70% of in-process', ''), notMeasured('aer1 verify --kind chain peak RSS', 'MB', '< 150 MB', '')];
      const c = core as { rate: number; entries: number } | null;
      if (c === null) add(cliFallback().map((r) => ({ ...r, note: 'not measured: its reference (figure 1) failed' })));
      else await guard('cli', cliFallback, async () => add(await benchCli(ctx, c.entries || timelineSize(ctx), c.rate)));
    }
    if (a.only.has('batch')) await guard('batch', () => [notMeasured('aer1 verify --batch --json peak RSS', 'MB', 'within 40 MB of the smaller batch', '')], async () => add(await benchBatch(ctx)));
    if (a.only.has('startup')) await guard('startup', () => [notMeasured('aer1 start-up', 'ms', '<= 4x node -e 0', '')], async () => add(await benchStartup(ctx)));
    if (a.only.has('merkle')) await guard('merkle', () => [notMeasured('Merkle root (S8.1)', 'leaves/s', '>= 60% of the floor', '')], async () => add(await benchMerkle(ctx)));
    if (a.only.has('tlog')) {
      await guard('tlog', () => [notMeasured('tree integration, 1M leaves', 'leaves/s', '>= 50% of the floor', '')], async () => add(await benchTlogIntegrate(ctx)));
      await guard('tlog proofs', () => [notMeasured('proofs over HTTP, 1M vs 10k leaves', 'ms', '<= 3x the 10,000-leaf latency', '')], async () => add(await benchTlogProofs(ctx)));
    }
    if (a.only.has('ingest')) {
      await guard('ingest', () => [notMeasured('receipt ingestion over HTTP', 'receipts/s', 'batch >= 50% of raw on each database', '')], async () => add(await benchIngest(ctx)));
    }
    if (a.only.has('format')) {
      await guard('format', () => [notMeasured('event format 3 vs 2: receipt ingestion', 'receipts/s', '>= 90.0% of format 2', '')], async () => add(await benchEventFormat(ctx)));
    }
    if (a.only.has('otlp')) {
      await guard('otlp', () => [notMeasured('otlp: OTLP/HTTP spans, protobuf, 512 per request', 'spans/s', '>= 50% of the NDJSON batch rate', '')], async () => add(await benchOtlp(ctx)));
    }
    if (a.only.has('coverage')) await guard('coverage', () => [notMeasured('coverage report', 's', '< 2 s', '')], async () => add(await benchCoverage(ctx)));
    if (a.only.has('pack')) await guard('pack', () => [notMeasured('evidence pack peak RSS', 'MB', '<= 1.5x the smaller job', '')], async () => add(await benchPack(ctx)));
    if (a.only.has('heads')) await guard('heads', () => [notMeasured('stream-heads statement', 'ms', 'no full scan of the log', '')], async () => add(await benchStreamHeads(ctx)));
    if (a.only.has('queue')) {
      await guard('queue', () => [notMeasured('batch verification through BullMQ', 'receipts/s', '1 worker >= 50% of in-process', '')], async () => add(await benchQueue(ctx)));
    }
    if (a.only.has('gateway')) {
      await guard('gateway', () => [notMeasured('gateway: added latency per tools/call, p50', 'ms', 'reported (issue 31)', ''), notMeasured('gateway: added latency per tools/call, p99', 'ms', 'reported (issue 31)', '')], async () => add(await benchGateway(ctx)));
    }
    if (a.only.has('tiles')) {
      await guard('tiles', () => [notMeasured('tiles: one full tile (GET /tile/0/000, 8 KiB) from the API', 'requests/s', 'reported (issue 32)', ''), notMeasured('tiles: static copy write cost, per 1,000,000 entries', 's per 1,000,000 entries', 'reported (issue 32)', '')], async () => add(await benchTiles(ctx)));
    }
    if (a.only.has('reads')) {
      await guard('reads', () => [notMeasured('receipt page and inclusion proof under load, Fastify vs Express', 'requests/s', 'reported (before and after the move to Fastify)', '')], async () => add(await benchReads(ctx)));
    }
    if (a.only.has('erasure')) {
      await guard('erasure', () => [notMeasured('erase one job of 10,000 entries', 's', 'reported; concurrent write p99 during < 500 ms (not held)', ''), notMeasured('retention over 100,000 events, extrapolated to 1,000,000', 's per 1M (extrapolated)', 'reported; concurrent write p99 during < 500 ms (not held)', '')], async () => add(await benchErasure(ctx)));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  const seconds = now() - t0;
  const met = results.filter((r) => r.met === true).length;
  const missed = results.filter((r) => r.met === false).map((r) => r.figure);
  const skipped = results.filter((r) => r.value === null).map((r) => r.figure);
  process.stdout.write(`\n${results.length} figures in ${fmt(seconds)} s: ${met} met, ${missed.length} missed${missed.length ? ` (${missed.join('; ')})` : ''}, ${skipped.length} not measured${skipped.length ? ` (${skipped.join('; ')})` : ''}\n`);
  const end = { ...facts, loadEnd: loadavg().map((x) => x.toFixed(2)).join(' / ') };
  if (a.quick) process.stdout.write(`${QUICK_NOTICE}\n`);
  if (outPath) {
    mkdirSync(dirname(outPath), { recursive: true });
    writeFileSync(outPath, markdown(results, end, a, seconds, root) + '\n');
    process.stdout.write(`wrote ${outPath}\n`);
  }
}

/**
 * Re-run this script under node with --expose-gc (a full GC between timed
 * runs) and a larger old space (1,000,000 parsed entries are kept in memory).
 */
function reexec(): boolean {
  if (process.env.AER1_BENCH_CHILD === '1') return false;
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', ...process.execArgv, __filename, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, AER1_BENCH_CHILD: '1' },
  });
  process.exitCode = r.status ?? 1;
  return true;
}

if (require.main === module && !reexec()) {
  main().catch((e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
