/**
 * The public identifiers a format 3 leaf carries (issue 29, "Event format
 * 3"): for each event type, which members of its data name the record
 * (receipt id, job id, entry seq, plan id and version, outcome id, report
 * id, ...). They stay public after the payload is erased; everything else
 * of the data is the payload. Unknown types carry none.
 */
import { writeJsonString } from '../aer1';
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

/**
 * Per event type, its {@link PUBLIC_IDS} in the order the leaf writes them
 * (names in code-point order, as {@link publicIdsText} sorts them), each with
 * its name already written (`"name":`). Built once: no sort per event.
 */
const WRITTEN: ReadonlyMap<string, readonly (readonly [prefix: string, member: string])[]> = new Map(
  Object.entries(PUBLIC_IDS).map(([type, spec]) => {
    const names = spec.map(([name]) => name);
    if (new Set(names).size !== names.length) throw new Error(`PUBLIC_IDS.${type} names a public identifier twice`);
    const sorted = [...spec].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return [type, sorted.map(([name, member]) => [writeJsonString(name) + ':', member] as const)];
  }),
);

/**
 * `publicIdsText(publicIdsOf(type, data))` (the `public_ids` a format 3 event
 * of `type` with `data` stores and hashes) written in one pass, with the names
 * sorted once per type: the writer's path (src/ledger/ledger.service.ts).
 * Same text for every input (test/core/ledger/fast-paths.spec.ts).
 */
export function publicIdsTextOf(type: string, data: unknown): string {
  const spec = WRITTEN.get(type);
  if (!spec || typeof data !== 'object' || data === null) return '{}';
  const d = data as Record<string, unknown>;
  let out = '';
  for (const [prefix, member] of spec) {
    const v = d[member];
    if (typeof v === 'string') out += (out === '' ? '' : ',') + prefix + writeJsonString(v);
    else if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) out += (out === '' ? '' : ',') + prefix + String(v);
  }
  return '{' + out + '}';
}
