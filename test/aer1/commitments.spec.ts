/**
 * assessCommitments: every endpoint commitment of a job judged together
 * (src/core/aer1/commitments.ts). A commitment that shows truncation or a
 * substituted entry is a finding no binding commitment hides.
 */
import { assessCommitments, checkCommitment, CommitmentOutcome, earlierCounts, entryDigest, RecordedCommitment, verifyTimeline, ZERO_DIGEST } from '../../src/core/aer1';
import { buildTimeline, commitmentFor } from '../coverage/fixtures';

const JOB = 'job-assess';
const TOOLS = ['a', 'b', 'c', 'd', 'e', 'f'].map((tool) => ({ tool }));
const SIX = buildTimeline(JOB, TOOLS);
const EIGHT = buildTimeline(JOB, [...TOOLS, { tool: 'g' }, { tool: 'h' }]);
const TL = verifyTimeline(SIX, { collectEntries: false });
const DIGESTS = new Map(earlierCounts(TL, [1, 2, 3, 4, 5].map((k) => ({ id: null, value: { entry_count: k } }))).map((k) => [k, entryDigest(SIX[k - 1])]));

/** One commitment of each kind against the visible six-entry timeline. */
const KINDS: Record<string, { value: unknown; outcome: CommitmentOutcome }> = {
  binding: { value: commitmentFor(SIX), outcome: 'binding' },
  truncation: { value: commitmentFor(EIGHT), outcome: 'truncation_detected' },
  final_substituted: { value: commitmentFor(buildTimeline(JOB, [...TOOLS.slice(0, 5), { tool: 'x' }])), outcome: 'final_entry_substituted' },
  entry_substituted: { value: commitmentFor(buildTimeline(JOB, [...TOOLS.slice(0, 3), { tool: 'x' }])), outcome: 'entry_substituted' },
  earlier_ok: { value: commitmentFor(SIX.slice(0, 4)), outcome: 'earlier_checkpoint' },
  other_job: { value: { ...commitmentFor(SIX), job_id: 'job-other' }, outcome: 'other_job' },
  invalid: { value: { ...commitmentFor(SIX), entry_count: '6' }, outcome: 'invalid_commitment' },
};
const CONTRADICTING = ['truncation', 'final_substituted', 'entry_substituted'];
const SEVERITY = ['truncation_detected', 'final_entry_substituted', 'entry_substituted'];

const rc = (name: string, k: number): RecordedCommitment => ({ id: `c${k}-${name}`, value: KINDS[name].value, position: 100 + k });

