/**
 * Figure: RFC 6962 tree integration (src/core/tlog TreeIntegrator) of N
 * leaves, appended in batches of 1,024 as a log integrating its new entries
 * would, every leaf hash and every completed subtree hash written to the
 * batch of nodes to store, against the SHA-256 floor: the same N leaf inputs
 * (0x00 || 32-byte entry) and N - popcount(N) node inputs
 * (0x01 || left || right, precomputed) hashed alone, each digest returned as
 * a hex string (see lib/sha.ts). About 2 hashes per leaf on both sides.
 */
import { TreeIntegrator } from '../src/core/tlog';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt, pct, shortfall, sideBySide, spread } from './lib/measure';
import { floorBuffer, floorHex, FLOOR_PRIMITIVE } from './lib/sha';

export const TLOG_INTEGRATE_TARGET = 0.5;
const BATCH = 1024;

export async function benchTlogIntegrate(ctx: BenchContext): Promise<FigureResult> {
  const n = ctx.quick ? 100_000 : 1_000_000;
  ctx.log(`tree integration: ${fmt(n)} leaves`);
  const leaves = Array.from({ length: n }, (_, i) => floorBuffer(`bench-tlog-leaf/${i}`));
  const batches: Buffer[][] = [];
  for (let i = 0; i < n; i += BATCH) batches.push(leaves.slice(i, i + BATCH));

  // The floor's inputs, and an independent root: every level of complete subtrees, built by the floor primitive.
  const leafInputs = leaves.map((l) => Buffer.concat([Buffer.from([0]), l]));
  const nodeInputs: Buffer[] = [];
  let level = leafInputs.map((x) => floorBuffer(x));
  const edges: Buffer[] = []; // the last node of each odd-length level: the right edge, smallest first
  while (level.length > 1) {
    if (level.length % 2 === 1) edges.push(level[level.length - 1]);
    const next: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) {
      const input = Buffer.concat([Buffer.from([1]), level[i], level[i + 1]]);
      nodeInputs.push(input);
      next.push(floorBuffer(input));
    }
    level = next;
  }
  // The root folds the right edge from the right, the largest complete subtree leftmost.
  const edge = [level[0], ...edges.reverse()];
  let expected = edge[edge.length - 1];
  for (let j = edge.length - 2; j >= 0; j--) expected = floorBuffer(Buffer.concat([Buffer.from([1]), edge[j], expected]));
  let stored = 0;
  const integrate = (): Buffer => {
    const t = TreeIntegrator.empty();
    let root: Buffer = Buffer.alloc(0);
    for (const b of batches) {
      const r = t.appendLeaves(b);
      stored += r.nodes.hashes.length / 32; // the bytes to store, materialized
      root = r.root;
    }
    return root;
  };
  const root = integrate();
  if (!root.equals(expected)) throw new Error('TreeIntegrator root disagrees with the level-by-level reference');
  if (stored !== 2 * n - popcount(n)) throw new Error(`stored ${stored} nodes, expected ${2 * n - popcount(n)}`);

  let sink = 0;
  const core = (): void => {
    sink += integrate()[0];
  };
  const floor = (): void => {
    for (let i = 0; i < leafInputs.length; i++) sink += floorHex(leafInputs[i]).length;
    for (let i = 0; i < nodeInputs.length; i++) sink += floorHex(nodeInputs[i]).length;
  };
  const s = await sideBySide(ctx.reps, core, floor);
  if (sink === 0) throw new Error('unreachable');
  const coreRate = n / s.a;
  const floorRate = n / s.b;
  const ratio = coreRate / floorRate;
  const met = ratio >= TLOG_INTEGRATE_TARGET;
  return {
    figure: `tree integration (RFC 6962, stored nodes), ${fmt(n)} leaves`,
    value: coreRate,
    unit: 'leaves/s',
    reference: { what: `SHA-256 floor (${FLOOR_PRIMITIVE}) over the same ${fmt(n)} leaf inputs and ${fmt(nodeInputs.length)} node inputs`, value: floorRate, unit: 'leaves/s' },
    ratio,
    target: `>= ${pct(TLOG_INTEGRATE_TARGET)} of the floor`,
    met,
    note:
      `Batches of ${fmt(BATCH)} leaves; each leaf and each completed subtree (${fmt(2 * n - popcount(n))} nodes) is written into the batch's column buffers ` +
      `(digests taken as latin1 strings and joined into one buffer per batch, no Buffer per digest); the right edge stays in memory, so no reads. ` +
      (met ? `Target met (${pct(ratio)} >= ${pct(TLOG_INTEGRATE_TARGET)}).` : `Target missed by ${shortfall(TLOG_INTEGRATE_TARGET, ratio)} (${pct(ratio)} < ${pct(TLOG_INTEGRATE_TARGET)}).`),
    details: { 'core runs': spread(s.aAll), 'floor runs': spread(s.bAll), 'stored nodes': 2 * n - popcount(n) },
  };
}

function popcount(x: number): number {
  let c = 0;
  for (; x > 0; x = Math.floor(x / 2)) c += x % 2;
  return c;
}
