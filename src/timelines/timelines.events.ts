/** The events of a `timeline:<job_id>` stream (S7, rev 09 endpoint commitments). */
import type { Event } from '../ledger/event';
import type { StoredAttestation } from '../core/aer1/attestation';

/** Data of `TimelineEntryAppended`: one entry exactly as received and what the core computed. */
export interface TimelineEntryAppendedData {
  job_id: string;
  seq: number;
  /** The entry's exact source text. */
  raw: string;
  /** The recomputed S7.1 digest of this entry. */
  entry_digest: string;
  /** The entry's `id` (a receipt id), as given. */
  receipt_id: string;
  tool: string;
  provenance_class: string;
  close: boolean;
  /** The writing key's publication setting (absent in events before it existed = `full`). */
  publication?: 'full' | 'metadata';
}

/** Data of `TimelineImported`: a complete timeline recorded elsewhere, the whole body text as received and the core's verdict. */
export interface TimelineImportedData {
  job_id: string;
  /** The whole request body text: a JSON array, or NDJSON (one entry a line) when `format` is `ndjson`. */
  raw: string;
  /** How `raw` is written (absent = a JSON array). */
  format?: 'ndjson';
  verdict: string;
  reasons: string[];
  construction: string | null;
  entry_count: number;
  final_entry_digest: string | null;
  /** The writing key's publication setting (absent = `full`). */
  publication?: 'full' | 'metadata';
}

/** Data of `EndpointCommitmentRecorded`: an external endpoint commitment exactly as received, and how it compared at that moment. */
export interface EndpointCommitmentRecordedData {
  id: string;
  job_id: string;
  /** The commitment object's exact text (witness metadata included). */
  raw: string;
  binding: boolean;
  reasons: string[];
  /** Entries in the visible timeline when the commitment was recorded. */
  entry_count_at_record: number;
  /**
   * `ledger`: the ledger's own commitment, issued in the transaction that
   * closed (or imported closed) the timeline; absent: posted by a client.
   */
  issued_by?: 'ledger';
  /** The signed note over `raw` (the log key's for a ledger-issued one, a trusted key's for an attested one); absent: self-asserted. */
  attestation?: StoredAttestation;
}

export type TimelineEntryAppended = Event<'TimelineEntryAppended', TimelineEntryAppendedData>;
export type TimelineImported = Event<'TimelineImported', TimelineImportedData>;
export type EndpointCommitmentRecorded = Event<'EndpointCommitmentRecorded', EndpointCommitmentRecordedData>;
/** Every event of a timeline stream. */
export type TimelineEvent = TimelineEntryAppended | TimelineImported | EndpointCommitmentRecorded;
export const TIMELINE_EVENT_TYPES: readonly TimelineEvent['type'][] = ['TimelineEntryAppended', 'TimelineImported', 'EndpointCommitmentRecorded'];
