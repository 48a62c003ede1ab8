/**
 * Quorum rules (src/core/tlog/quorum.ts: k-of-n groups of groups, the
 * Sigsum policy's quorum) against a reference written here differently: a
 * group holds when SOME k-subset of its members all hold (enumerated), and
 * the minimum is the smallest satisfying subset of the tree's witnesses
 * (enumerated over every subset).
 */
import fc from 'fast-check';
import { describeQuorum, kOfN, QuorumRule, QUORUM_NONE, quorumKeys, quorumMinimum, quorumReached } from '../../../src/core/tlog/quorum';

/** Every k-subset of 0..n-1. */
function subsets(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  if (n < k) return [];
  const withLast = subsets(n - 1, k - 1).map((s) => [...s, n - 1]);
  return [...subsets(n - 1, k), ...withLast];
}

function refReached(rule: QuorumRule, cosigned: ReadonlySet<string>): boolean {
  if (rule.kind === 'witness') return cosigned.has(rule.key);
  return subsets(rule.members.length, rule.k).some((pick) => pick.every((i) => refReached(rule.members[i], cosigned)));
}

function refMinimum(rule: QuorumRule): number {
  const keys = quorumKeys(rule);
  let best = Infinity;
  for (let mask = 0; mask < 1 << keys.length; mask++) {
    const set = new Set(keys.filter((_, i) => (mask >> i) & 1));
    if (set.size < best && refReached(rule, set)) best = set.size;
  }
  return best;
}

type Shape = { leaf: true } | { leaf: false; k: number; members: Shape[] };

/** Trees of at most ~10 witnesses, each witness once (names are a member of one group at most). */
const shape: fc.Arbitrary<Shape> = fc.letrec<{ node: Shape }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant<Shape>({ leaf: true }),
    fc.record({ leaf: fc.constant(false as const), k: fc.double({ min: 0, max: 1, noNaN: true }), members: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }).map((g) => ({ ...g, k: g.k })),
  ),
})).node;

function build(s: Shape, next: { n: number }, depth = 0): QuorumRule {
  if (s.leaf || depth > 3) {
    const i = next.n++;
    return { kind: 'witness', name: `w${i}`, key: `w${i}.example+0000000${i % 10}+KEY${i}` };
  }
  const members = s.members.map((m) => build(m, next, depth + 1));
  const k = Math.min(members.length, 1 + Math.floor(s.k * members.length));
  return { kind: 'group', name: `g${next.n}`, k, members };
}

const rules = shape.map((s) => build(s, { n: 0 })).filter((r) => quorumKeys(r).length <= 10);

describe('quorum rules (k-of-n groups of groups)', () => {
  it('quorumReached agrees with the k-subset reference on every set of cosigners, and optional witnesses never change it', () => {
    fc.assert(
      fc.property(rules, fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }), fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }), (rule, picks, optional) => {
        const keys = quorumKeys(rule);
        const set = new Set(keys.filter((_, i) => picks[i]));
        const reached = quorumReached(rule, set);
        expect(reached).toBe(refReached(rule, set));
        // Keys outside the tree (optional witnesses) do not count.
        expect(quorumReached(rule, new Set([...set, ...optional.map((o) => `optional:${o}`)]))).toBe(reached);
        // Monotone: every cosigner more keeps it reached.
        if (reached) expect(quorumReached(rule, new Set(keys))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('quorumMinimum is the smallest satisfying set of witnesses', () => {
    fc.assert(
      fc.property(rules, (rule) => {
        expect(quorumMinimum(rule)).toBe(refMinimum(rule));
      }),
      { numRuns: 300 },
    );
  });

  it("Sigsum's example: 2 of the X witnesses and 1 of the Y witnesses", () => {
    const w = (n: string): QuorumRule => ({ kind: 'witness', name: n, key: `${n}-key` });
    const x: QuorumRule = { kind: 'group', name: 'X-witnesses', k: 2, members: [w('X1'), w('X2'), w('X3')] };
    const y: QuorumRule = { kind: 'group', name: 'Y-witnesses', k: 1, members: [w('Y1'), w('Y2'), w('Y3')] };
    const rule: QuorumRule = { kind: 'group', name: 'X-and-Y', k: 2, members: [x, y] };
    const has = (...names: string[]) => quorumReached(rule, new Set(names.map((n) => `${n}-key`)));
    expect([has('X1', 'X3', 'Y2'), has('X1', 'X2'), has('X1', 'Y1', 'Y2', 'Y3'), has('X2', 'X3', 'Y3'), has()]).toEqual([true, false, false, true, false]);
    expect(quorumMinimum(rule)).toBe(3);
    expect(describeQuorum(rule)).toBe('all of (X-witnesses: 2 of (X1, X2, X3), Y-witnesses: any of (Y1, Y2, Y3))');
  });

  it('none always holds and needs no cosignature; k of n counts k', () => {
    expect([quorumReached(QUORUM_NONE, new Set()), quorumMinimum(QUORUM_NONE), describeQuorum(QUORUM_NONE)]).toEqual([true, 0, 'none']);
    const r = kOfN('WITNESSES', 2, [
      { name: 'a', key: 'ka' },
      { name: 'b', key: 'kb' },
      { name: 'c', key: 'kc' },
    ]);
    expect([quorumReached(r, new Set(['ka'])), quorumReached(r, new Set(['ka', 'kc'])), quorumMinimum(r), describeQuorum(r)]).toEqual([false, true, 2, '2 of (a, b, c)']);
  });
});
