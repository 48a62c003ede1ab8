/**
 * The monitor's decision (src/core/tlog/monitor.ts), given / when / then,
 * on trees built by the reference implementation (test/reference/rfc6962.ts):
 * first use, unchanged, rollback, same size with another root, growth with a
 * good proof, and every way the proof can lie.
 */
import { Checkpoint, compareCheckpoints, judgeGrowth } from '../../../src/core/tlog';
import { MTH, PROOF } from '../../reference/rfc6962';

const leaves = (n: number, salt = ''): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.from(`leaf ${i}${salt}`));
const cp = (d: Buffer[]): Checkpoint => ({ origin: 'example.test/log', size: d.length, rootHash: d.length ? MTH(d) : MTH([]), extensions: [] });

describe('the monitor decides', () => {
  const d = leaves(13);

  it('first use: nothing saved', () => {
    expect(compareCheckpoints(null, cp(d))).toEqual({ result: 'first_use' });
  });

  it('unchanged: the same size and root', () => {
    expect(compareCheckpoints(cp(d), cp(d))).toEqual({ result: 'unchanged' });
  });

  it('rollback: a smaller tree than one the log signed', () => {
    expect(compareCheckpoints(cp(d), cp(d.slice(0, 7)))).toEqual({ result: 'rollback', saved_size: 13, served_size: 7 });
  });

  it('fork: the same size, another root', () => {
    const step = compareCheckpoints(cp(d), cp(leaves(13, 'x')));
    expect(step).toMatchObject({ result: 'fork', code: 'same_size_other_root' });
  });

  it('growth asks for the proof from the saved size to the served one, and a true proof is consistent', () => {
    for (const m of [1, 2, 3, 7, 8, 12]) {
      const step = compareCheckpoints(cp(d.slice(0, m)), cp(d));
      expect(step).toEqual({ result: 'needs_proof', first: m, second: 13 });
      expect(judgeGrowth(cp(d.slice(0, m)), cp(d), PROOF(m, d))).toEqual({ result: 'consistent' });
    }
  });

  it('growth from an empty tree needs no proof', () => {
    expect(compareCheckpoints(cp([]), cp(d))).toEqual({ result: 'consistent' });
  });

  it.each([
    ['a proof for another history', () => PROOF(5, leaves(13, 'y'))],
    ['a proof with a hash flipped', () => PROOF(5, d).map((h, i) => (i === 0 ? Buffer.from(h.map((b) => b ^ 1)) : h))],
    ['a truncated proof', () => PROOF(5, d).slice(1)],
    ['an empty proof', () => []],
    ['a proof with an extra hash', () => [...PROOF(5, d), MTH(d)]],
  ])('fork: %s', (_name, proof) => {
    const step = judgeGrowth(cp(d.slice(0, 5)), cp(d), proof());
    expect(step).toMatchObject({ result: 'fork', code: 'consistency_proof_failed' });
    expect((step as { detail: string }).detail).toMatch(/^the log's consistency proof from size 5 to 13 does not verify \(\w+: /);
  });

  it('a served tree that rewrote the saved prefix is a fork even with the proof of its own history', () => {
    const other = [...leaves(5, 'z'), ...d.slice(5)];
    expect(judgeGrowth(cp(d.slice(0, 5)), cp(other), PROOF(5, other))).toMatchObject({ result: 'fork', code: 'consistency_proof_failed' });
  });
});
