/**
 * What a `report/<id>` pack member carries besides the report (issue 26):
 * who recorded the subject and its receipts as of the report's position,
 * and for a job the other jobs naming its receipts. Used by EvidenceService.
 */
import type { ReportMember } from '../core/pack/format';
import { recordersAsOf, workflowAsOf } from '../coverage/ledger-reader';
import { DatabaseService } from '../database/database.service';
import { streams } from '../ledger/streams';
import { TimelineReads } from '../timelines/timeline-reads';

/** Receipt ids read per page. */
const PAGE = 500;

/**
 * Who recorded the subject and its receipts as of a report's position (what
 * the report's `recorded_by` used), and for a job the other jobs whose
 * entries name its receipts as of that position (what its
 * `receipt_shared_with_other_job` findings used, issue 26).
 */
export async function recordersFor(db: DatabaseService, timelines: TimelineReads, subject: { kind: 'job' | 'workflow'; id: string }, asOf: number): Promise<{ recorders: ReportMember['recorders']; other_jobs?: Record<string, string[]> }> {
  const stream = subject.kind === 'job' ? streams.timeline(subject.id) : streams.workflow(subject.id);
  let ids: string[];
  if (subject.kind === 'job') {
    ids = [];
    let after = '';
    for (;;) {
      const page = await timelines.receiptIdPage(db, subject.id, after, asOf, PAGE);
      if (page.length === 0) break;
      ids.push(...page);
      after = page[page.length - 1];
    }
  } else ids = (await workflowAsOf(db, subject.id, asOf)).step_receipt_ids;
  const rec = await recordersAsOf(db, [stream], asOf);
  const receipts = await recordersAsOf(db, ids.map((x) => streams.receipt(x)), asOf, ['ReceiptRecorded']);
  const recorders = { record: rec.get(stream) ?? null, receipts: Object.fromEntries([...receipts].map(([k, v]) => [k.slice('receipt:'.length), v])) };
  if (subject.kind !== 'job') return { recorders };
  return { recorders, other_jobs: Object.fromEntries(await timelines.otherJobsNamingAsOf(db, subject.id, ids, asOf)) };
}
