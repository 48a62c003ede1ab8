/** The events of a `receipt:<id>` stream (S9: records are never altered; a correction is a new receipt). */
import type { Event } from '../ledger/event';

/** Data of `ReceiptRecorded`: the receipt document exactly as received, and what the core found at ingestion. */
export interface ReceiptRecordedData {
  id: string;
  raw: string;
  form: string;
  wrapped_in: string | null;
  verdict: string;
  reasons: string[];
  provenance_class: string | null;
  tool: string | null;
  status: string | null;
  output_hash: string | null;
  created_at: string | null;
  supersedes: string | null;
  /** The writing key's publication setting (absent in events before it existed = `full`). */
  publication?: 'full' | 'metadata';
}

/** Data of `ReceiptCorrected`, appended to the superseded receipt's stream (S9). */
export interface ReceiptCorrectedData {
  id: string;
  superseded_by: string;
}

export type ReceiptRecorded = Event<'ReceiptRecorded', ReceiptRecordedData>;
export type ReceiptCorrected = Event<'ReceiptCorrected', ReceiptCorrectedData>;
/** Every event of a receipt stream. */
export type ReceiptEvent = ReceiptRecorded | ReceiptCorrected;
export const RECEIPT_EVENT_TYPES: readonly ReceiptEvent['type'][] = ['ReceiptRecorded', 'ReceiptCorrected'];
