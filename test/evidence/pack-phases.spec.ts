/**
 * The pack check's phases in core (src/core/pack/check.ts) over an async
 * iterable of lines, in process: no file, no server. Every failure is one of
 * the closed set of codes (PACK_CHECKS).
 */
import { checkPack, PACK_CHECKS, PackDeps } from '../../src/core/pack/check';
import { PackWriter } from '../../src/core/pack/format';
import { generateSignerKey, parseVerifierKey } from '../../src/core/tlog';
import { parseJsonBytes } from '../../src/cli/input';
import { parseLeaf, withPayload } from '../../src/core/ledger/leaf';
import { quorumCheck, TrustPolicy } from '../../src/core/tlog/quorum';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packText } from '../../src/cli/commands/verify-pack';

const deps: PackDeps = {
  parseJson: parseJsonBytes,
  parseLeaf,
  withPayload,
  quorumCheck: (note, policy) => quorumCheck(note, policy as TrustPolicy),
  timestamp: () => Promise.reject(new Error('no token in these packs')),
};

async function* linesOf(text: string): AsyncGenerator<Buffer> {
  for (const l of text.split('\n')) yield Buffer.from(l, 'utf8');
}

const policy = (): TrustPolicy => ({ log: parseVerifierKey(generateSignerKey('ledger.test').verifierKey), witnesses: [], quorum: 0 });

describe('checkPack over lines', () => {
  it('a pack of a header only: every failure named by member and code, not verified', async () => {
    const w = new PackWriter();
    const text = (w.member({ member: 'header', format: 'aer1-evidence-pack/1', subject: { kind: 'job', id: 'job-1' } }) + w.finish()).trimEnd();
    const r = await checkPack(linesOf(text), policy(), deps);
    expect([r.verified, r.is_pack, r.subject, r.counts.members]).toEqual([false, true, { kind: 'job', id: 'job-1' }, 1]);
    // A job pack without entries is also a forgery stripped of them (the ledger serves none): a second failure, named;
    // and without a stream-heads statement nothing shows it whole (issue 30): a third.
    expect(r.failures.map((f) => [f.member, f.check])).toEqual([
      ['log/checkpoint', 'checkpoint_signature'],
      ['header', 'subject'],
      ['log/stream-heads', 'stream_heads'],
    ]);
    expect(r.completeness).toEqual({ statements: 0, streams: 0, proven: false, not_provable_before: null });
    expect(r.passed).toEqual({ manifest: 2 });
  });

  it('a line that is not JSON and an empty line are format failures; a cut pack has no final manifest', async () => {
    const r = await checkPack(linesOf('{"member":"header","format":"aer1-evidence-pack/1","subject":{"kind":"job","id":"j"}}\n\nnot json'), policy(), deps);
    expect(r.failures.map((f) => [f.member, f.check])).toEqual([
      ['line 2', 'format'],
      ['line 3', 'format'],
      ['manifest', 'manifest'],
      ['log/checkpoint', 'checkpoint_signature'],
      ['header', 'subject'],
      ['log/stream-heads', 'stream_heads'],
    ]);
    for (const f of r.failures) expect(PACK_CHECKS).toContain(f.check);
  });
});

