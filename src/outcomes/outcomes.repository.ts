import { int, pages, placeholders, Queryable } from '../database/rows';
import type { OutcomeReportedData } from './outcomes.events';

/** A row of the `outcomes` read model (ids lowercased). Rows are never updated. */
export interface OutcomeRow {
  outcome_id: string;
  id_as_given: string;
  job_id: string;
  receipt_id: string;
  effect: string;
  result: string;
  observed_at: string;
  system: string;
  output_hash: string;
  raw: string;
  publication: string;
  position: number;
  recorded_at: string;
}

const LOOKUP_PAGE = 500;

function toRow(r: OutcomeRow): OutcomeRow {
  return { ...r, position: int(r.position) };
}

/** The `outcomes` table: its SQL, rows and mapping. Every method runs on the unit of work it is given. */
export class OutcomesRepository {
  /** Insert the row of an `OutcomeReported` event at `position`. */
  async insert(q: Queryable, d: OutcomeReportedData, position: number, recordedAt: string): Promise<void> {
    await q.query(
      `INSERT INTO outcomes (outcome_id, id_as_given, job_id, receipt_id, effect, result, observed_at, system, output_hash, raw, publication, position, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.outcome_id.toLowerCase(), d.outcome_id, d.job_id, d.receipt_id.toLowerCase(), d.effect, d.result, d.observed_at, d.system, d.output_hash, d.raw, d.publication, position, recordedAt],
    );
  }

  /** The row of outcome `id` (lowercase), or null. */
  async get(q: Queryable, id: string): Promise<OutcomeRow | null> {
    const row = (await q.query<OutcomeRow>('SELECT * FROM outcomes WHERE outcome_id = ?', [id]))[0];
    return row ? toRow(row) : null;
  }

  /** The outcomes answering receipt `receiptId` (lowercase), in ledger order. */
  async ofReceipt(q: Queryable, receiptId: string): Promise<OutcomeRow[]> {
    return (await q.query<OutcomeRow>('SELECT * FROM outcomes WHERE receipt_id = ? ORDER BY position', [receiptId])).map(toRow);
  }

  /** The outcomes answering any of `receiptIds` (lowercase) recorded at or below `asOf`, in ledger order. */
  async ofReceiptsAsOf(q: Queryable, receiptIds: string[], asOf: number): Promise<OutcomeRow[]> {
    const out: OutcomeRow[] = [];
    for (const page of pages([...new Set(receiptIds)], LOOKUP_PAGE)) {
      out.push(...(await q.query<OutcomeRow>(`SELECT * FROM outcomes WHERE receipt_id IN (${placeholders(page.length)}) AND position <= ?`, [...page, asOf])).map(toRow));
    }
    return out.sort((a, b) => a.position - b.position);
  }

  /** The outcomes naming job `jobId`, in ledger order. */
  async ofJob(q: Queryable, jobId: string): Promise<OutcomeRow[]> {
    return (await q.query<OutcomeRow>('SELECT * FROM outcomes WHERE job_id = ? ORDER BY position', [jobId])).map(toRow);
  }
}
