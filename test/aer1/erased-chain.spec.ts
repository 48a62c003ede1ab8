/** TimelineVerifier.pushErased (issue 29): erased entries keep their place; their links are neither holding nor failing. */
import { chainVerdict, checkCommitment, entryDigest, jobAssessment, TimelineVerifier, ZERO_DIGEST } from '../../src/core/aer1';

function chain(n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= n; seq++) {
    const e: Record<string, unknown> = { seq, job_id: 'job-x', id: `00000000-0000-4000-8000-00000000000${seq}`, tool: 't', provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: Buffer.from(`out ${seq}`).toString('base64'), prev_digest: prev };
    if (seq === n) e.close = true;
    prev = entryDigest(e)!;
    out.push(e);
  }
  return out;
}

function run(entries: Record<string, unknown>[], erased: number[]) {
  const v = new TimelineVerifier({ collectEntries: true });
  entries.forEach((e, i) => (erased.includes(i + 1) ? v.pushErased({ seq: e.seq as number, close: e.close === true, provenance_class: e.provenance_class as string }) : v.push(e)));
  return v.finish();
}

describe('erased entries in a timeline', () => {
  it('one erased entry of four: never valid, partly_erased, 1 link re-checked and 2 not, final digest still recomputed', () => {
    const tl = chain(4);
    const r = run(tl, [2]);
    expect([r.verdict, r.reasons, chainVerdict(r)]).toEqual(['incomplete', [], 'partly_erased']);
    expect(r.erased).toEqual({ entries: 1, listed: ['entry 2 (seq 2)'], links_rechecked: 1, links_not_rechecked: 2 });
    expect(r.final_entry_digest).toBe(entryDigest(tl[3]));
    expect(r.construction).toBe('-07');
    expect(r.checks.find((c) => c.name === 'links')?.ok).toBeNull();
    expect(r.entries?.[1]).toEqual({ index: 1, seq: 2, entry_digest: null, output_hash: null, reasons: [] });
    expect(jobAssessment(chainVerdict(r), { status: 'absent', truncation_excluded: false })).toBe('partly_erased');
    // A commitment over it matches count and final digest, yet binds nothing: the chain cannot be re-checked whole.
    const c = checkCommitment(r, { job_id: 'job-x', final_entry_digest: r.final_entry_digest, entry_count: 4, published_at: '2026-10-01T12:00:00Z' });
    expect(c.binding).toBe(false);
    expect(c.checks.find((x) => x.name === 'timeline')).toEqual({ name: 'timeline', ok: null, detail: 'not evaluated: 1 of 4 entries erased (issue 29)' });
  });

  it('a broken link among held entries still fails: invalid wins over erased', () => {
    const tl = chain(4);
    tl[3].prev_digest = 'f'.repeat(64);
    const r = run(tl, [2]);
    expect(r.verdict).toBe('invalid');
    expect(r.reasons).toContain('link_mismatch');
    expect(chainVerdict(r)).toBe('invalid');
  });

  it('the first and last entries erased: genesis and final digest not evaluated, seq and close still checked', () => {
    const r = run(chain(3), [1, 3]);
    expect(r.checks.find((c) => c.name === 'genesis')).toEqual({ name: 'genesis', ok: null, detail: 'entry 1 was erased: its prev_digest cannot be re-checked' });
    expect([r.closed, r.final_entry_digest, chainVerdict(r)]).toEqual([true, null, 'partly_erased']);
    expect(r.erased).toMatchObject({ entries: 2, links_rechecked: 0, links_not_rechecked: 2 });
    const gap = new TimelineVerifier();
    gap.push(chain(3)[0]);
    gap.pushErased({ seq: 5, close: true, provenance_class: 'EXECUTED BY LEDGER' });
    expect(gap.finish().reasons).toEqual(['seq_not_contiguous']);
  });

  it('content checks never pass for erased content: partial holds only for the held entries, all erased is not evaluated', () => {
    const content = ['entries.objects', 'entries.members', 'entries.canonical_bytes'];
    const some = run(chain(4), [2, 3]);
    for (const name of content) expect(some.checks.find((c) => c.name === name)).toEqual({ name, ok: true, detail: 'holds for the 2 entries still held; 2 erased entries not re-checked' });
    const all = run(chain(3), [1, 2, 3]);
    for (const name of content) expect(all.checks.find((c) => c.name === name)).toEqual({ name, ok: null, detail: 'not re-checkable: the content of every entry (3) was erased' });
    // What the ledger still holds of an erased entry (seq, close, provenance class) is still checked.
    expect(all.checks.filter((c) => c.ok === true).map((c) => c.name)).toEqual(['non_empty', 'entries.seq', 'entries.close', 'entries.provenance_class', 'sequence', 'one_job', 'close_only_last', 'closed']);
    const none = run(chain(3), []);
    for (const name of content) expect(none.checks.find((c) => c.name === name)).toEqual({ name, ok: true });
  });
});
