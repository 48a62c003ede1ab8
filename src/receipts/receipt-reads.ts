import { Injectable } from '@nestjs/common';
import type { Queryable } from '../database/rows';
import { ReceiptRow, ReceiptsRepository, RecordedReceipt } from './receipts.repository';

/**
 * The reads of the `receipts` table other modules make (the log's search and
 * record pages, workflows, outcomes, the public pages, the verification
 * processor): exported by `ReceiptsRepositoryModule` so that no other module
 * imports the repository. Each runs in the unit of work `q` its caller gives
 * (the `DatabaseService`, or a write's `Tx`); ids are lowercase.
 */
@Injectable()
export class ReceiptReads {
  constructor(private readonly receipts: ReceiptsRepository) {}

  /** The row of receipt `id`, or null. */
  get(q: Queryable, id: string): Promise<ReceiptRow | null> {
    return this.receipts.get(q, id);
  }

  /** The rows of the receipts among `ids`, keyed by id. */
  getMany(q: Queryable, ids: string[]): Promise<Map<string, ReceiptRow>> {
    return this.receipts.getMany(q, ids);
  }

  /** The ledger positions of the receipts among `ids`, without their bytes. */
  positions(q: Queryable, ids: string[]): Promise<Map<string, number>> {
    return this.receipts.positions(q, ids);
  }

  /** The stored texts of the receipts among `ids` (one page of ids), keyed by id. */
  rawByIds(q: Queryable, ids: string[]): Promise<{ k: string; raw: string }[]> {
    return this.receipts.rawByIds(q, ids);
  }

  /** Receipts whose declared `output_hash` is exactly `outputHash`, oldest first, at most `limit`. */
  byOutputHash(q: Queryable, outputHash: string, limit: number): Promise<{ id: string; position: number }[]> {
    return this.receipts.byOutputHash(q, outputHash, limit);
  }

  /** The receipts among `ids` that are recorded (id, stored text, verdict, provenance class, supersedes, position), keyed by id. */
  findRecorded(q: Queryable, ids: string[]): Promise<Map<string, RecordedReceipt>> {
    return this.receipts.findRecorded(q, ids);
  }
}
