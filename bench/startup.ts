/**
 * Figure: the offline verifier's start-up. `aer1 --version` and `aer1 verify
 * examples/receipt-core.json` against `node -e 0`, alternating in one run:
 * wall time (best of N) and peak RSS (largest of N). Targets (issue 28): at
 * most 4x the wall time and 1.5x the peak memory of bare Node.
 */
import { join } from 'node:path';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt } from './lib/measure';
import { runMeasured } from './lib/proc';

interface Sample {
  seconds: number[];
  rss: number[];
}

/** Run the three commands `reps` times each, alternating, and report both figures per aer1 command. */
export async function benchStartup(ctx: BenchContext): Promise<FigureResult[]> {
  const aer1 = join(ctx.root, 'bin', 'aer1');
  const commands: Record<string, string[]> = {
    'node -e 0': ['-e', '0'],
    'aer1 --version': [aer1, '--version'],
    'aer1 verify examples/receipt-core.json': [aer1, 'verify', join(ctx.root, 'examples', 'receipt-core.json')],
  };
  const samples: Record<string, Sample> = {};
  for (const k of Object.keys(commands)) samples[k] = { seconds: [], rss: [] };
  const reps = Math.max(5, ctx.reps * 2);
  for (let i = 0; i < reps; i++) {
    for (const [name, args] of Object.entries(commands)) {
      const r = await runMeasured(process.execPath, args, { cwd: ctx.root, tmp: ctx.tmp });
      if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr.slice(0, 400)}`);
      samples[name].seconds.push(r.seconds);
      if (r.peakRss !== null) samples[name].rss.push(r.peakRss);
    }
  }
  const bestS = (s: Sample): number => Math.min(...s.seconds);
  const peak = (s: Sample): number => Math.max(...s.rss);
  const base = samples['node -e 0'];
  const out: FigureResult[] = [];
  for (const name of ['aer1 --version', 'aer1 verify examples/receipt-core.json']) {
    const s = samples[name];
    const tRatio = bestS(s) / bestS(base);
    out.push({
      figure: `${name}: start-up wall time`,
      value: bestS(s) * 1000,
      unit: 'ms',
      reference: { what: 'node -e 0, same run', value: bestS(base) * 1000, unit: 'ms' },
      ratio: tRatio,
      target: '<= 4x node -e 0',
      met: tRatio <= 4,
      note: `best of ${reps}, alternating with node -e 0; all (ms): ${s.seconds.map((x) => fmt(x * 1000)).join(', ')}`,
    });
    if (s.rss.length && base.rss.length) {
      const mRatio = peak(s) / peak(base);
      out.push({
        figure: `${name}: peak RSS`,
        value: peak(s) / 2 ** 20,
        unit: 'MB',
        reference: { what: 'node -e 0, same run', value: peak(base) / 2 ** 20, unit: 'MB' },
        ratio: mRatio,
        target: '<= 1.5x node -e 0',
        met: mRatio <= 1.5,
        note: `largest of ${reps}; the CLI loads no server code (Nest, TypeORM, drivers, BullMQ): test/cli/startup.e2e-spec.ts`,
      });
    }
  }
  return out;
}
