/**
 * The rules of a receipt stream (S9: records are never altered; a
 * correction is a new receipt naming the one it supersedes), decided once.
 * Pure: the state read in the write transaction in, the events to append or
 * a typed error (409) out.
 */
import { ConflictError } from '../common/errors';
import type { ReceiptCorrected, ReceiptRecorded, ReceiptRecordedData } from './receipts.events';
import type { RecordedReceipt } from './receipts.repository';

/** Record `data` when nothing is recorded under its id; the same bytes (and the same `supersedes`) again answer the record. */
export type RecordDecision = { existing: RecordedReceipt } | { events: [ReceiptRecorded] };

/**
 * Decide recording `data` (`raw` exactly as received) given what is
 * recorded under its id now. 409 `receipt_id_conflict` when the id is
 * recorded with other bytes, or with the same bytes in another role
 * (a correction vs a receipt of its own).
 */
export function decideRecord(existing: RecordedReceipt | null, data: ReceiptRecordedData): RecordDecision {
  const id = data.id.toLowerCase();
  if (!existing) return { events: [{ type: 'ReceiptRecorded', data }] };
  if (existing.raw === data.raw && (existing.supersedes ?? null) === data.supersedes) return { existing };
  if (existing.raw !== data.raw) {
    throw new ConflictError('receipt_id_conflict', `receipt ${id} is already recorded with different bytes; records are never altered (S9): publish a correction instead`, { id });
  }
  const as = existing.supersedes ? `as the correction of ${existing.supersedes}` : 'as a receipt of its own';
  throw new ConflictError('receipt_id_conflict', `receipt ${id} is already recorded ${as}; a correction is a new receipt with an id not recorded before (S9)`, { id });
}

/** 409 `correction_same_id`: a correction is a new receipt, never the original's id (both lowercase). */
export function assertCorrectionId(originalId: string, correctionId: string): void {
  if (correctionId === originalId) throw new ConflictError('correction_same_id', 'a correction is a new receipt with its own id');
}

/** The original's state a correction is decided on. */
export interface CorrectionTarget {
  /** The original's id (lowercase). */
  id: string;
  superseded_by: string | null;
  /** When the original is already superseded by the same id: that correction's recorded bytes (else null). */
  same_correction_raw: string | null;
}

/**
 * Decide correcting `original` with the receipt `correctionId` (lowercase)
 * whose bytes are `raw`: the `ReceiptCorrected` event for the original's
 * stream, or `existing` when exactly this correction is recorded already.
 * 409 `already_superseded` when the original has another correction.
 */
export function decideCorrect(original: CorrectionTarget, correctionId: string, raw: string): { existing: true } | { events: [ReceiptCorrected] } {
  if (original.superseded_by) {
    if (original.superseded_by === correctionId && original.same_correction_raw === raw) return { existing: true };
    throw new ConflictError('already_superseded', `receipt ${original.id} is already superseded by ${original.superseded_by}; correct that one instead`, { superseded_by: original.superseded_by });
  }
  return { events: [{ type: 'ReceiptCorrected', data: { id: original.id, superseded_by: correctionId } }] };
}
