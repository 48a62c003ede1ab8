/**
 * The evidence pack figure (issue 16): peak RSS of a process writing a job's
 * pack (GET /api/jobs/{id}/evidence's generator, read page by page) at 10,000
 * and 100,000 entries, side by side. Each job is seeded in one child process
 * (every entry its own event, then a checkpoint) and streamed in another,
 * measured alone (bench/pack-child.ts), on PostgreSQL. Flat memory: the
 * 100k peak within 1.5x of the 10k peak.
 */
import { join } from 'node:path';
import { createSigningKeyFile } from '../src/log/log-key';
import { createDb } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt } from './lib/measure';
import { runMeasured } from './lib/proc';

const CHILD = join(__dirname, 'pack-child.js');

export async function benchPack(ctx: BenchContext): Promise<FigureResult[]> {
  const sizes = ctx.quick ? [1_000, 10_000] : [10_000, 100_000];
  const rows: { entries: number; peak: number; bytes: number; lines: number; seconds: number }[] = [];
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
    rows.push({ entries: n, peak: s.peakRss, bytes: out.bytes, lines: out.lines, seconds: s.seconds });
    } finally {
      await db.drop();
    }
  }
  const [a, b] = rows;
  const ratio = b.peak / a.peak;
  const mb = (x: number): string => (x / 1e6).toFixed(1);
  process.stdout.write(`\nevidence pack, peak RSS while streaming:\n  entries   peak RSS   pack size   lines   time\n${rows.map((r) => `  ${fmt(r.entries).padStart(7)}   ${mb(r.peak).padStart(6)} MB   ${mb(r.bytes).padStart(6)} MB   ${String(r.lines).padStart(6)}   ${r.seconds.toFixed(1)} s`).join('\n')}\n`);
  return [
    {
      figure: `evidence pack peak RSS, ${fmt(a.entries)} vs ${fmt(b.entries)} entries`,
      value: b.peak / 1e6,
      unit: 'MB',
      reference: { what: `peak RSS at ${fmt(a.entries)} entries`, value: a.peak / 1e6, unit: 'MB' },
      ratio,
      target: '<= 1.5x the smaller job (flat memory)',
      met: ratio <= 1.5,
      note: rows.map((r) => `${fmt(r.entries)} entries: peak RSS ${mb(r.peak)} MB, pack ${mb(r.bytes)} MB (${r.lines} lines) in ${r.seconds.toFixed(1)} s`).join('; ') + '. Each process holds the app (NestJS, the database) besides the pack; every entry is its own event with its inclusion proof.',
      details: {},
    },
  ];
}
