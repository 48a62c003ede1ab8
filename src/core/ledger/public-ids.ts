/**
 * The public identifiers a format 3 leaf carries (issue 29, "Event format
 * 3"): for each event type, which members of its data name the record
 * (receipt id, job id, entry seq, plan id and version, outcome id, report
 * id, ...). They stay public after the payload is erased; everything else
 * of the data is the payload. Unknown types carry none.
 */
import { PublicIdValue } from './event-hash';

/** Per event type: `[name in the leaf, member of the event data]`. */
export const PUBLIC_IDS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  ReceiptRecorded: [['receipt_id', 'id']],
  ReceiptCorrected: [['receipt_id', 'id'], ['superseded_by', 'superseded_by']],
  TimelineEntryAppended: [['job_id', 'job_id'], ['seq', 'seq'], ['receipt_id', 'receipt_id']],
  TimelineImported: [['job_id', 'job_id']],
  EndpointCommitmentRecorded: [['commitment_id', 'id'], ['job_id', 'job_id']],
  PlanRegistered: [['plan_id', 'plan_id'], ['plan_version', 'version']],
  PlanAmended: [['plan_id', 'plan_id'], ['plan_version', 'version']],
  CoverageReportIssued: [['report_id', 'report_id']],
  OutcomeReported: [['outcome_id', 'outcome_id'], ['job_id', 'job_id'], ['receipt_id', 'receipt_id']],
  WorkflowReceiptRecorded: [['workflow_id', 'workflow_id'], ['receipt_id', 'receipt_id']],
  VerificationBatchRequested: [['batch_id', 'batch_id']],
  VerificationResultsRecorded: [['batch_id', 'batch_id'], ['chunk_index', 'chunk_index']],
  PayloadsErased: [['erasure_id', 'erasure_id']],
};

/** The public identifiers of an event of `type` with `data`: the listed members that are strings or non-negative safe integers. */
export function publicIdsOf(type: string, data: unknown): Record<string, PublicIdValue> {
  const out: Record<string, PublicIdValue> = {};
  const spec = PUBLIC_IDS[type];
  if (!spec || typeof data !== 'object' || data === null) return out;
  const d = data as Record<string, unknown>;
  for (const [name, member] of spec) {
    const v = d[member];
    if (typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) out[name] = v;
  }
  return out;
}