describe('assessCommitments', () => {
  it('absent: nothing recorded, truncation not excluded', () => {
    expect(assessCommitments(TL, [])).toEqual({ status: 'absent', truncation_excluded: false, binding_attestation: null, binding: [], findings: [], commitments: [] });
  });

  it.each(Object.entries(KINDS))('one commitment, %s', (name, k) => {
    const a = assessCommitments(TL, [rc(name, 1)], { digest_at: DIGESTS });
    expect(a.commitments[0].outcome).toBe(k.outcome);
    expect(a.commitments[0].contradicts).toBe(CONTRADICTING.includes(name));
    expect(a.truncation_excluded).toBe(name === 'binding');
    expect(a.status).toBe(name === 'binding' ? 'binding' : CONTRADICTING.includes(name) ? k.outcome : 'non_binding');
    expect(a.findings.map((f) => [f.code, f.commitment_id, f.position])).toEqual(CONTRADICTING.includes(name) ? [[k.outcome, `c1-${name}`, 101]] : []);
    // Each commitment's own check is checkCommitment's, unchanged (the corpus verdicts rest on it).
    expect(a.commitments[0].check).toEqual(checkCommitment(TL, k.value));
  });

  const names = Object.keys(KINDS);
  const pairs = names.flatMap((x) => names.map((y) => [x, y]));
  it.each(pairs)('two commitments, %s then %s: no binding one hides a contradiction', (x, y) => {
    const a = assessCommitments(TL, [rc(x, 1), rc(y, 2)], { digest_at: DIGESTS });
    const list = [x, y];
    const contradictions = list.filter((n) => CONTRADICTING.includes(n));
    expect(a.commitments.map((c) => c.outcome)).toEqual([KINDS[x].outcome, KINDS[y].outcome]);
    expect(a.truncation_excluded).toBe(list.includes('binding') && contradictions.length === 0);
    expect(a.binding).toEqual(list.flatMap((n, i) => (n === 'binding' ? [`c${i + 1}-${n}`] : [])));
    expect(a.findings.map((f) => f.code)).toEqual(contradictions.map((n) => KINDS[n].outcome));
    const expected = contradictions.length ? SEVERITY.find((s) => contradictions.some((n) => KINDS[n].outcome === s)) : list.includes('binding') ? 'binding' : 'non_binding';
    expect(a.status).toBe(expected);
  });

  it('all kinds at once: the most severe contradiction, every finding listed, the binding one named but excluding nothing', () => {
    const a = assessCommitments(TL, names.map((n, i) => rc(n, i + 1)), { digest_at: DIGESTS });
    expect(a.status).toBe('truncation_detected');
    expect(a.truncation_excluded).toBe(false);
    expect(a.binding).toEqual(['c1-binding']);
    expect(a.findings.map((f) => f.code)).toEqual(['truncation_detected', 'final_entry_substituted', 'entry_substituted']);
    expect(a.commitments[1]).toMatchObject({ missing_entries: 2 });
    expect(a.findings[0].message).toBe('commitment c2-truncation: truncation detected: the commitment counts 8 entries, 6 are visible (2 missing from the end or rebuilt away)');
  });

  it('an earlier checkpoint: consistent when its digest is that entry of the chain, a substitution when not, not compared without the digest', () => {
    const ok = assessCommitments(TL, [rc('earlier_ok', 1)], { digest_at: DIGESTS }).commitments[0];
    expect(ok).toMatchObject({ outcome: 'earlier_checkpoint', contradicts: false, binding: false, chain_digest_at_count: entryDigest(SIX[3]) });
    const bad = assessCommitments(TL, [rc('entry_substituted', 1)], { digest_at: DIGESTS }).commitments[0];
    expect(bad).toMatchObject({ outcome: 'entry_substituted', contradicts: true, chain_digest_at_count: entryDigest(SIX[3]) });
    const blind = assessCommitments(TL, [rc('entry_substituted', 1)]).commitments[0];
    expect(blind).toMatchObject({ outcome: 'earlier_checkpoint', contradicts: false, chain_digest_at_count: null });
    expect(blind.detail).toMatch(/was not compared/);
    expect(earlierCounts(TL, [rc('earlier_ok', 1), rc('entry_substituted', 2), rc('binding', 3), rc('truncation', 4), rc('invalid', 5)])).toEqual([4]);
  });

  it('a commitment for zero entries is compared with the genesis zeros', () => {
    const zero = (d: string) => ({ id: 'z', value: { job_id: JOB, final_entry_digest: d, entry_count: 0, published_at: '2026-10-01T12:00:00Z' } });
    expect(assessCommitments(TL, [zero(ZERO_DIGEST)]).commitments[0].outcome).toBe('earlier_checkpoint');
    expect(assessCommitments(TL, [zero('1'.repeat(64))]).commitments[0].outcome).toBe('entry_substituted');
  });

  it('a timeline that does not verify: nothing binds, but a larger count still proves truncation', () => {
    const open = verifyTimeline(SIX.slice(0, 5).map((e) => ({ ...e })), { collectEntries: false });
    expect(open.verdict).toBe('invalid');
    const same = assessCommitments(open, [{ id: 'a', value: commitmentFor(SIX.slice(0, 5)) }]);
    expect(same).toMatchObject({ status: 'non_binding', truncation_excluded: false });
    expect(same.commitments[0].outcome).toBe('non_binding');
    const more = assessCommitments(open, [{ id: 'a', value: commitmentFor(SIX.slice(0, 5)) }, { id: 'b', value: commitmentFor(SIX) }]);
    expect(more).toMatchObject({ status: 'truncation_detected', truncation_excluded: false });
  });

  it('an empty timeline judged for a named job: a commitment counting entries proves truncation', () => {
    const empty = verifyTimeline([], { collectEntries: false });
    const a = assessCommitments(empty, [{ id: 'w', value: commitmentFor(SIX) }], { job_id: JOB });
    expect(a.commitments[0]).toMatchObject({ outcome: 'truncation_detected', missing_entries: 6 });
    expect(assessCommitments(empty, [{ id: 'w', value: commitmentFor(SIX) }], { job_id: 'job-else' }).commitments[0].outcome).toBe('other_job');
  });

  // Issue 15 changed this: a witness named by an unsigned commitment is the poster's claim, never "published by".
  it('carries witness metadata from the commitment or its envelope into the binding detail, as the poster\'s claim', () => {
    const a = assessCommitments(TL, [{ id: 'w', value: commitmentFor(SIX), envelope: { witness: 'witness.example' } }]);
    expect(a.commitments[0].check.witness).toEqual({ witness: 'witness.example' });
    expect(a.commitments[0].attestation.kind).toBe('self_asserted');
    expect(a.binding_attestation).toBe('self_asserted');
    expect(a.commitments[0].detail).toMatch(/self-asserted: posted by whoever gave it.*it names witness "witness.example": the poster's claim, not checked/);
    expect(a.commitments[0].detail).not.toMatch(/published by/);
  });
});
