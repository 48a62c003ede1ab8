/**
 * Figure 3: the S8.1 Merkle root of N step receipt ids, against the SHA-256
 * floor: the same leaf inputs (the id strings) and the same node inputs (the
 * 64-byte concatenations of each level, precomputed) hashed alone, each
 * digest returned as a hex string (see lib/sha.ts).
 */
import { merkleRoot } from '../src/core/aer1';
import { stableUuid } from '../src/cli/generate';
import { BenchContext, FigureResult } from './lib/figure';
import { best, fmt, gc, now, pct, shortfall, sideBySide, spread } from './lib/measure';
import { createHashRaw, floorBuffer, floorHex, FLOOR_PRIMITIVE } from './lib/sha';

export const MERKLE_TARGET = 0.6;

export async function benchMerkle(ctx: BenchContext): Promise<FigureResult> {
  const n = ctx.quick ? 100_000 : 1_000_000;
  ctx.log(`merkle: ${fmt(n)} step ids`);
  const ids = Array.from({ length: n }, (_, i) => stableUuid(`bench-step/${i}`));

  // Precompute every node input (left || right, the last digest duplicated on odd levels).
  const nodeInputs: Buffer[] = [];
  let level = Buffer.concat(ids.map((id) => createHashRaw(id)));
  let count = n;
  while (count > 1) {
    const next = Math.ceil(count / 2);
    const out = Buffer.allocUnsafe(next * 32);
    for (let i = 0; i < next; i++) {
      const left = level.subarray(2 * i * 32, 2 * i * 32 + 32);
      const right = 2 * i + 1 < count ? level.subarray((2 * i + 1) * 32, (2 * i + 1) * 32 + 32) : left;
      const input = 2 * i + 1 < count ? level.subarray(2 * i * 32, 2 * i * 32 + 64) : Buffer.concat([left, right]);
      nodeInputs.push(input);
      createHashRaw(input).copy(out, i * 32);
    }
    level = out;
    count = next;
  }
  const expectedRoot = level.subarray(0, 32).toString('hex');
  if (merkleRoot(ids) !== expectedRoot) throw new Error('merkleRoot disagrees with the reference construction');

  let sink = 0;
  const core = (): void => {
    sink += (merkleRoot(ids) as string).length;
  };
  const floor = (): void => {
    for (let i = 0; i < n; i++) sink += floorHex(ids[i]).length;
    for (let i = 0; i < nodeInputs.length; i++) sink += floorHex(nodeInputs[i]).length;
  };
  const floorCh = (): void => {
    for (let i = 0; i < n; i++) sink += createHashRaw(ids[i])[0];
    for (let i = 0; i < nodeInputs.length; i++) sink += createHashRaw(nodeInputs[i])[0];
  };
  const floorBuf = (): void => {
    for (let i = 0; i < n; i++) sink += floorBuffer(ids[i])[0];
    for (let i = 0; i < nodeInputs.length; i++) sink += floorBuffer(nodeInputs[i])[0];
  };
  const s = await sideBySide(ctx.reps, core, floor);
  const ch: number[] = [];
  const bufRuns: number[] = [];
  for (let i = 0; i < Math.max(1, ctx.reps - 1); i++) {
    gc();
    let t0 = now();
    floorCh();
    ch.push(now() - t0);
    gc();
    t0 = now();
    floorBuf();
    bufRuns.push(now() - t0);
  }
  if (sink === 0) throw new Error('unreachable');
  const coreRate = n / s.a;
  const floorRate = n / s.b;
  const chRate = n / best(ch);
  const bufRate = n / best(bufRuns);
  const ratio = coreRate / floorRate;
  const met = ratio >= MERKLE_TARGET;
  return {
    figure: `Merkle root (S8.1) of ${fmt(n)} step ids`,
    value: coreRate,
    unit: 'leaves/s',
    reference: { what: `SHA-256 floor (${FLOOR_PRIMITIVE}) over the same ${fmt(n)} leaves and ${fmt(nodeInputs.length)} node inputs`, value: floorRate, unit: 'leaves/s' },
    ratio,
    target: `>= ${pct(MERKLE_TARGET)} of the floor`,
    met,
    note:
      `Bound by the cost around ${fmt(n + nodeInputs.length)} small SHA-256 calls (about 2 per leaf), not by SHA-256: the same hashes with each digest returned ` +
      `as a Buffer (an ArrayBuffer allocation per digest) run at ${fmt(bufRate)} leaves/s with crypto.hash (${pct(bufRate / floorRate)} of the floor) and ${fmt(chRate)} ` +
      `leaves/s with createHash (${pct(chRate / floorRate)}), so an implementation that takes its digests as Buffers stays near those. ` +
      (met ? `Target met (${pct(ratio)} >= ${pct(MERKLE_TARGET)}).` : `Target missed by ${shortfall(MERKLE_TARGET, ratio)} (${pct(ratio)} < ${pct(MERKLE_TARGET)}).`),
    details: { 'core runs': spread(s.aAll), 'floor runs': spread(s.bAll), 'crypto.hash with Buffer digests, leaves/s': Math.round(bufRate), 'createHash with Buffer digests, leaves/s': Math.round(chRate) },
  };
}
