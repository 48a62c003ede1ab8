/** The events of a `workflow:<workflow_id>` stream. */
import type { Event } from '../ledger/event';

/** Data of `WorkflowReceiptRecorded`. */
export interface WorkflowReceiptRecordedData {
  workflow_id: string;
  receipt_id: string;
  /** The workflow receipt JSON exactly as received (or as assembled here). */
  raw: string;
  /** True when this ledger assembled the workflow from recorded receipts. */
  assembled: boolean;
  /** The output string hashed into output_hash (assembled workflows only). */
  output: string | null;
  /** `valid` or `incomplete`: the verdict when recorded (invalid ones are never recorded). */
  verdict_at_record: string;
  reasons: string[];
}

export type WorkflowReceiptRecorded = Event<'WorkflowReceiptRecorded', WorkflowReceiptRecordedData>;
/** Every event of a workflow stream. */
export type WorkflowEvent = WorkflowReceiptRecorded;
export const WORKFLOW_EVENT_TYPES: readonly WorkflowEvent['type'][] = ['WorkflowReceiptRecorded'];