describe('what a pack that does not verify says (the tampering vectors\' base pack, one line deleted)', () => {
  const dir = join(__dirname, '../vectors/pack');
  const base = readFileSync(join(dir, 'base.aer1pack.jsonl'), 'utf8').trimEnd();
  const logPolicy = (): TrustPolicy => ({ log: parseVerifierKey(readFileSync(join(dir, 'log.vkey'), 'utf8').trim()), witnesses: [], quorum: 0 });
  const kinds = (c: Record<string, number>) => c.header + c.log + c.events + c.receipts + c.entries + c.commitments + c.workflows + c.plans + c.reports + c.outcomes + c.other;

  it('verified: the subject report\'s conclusion is established; the members line adds up to the total and, with the chunks, to the manifest passes', async () => {
    const r = await checkPack(linesOf(base), logPolicy(), deps);
    expect(r.verified).toBe(true);
    expect(r.subject_result).toMatchObject({ established: true });
    const c = r.counts as unknown as Record<string, number>;
    expect([c.members, c.header, c.log, c.other, c.manifest_chunks]).toEqual([44, 1, 3, 0, 1]);
    expect(kinds(c)).toBe(c.members);
    expect(r.passed.manifest).toBe(c.members + c.manifest_chunks);
    const text = packText(r, 'base.aer1pack.jsonl');
    expect(text).toContain('Members: 44 (1 header, 3 log (key, checkpoint, timestamp, Nostr anchor, stream heads), 20 events, 8 receipts, 8 entries, 2 commitments, 0 workflow receipts, 1 plan versions, 1 coverage reports, 0 outcome reports); with 1 manifest chunk and the final manifest\n');
    expect(text).toContain('members and manifest chunks match the manifest (SHA-256): 45 passed');
    expect(text).toMatch(/\nResult: VERIFIED .*\nNewest report in this pack: coverage report \S+ concludes: /); // a job pack: its subject is the job
    expect(text).not.toContain('not established');
  });

  it('a receipt line deleted: the conclusion is not established (text and JSON), the missing member is listed as not checked, the counts still add up', async () => {
    const lines = base.split('\n');
    const at = lines.findIndex((l) => l.startsWith('{"member":"receipt/'));
    const gone = (JSON.parse(lines[at]) as { member: string }).member;
    const r = await checkPack(linesOf(lines.filter((_, k) => k !== at).join('\n')), logPolicy(), deps);
    expect([r.verified, r.failures.map((f) => [f.member, f.check])]).toEqual([false, [[gone, 'member_missing']]]);
    expect(r.subject_result).toMatchObject({ result: r.subject_result!.result, established: false });
    expect(r.not_checked).toContain(`${gone} (missing): listed in the manifest but not in the pack, so nothing it holds is checked`);
    const c = r.counts as unknown as Record<string, number>;
    expect([c.members, c.receipts]).toEqual([43, 7]);
    expect(kinds(c)).toBe(c.members);
    const text = packText(r, 'cut.aer1pack.jsonl');
    const out = text.split('\n');
    const result = out.findIndex((l) => l.startsWith('Result: NOT VERIFIED (1 failure)'));
    expect(result).toBeGreaterThan(0);
    expect(out[result + 1]).toMatch(new RegExp(`^Newest report in this pack: coverage report ${r.subject_result!.report_id} states .+ — not established: this pack did not verify$`)); // a job pack: its subject is the job
    expect(text).not.toContain('concludes:');
    expect(text).toContain(`Not checked:\n  – ${gone} (missing): listed in the manifest`);
    // The streams are not shown whole while a listed member is missing (the auditor's trial); the report still
    // recomputes, from the receipt's event, which is held.
    expect([r.completeness.proven, r.reports.map((x) => x.recomputed === x.digest)]).toEqual([false, [true]]);
    expect(text).toContain('  completeness: NOT SHOWN (1 statement naming ');
    // Its event deleted too: the report's inputs are incomplete, so no digest is shown as its recomputation.
    const ev = lines.findIndex((l) => l.startsWith('{"member":"event/') && Buffer.from((JSON.parse(l) as { leaf: string }).leaf, 'base64').toString('utf8').includes(`"receipt:${gone.slice('receipt/'.length)}"`));
    const r2 = await checkPack(linesOf(lines.filter((_, k) => k !== at && k !== ev).join('\n')), logPolicy(), deps);
    expect([r2.completeness.proven, r2.reports.map((x) => x.recomputed)]).toEqual([false, [null]]);
    expect(packText(r2, 'cut2.aer1pack.jsonl')).toContain(', not recomputed');
  });
});
