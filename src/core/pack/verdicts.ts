/**
 * The verdicts phase (`aer1_verdict`): the timeline chain (S7) with every
 * endpoint commitment, and the workflow in force, judged by the core.
 * (Receipts and outcome reports are judged in the records phase, each as it
 * is read against its event.)
 */
import { verifyWorkflow } from '../aer1';
import { commitmentOf } from '../coverage/assemble';
import { timelineIntegrity } from '../coverage/integrity';
import type { PackRecords } from './members';
import { parseText, Tally } from './result';

/** The timeline chain's verdict, null when the pack holds no entry or its entries cannot be judged (said in `not_checked`). */
export function timelineVerdict(r: PackRecords, subject: { kind: string; id: string } | null, missing: ReadonlySet<string>, t: Tally): string | null {
  if (r.entries.length === 0) return null;
  const bySeq = [...r.entries].sort((a, b) => a.seq - b.seq);
  const seqs = bySeq.map((e) => e.seq);
  const jobId = subject?.kind === 'job' ? subject.id : '';
  const ok = seqs.every((s, k) => s === k + 1);
  const entryMissing = [...missing].some((x) => x.startsWith('entry/') || x.startsWith('commitment/'));
  if (entryMissing) t.notChecked.push('the timeline chain (S7): an entry or commitment member the manifest lists is missing from the pack');
  else if (!ok) t.fail('timeline', 'aer1_verdict', `the entries are not seq 1..${seqs.length} (an entry is missing, repeated or renumbered)`);
  if (entryMissing || !bySeq.every((e) => e.raw !== null) || !r.commitments.every((c) => c.raw !== null)) return null;
  const list = bySeq.map((e) => parseText(e.raw));
  const cs = r.commitments.map((c) => ({ id: c.id, ...commitmentOf(parseText(c.raw)), recorded_position: c.position }));
  const integ = timelineIntegrity(jobId, list, cs).integrity;
  if (integ.verdict === 'valid') t.pass('aer1_verdict');
  else t.fail(`timeline (entry/1..entry/${seqs.length})`, 'aer1_verdict', `the chain's AER-1 verdict is ${String(integ.verdict)} (${integ.reasons.join(', ')})`);
  for (const ci of integ.commitments) {
    if (ci.contradicts) t.fail(r.commitments.find((c) => ci.commitment.includes(c.id))?.member ?? `commitment ${ci.commitment}`, 'aer1_verdict', `${ci.outcome}: the commitment contradicts the timeline`);
  }
  return integ.verdict;
}

/** The workflow's verdict: the one recorded last in the ledger (highest position), whatever the file order; null when none or withheld. */
export function workflowVerdict(r: PackRecords, receiptDocs: ReadonlyMap<string, unknown>, t: Tally): string | null {
  if (r.workflows.length === 0) return null;
  const last = r.workflows.reduce((a, b) => (b.position > a.position ? b : a));
  if (last.raw === null) return null;
  const v = verifyWorkflow(parseText(last.raw), receiptDocs.size ? new Map(receiptDocs) : undefined);
  if (v.verdict === 'valid') t.pass('aer1_verdict');
  else t.fail(last.member, 'aer1_verdict', `the workflow's AER-1 verdict is ${v.verdict} (${v.reasons.join(', ')})`);
  return v.verdict;
}
