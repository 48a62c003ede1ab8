/**
 * The batch verifier's memory (issue 26): peak RSS of `aer1 verify --batch
 * --json FILE` (a child process, bin/aer1, its stdout a pipe read and
 * dropped, as `aer1 ... | next`) on 100,000 and 1,000,000 lines of
 * `aer1 generate batch`, side by side in one run, alternating, 3 runs each
 * (the median is compared; every run is listed: the peak depends on when V8
 * collects garbage, which shifts with the machine's load). Flat memory: the
 * 1,000,000-line peak within 40 MB of the 100,000-line peak. Each size is also
 * run once with the old space capped at 32 MB: a live set that grew per line
 * would not finish there.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt } from './lib/measure';
import { runMeasured } from './lib/proc';

/** Allowed growth of the peak from the smaller to the larger batch. */
export const BATCH_RSS_GROWTH_LIMIT = 40e6;
const BOUNDED_HEAP_MB = 32;
const RUNS = 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export async function benchBatch(ctx: BenchContext): Promise<FigureResult[]> {
  const sizes = ctx.quick ? [10_000, 100_000] : [100_000, 1_000_000];
  const bin = join(ctx.root, 'bin', 'aer1');
  const files: string[] = [];
  for (const n of sizes) {
    const file = join(ctx.tmp, `batch-${n}.ndjson`);
    ctx.log(`batch: aer1 generate batch --lines ${fmt(n)} > ${file}`);
    const g = await runMeasured(process.execPath, [bin, 'generate', 'batch', '--lines', String(n)], { cwd: ctx.root, stdoutFile: file, tmp: ctx.tmp });
    if (g.code !== 0) throw new Error(`aer1 generate batch failed: ${g.stderr.slice(0, 400)}`);
    files.push(file);
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  const peaks: number[][] = sizes.map(() => []);
  const seconds: number[][] = sizes.map(() => []);
  const outBytes: number[] = sizes.map(() => 0);
  let rssSource = '';
  for (let rep = 0; rep < RUNS; rep++) {
    for (let i = 0; i < sizes.length; i++) {
      ctx.log(`batch: aer1 verify --batch --json (${fmt(sizes[i])} lines), run ${rep + 1} of ${RUNS}`);
      const r = await runMeasured(process.execPath, [bin, 'verify', '--batch', '--json', files[i]], { cwd: ctx.root, env, discardStdout: true, tmp: ctx.tmp });
      if (r.code !== 0 || r.peakRss === null) throw new Error(`aer1 verify --batch exited ${r.code}: ${r.stderr.slice(0, 400)}`);
      peaks[i].push(r.peakRss);
      seconds[i].push(r.seconds);
      outBytes[i] = r.stdoutBytes;
      rssSource = r.rssSource;
    }
  }
  const bounded: (number | null)[] = [];
  for (let i = 0; i < sizes.length; i++) {
    ctx.log(`batch: again with --max-old-space-size=${BOUNDED_HEAP_MB} (${fmt(sizes[i])} lines)`);
    const r = await runMeasured(process.execPath, [`--max-old-space-size=${BOUNDED_HEAP_MB}`, bin, 'verify', '--batch', '--json', files[i]], { cwd: ctx.root, env, discardStdout: true, tmp: ctx.tmp });
    bounded.push(r.code === 0 && r.stdoutBytes === outBytes[i] ? r.peakRss : null);
  }
  const mb = (x: number): string => (x / 1e6).toFixed(1);
  const [small, large] = peaks.map(median);
  const growth = large - small;
  const holds = growth <= BATCH_RSS_GROWTH_LIMIT && bounded.every((b) => b !== null);
  process.stdout.write(
    `\naer1 verify --batch --json, peak RSS (stdout a pipe, ${rssSource}):\n     lines   median   runs                      with ${BOUNDED_HEAP_MB} MB old space   output\n${sizes
      .map((n, i) => `  ${fmt(n).padStart(9)}   ${mb(median(peaks[i])).padStart(6)} MB   ${peaks[i].map(mb).join(', ').padEnd(24)}  ${bounded[i] === null ? 'FAILED'.padStart(9) : `${mb(bounded[i] as number).padStart(6)} MB`}   ${mb(outBytes[i])} MB`)
      .join('\n')}\n  difference (${fmt(sizes[1])} - ${fmt(sizes[0])}): ${mb(large)} - ${mb(small)} = ${mb(growth)} MB (limit ${mb(BATCH_RSS_GROWTH_LIMIT)} MB): ${holds ? 'target holds' : 'target DOES NOT HOLD'}${bounded.every((b) => b !== null) ? '' : ` (a run with ${BOUNDED_HEAP_MB} MB old space FAILED)`}\n`,
  );
  const inputMb = sizes.map((_, i) => mb(statSync(files[i]).size));
  return [
    {
      figure: `aer1 verify --batch --json peak RSS, ${fmt(sizes[1])} vs ${fmt(sizes[0])} lines`,
      value: large / 1e6,
      unit: 'MB',
      reference: { what: `peak RSS at ${fmt(sizes[0])} lines, same run (medians of ${RUNS})`, value: small / 1e6, unit: 'MB' },
      ratio: large / small,
      target: `within ${mb(BATCH_RSS_GROWTH_LIMIT)} MB of the ${fmt(sizes[0])}-line peak, and both complete with ${BOUNDED_HEAP_MB} MB of old space (flat memory)`,
      met: holds,
      note:
        sizes.map((n, i) => `${fmt(n)} lines (${inputMb[i]} MB in, ${mb(outBytes[i])} MB out): peak RSS ${peaks[i].map(mb).join(', ')} MB in ${seconds[i].map((s) => s.toFixed(1)).join(', ')} s; with ${BOUNDED_HEAP_MB} MB old space ${bounded[i] === null ? 'FAILED' : `${mb(bounded[i] as number)} MB`}`).join('; ') +
        `. Difference of the medians ${mb(growth)} MB. The file is read into one reused 1 MiB buffer and each line is verified and written before the next read (output waits for the pipe's drain), so the live set does not grow with the line count; the peak is the runtime plus garbage V8 has not collected yet.`,
      details: {},
    },
  ];
}
