/**
 * The evidence pack figure (issue 16): peak RSS of a process writing a job's
 * pack (GET /api/jobs/{id}/evidence's generator, read page by page) at 10,000
 * and 100,000 entries, side by side. Each job is seeded in one child process
 * (every entry its own event, then a checkpoint) and streamed in another,
 * measured alone (bench/pack-child.ts), on PostgreSQL. Flat memory: the
 * 100k peak within 1.5x of the 10k peak, and both runs completing again with the old
 * space capped at 64 MB (the live set does not grow with the job: the default peak is
 * mostly garbage V8 has not collected yet).
 */
import { join } from 'node:path';
import { createSigningKeyFile } from '../src/log/log-key';
import { createDb } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt } from './lib/measure';
import { runMeasured } from './lib/proc';

const CHILD = join(__dirname, 'pack-child.js');
/** The old-space cap of the second run (the app alone needs about 35 MB). */
const BOUNDED_HEAP_MB = 64;

export async function benchPack(ctx: BenchContext): Promise<FigureResult[]> {
  const sizes = ctx.quick ? [1_000, 10_000] : [10_000, 100_000];
  const rows: { entries: number; peak: number; bytes: number; lines: number; seconds: number; boundedPeak: number | null; boundedOk: boolean }[] = [];
  for (const n of sizes) {
    const db = await createDb('postgres', ctx.tmp, ctx.pgAdminUrl);
    const file = db.url;
    const keyFile = join(ctx.tmp, `pack-${n}.key`);
    createSigningKeyFile(keyFile, 'bench.pack');
    const env: NodeJS.ProcessEnv = { ...process.env, LEDGER_SIGNING_KEY_FILE: keyFile };
    delete env.NODE_OPTIONS;
    try {
    ctx.log(`pack: seeding a job of ${fmt(n)} entries`);
    const seed = await runMeasured(process.execPath, [CHILD, 'seed', file, String(n)], { cwd: ctx.root, tmp: ctx.tmp, env });
    if (seed.code !== 0) throw new Error(`seeding failed: ${seed.stderr.slice(0, 400)}`);
    ctx.log(`pack: streaming the pack of ${fmt(n)} entries`);
    const s = await runMeasured(process.execPath, [CHILD, 'stream', file], { cwd: ctx.root, tmp: ctx.tmp, env });
    if (s.code !== 0 || s.peakRss === null) throw new Error(`streaming failed: ${s.stderr.slice(0, 400)}`);
    const out = JSON.parse(s.stdout.trim()) as { bytes: number; lines: number };
    // The same with the old space capped: V8 grows its heap lazily when allocation is fast (the default peak is
    // mostly garbage not yet collected); a pack whose live memory grew with the job would not finish here.
    ctx.log(`pack: streaming again with --max-old-space-size=${BOUNDED_HEAP_MB}`);
    const b = await runMeasured(process.execPath, [`--max-old-space-size=${BOUNDED_HEAP_MB}`, CHILD, 'stream', file], { cwd: ctx.root, tmp: ctx.tmp, env });
    const bOut = b.code === 0 ? (JSON.parse(b.stdout.trim()) as { bytes: number }) : null;
    rows.push({ entries: n, peak: s.peakRss, bytes: out.bytes, lines: out.lines, seconds: s.seconds, boundedPeak: b.peakRss, boundedOk: bOut !== null && bOut.bytes === out.bytes });
    } finally {
      await db.drop();
    }
  }
  const [a, b] = rows;
  const ratio = b.peak / a.peak;
  const bounded = rows.every((r) => r.boundedOk);
  const mb = (x: number): string => (x / 1e6).toFixed(1);
  process.stdout.write(
    `\nevidence pack, peak RSS while streaming:\n  entries   peak RSS   with ${BOUNDED_HEAP_MB} MB old space   pack size   lines   time\n${rows
      .map((r) => `  ${fmt(r.entries).padStart(7)}   ${mb(r.peak).padStart(6)} MB   ${r.boundedOk ? `${mb(r.boundedPeak ?? 0).padStart(6)} MB (completed)` : 'FAILED'.padStart(16)}   ${mb(r.bytes).padStart(6)} MB   ${String(r.lines).padStart(6)}   ${r.seconds.toFixed(1)} s`)
      .join('\n')}\n`,
  );
  return [
    {
      figure: `evidence pack peak RSS, ${fmt(a.entries)} vs ${fmt(b.entries)} entries`,
      value: b.peak / 1e6,
      unit: 'MB',
      reference: { what: `peak RSS at ${fmt(a.entries)} entries`, value: a.peak / 1e6, unit: 'MB' },
      ratio,
      target: `<= 1.5x the smaller job, and both complete with ${BOUNDED_HEAP_MB} MB of old space (flat memory)`,
      met: ratio <= 1.5 && bounded,
      note: rows.map((r) => `${fmt(r.entries)} entries: peak RSS ${mb(r.peak)} MB, pack ${mb(r.bytes)} MB (${r.lines} lines) in ${r.seconds.toFixed(1)} s, with ${BOUNDED_HEAP_MB} MB old space ${r.boundedOk ? `peak RSS ${mb(r.boundedPeak ?? 0)} MB` : 'FAILED'}`).join('; ') + '. Each process holds the app (NestJS, the database) besides the pack; every entry is its own event with its inclusion proof.',
      details: {},
    },
  ];
}
