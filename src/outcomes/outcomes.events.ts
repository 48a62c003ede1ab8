/** The events of an `outcome:<id>` stream (issue 18): one `OutcomeReported`, never altered; a later observation is a new outcome. */
import type { Event } from '../ledger/event';
import type { OutcomeResult } from '../core/outcomes/outcome';

/** Data of `OutcomeReported`: the report exactly as received (`raw`) and its verified fields. */
export interface OutcomeReportedData {
  /** As given (the stream and row use it lowercased). */
  outcome_id: string;
  raw: string;
  job_id: string;
  /** Lowercase: the recorded receipt the outcome answers. */
  receipt_id: string;
  effect: string;
  result: OutcomeResult;
  observed_at: string;
  system: string;
  output_hash: string;
  /** The reporting key's publication setting (`metadata`: canonical bytes served to auditors only). */
  publication: 'full' | 'metadata';
}

export type OutcomeReported = Event<'OutcomeReported', OutcomeReportedData>;
/** Every event of an outcome stream. */
export type OutcomeEvent = OutcomeReported;
export const OUTCOME_EVENT_TYPES: readonly OutcomeEvent['type'][] = ['OutcomeReported'];
