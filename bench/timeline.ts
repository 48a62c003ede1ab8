/**
 * Figure 1: timeline verification in process (TimelineVerifier over parsed
 * entries), against the SHA-256 floor: the two hashes per entry the
 * verifier must compute (canonical bytes, S7.1 digest input), precomputed
 * and hashed alone.
 */
import { entryDigestInput, TimelineVerifier } from '../src/core/aer1';
import { GeneratedEntry, timelineEntries } from '../src/cli/generate';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt, best, now, pct, shortfall, sideBySide, spread, time } from './lib/measure';
import { createHashHex, floorHex, FLOOR_PRIMITIVE } from './lib/sha';

export const TIMELINE_TARGET = 0.4;

export interface TimelineFigures {
  result: FigureResult;
  /** Entries per second of the in-process core (the CLI figure's reference). */
  coreRate: number;
  entries: number;
}

export function timelineSize(ctx: BenchContext): number {
  return ctx.quick ? 100_000 : 1_000_000;
}

export async function benchTimeline(ctx: BenchContext): Promise<TimelineFigures> {
  const n = timelineSize(ctx);
  ctx.log(`timeline: generating ${fmt(n)} entries in memory`);
  const entries: GeneratedEntry[] = [];
  const gen = await time(() => {
    for (const e of timelineEntries({ entries: n, job: 'bench-job' })) entries.push(e);
  });

  // The floor's inputs: exactly the bytes and strings the verifier hashes.
  const bytes: Buffer[] = new Array(n);
  const inputs: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    bytes[i] = Buffer.from(e.canonical_bytes, 'base64');
    inputs[i] = entryDigestInput({
      close: e.close === true,
      id: e.id,
      job_id: e.job_id,
      output_hash: createHashHex(bytes[i]),
      prev_digest: e.prev_digest,
      provenance_class: e.provenance_class,
      seq: e.seq,
      tool: e.tool,
    });
  }

  let sink = 0;
  const core = (): void => {
    const v = new TimelineVerifier({ collectEntries: false });
    for (let i = 0; i < n; i++) v.push(entries[i]);
    const r = v.finish();
    if (r.verdict !== 'valid' || r.entry_count !== n) throw new Error(`timeline did not verify: ${r.verdict} ${r.reasons.join(',')}`);
    sink += r.entry_count;
  };
  const floor = (): void => {
    for (let i = 0; i < n; i++) {
      sink += floorHex(bytes[i]).length;
      sink += floorHex(inputs[i]).length;
    }
  };
  const floorCreateHash = (): void => {
    for (let i = 0; i < n; i++) {
      sink += createHashHex(bytes[i]).length;
      sink += createHashHex(inputs[i]).length;
    }
  };

  ctx.log(`timeline: core vs floor, ${ctx.reps} alternating runs`);
  const s = await sideBySide(ctx.reps, core, floor);
  const chTimes: number[] = [];
  for (let i = 0; i < Math.max(1, ctx.reps - 1); i++) {
    const t0 = now();
    floorCreateHash();
    chTimes.push(now() - t0);
  }
  const ch = best(chTimes);
  if (sink === 0) throw new Error('unreachable');

  const coreRate = n / s.a;
  const floorRate = n / s.b;
  const ratio = coreRate / floorRate;
  const met = ratio >= TIMELINE_TARGET;
  const chRate = n / ch;
  const note =
    `Each entry costs two SHA-256 calls (the floor: ${fmt(floorRate)} entries/s; the same hashes through a createHash object per call: ` +
    `${fmt(chRate)} entries/s, ${pct(chRate / floorRate)} of the floor) plus the verifier's own per-entry work: strict base64 validated and decoded in one pass, ` +
    `building the S7.1 input string (the floor hashes it precomputed and flat), member checks and bookkeeping (see the profile section). ` +
    (met ? `Target met (${pct(ratio)} >= ${pct(TIMELINE_TARGET)}).` : `Target missed by ${shortfall(TIMELINE_TARGET, ratio)} (${pct(ratio)} < ${pct(TIMELINE_TARGET)}).`);
  return {
    coreRate,
    entries: n,
    result: {
      figure: `timeline verification, core in process (${fmt(n)} entries)`,
      value: coreRate,
      unit: 'entries/s',
      reference: { what: `SHA-256 floor (${FLOOR_PRIMITIVE}) over the same canonical bytes and digest inputs`, value: floorRate, unit: 'entries/s' },
      ratio,
      target: `>= ${pct(TIMELINE_TARGET)} of the floor`,
      met,
      note,
      details: {
        'core runs': spread(s.aAll),
        'floor runs': spread(s.bAll),
        'createHash floor, entries/s': Math.round(chRate),
        'generation (s)': gen.seconds.toFixed(2),
      },
    },
  };
}
