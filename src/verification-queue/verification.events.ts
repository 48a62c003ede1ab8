/** The events of a `batch:<batch_id>` stream (verification batches). */
import type { Event } from '../ledger/event';
import type { ResultRecord, Target } from './batch.types';

/** Data of `VerificationBatchRequested` (stream `batch:<id>`). */
export interface BatchRequestedData {
  batch_id: string;
  scope: unknown;
  total: number;
  chunk_size: number;
  targets: Target[];
}

/** Data of `VerificationResultsRecorded` (stream `batch:<id>`): only results not recorded before. */
export interface ResultsRecordedData {
  batch_id: string;
  chunk_index: number;
  results: ResultRecord[];
}

export type VerificationBatchRequested = Event<'VerificationBatchRequested', BatchRequestedData>;
export type VerificationResultsRecorded = Event<'VerificationResultsRecorded', ResultsRecordedData>;
/** Every event of a batch stream. */
export type BatchEvent = VerificationBatchRequested | VerificationResultsRecorded;
export const BATCH_EVENT_TYPES: readonly BatchEvent['type'][] = ['VerificationBatchRequested', 'VerificationResultsRecorded'];
