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
  /** Erase the content of the outcome reports recorded at `positions` (issue 29): `raw` and `output_hash` '', as their retained data replays. */
  async erasePayloads(q: Queryable, positions: readonly number[]): Promise<void> {
    for (const page of pages([...positions], LOOKUP_PAGE)) await q.query(`UPDATE outcomes SET raw = '', output_hash = '' WHERE position IN (${placeholders(page.length)})`, page);
  }

  /** The ledger positions of the outcome reports of job `jobId`, in order. */
  async positionsOfJob(q: Queryable, jobId: string): Promise<number[]> {
    return (await q.query<{ position: number | string }>('SELECT position FROM outcomes WHERE job_id = ? ORDER BY position', [jobId])).map((r) => int(r.position));
  }

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

  /**
   * The newest outcome that decides against its call, or null: among the
   * outcomes answering receipt `scope.receipt` (lowercase), or any receipt
   * named by an entry of job `scope.job`, those that no later outcome of the
   * same receipt, system and effect supersedes (the latest decides) and whose
   * `result` is not `confirmed`, the one latest in ledger order, with how many
   * such deciding outcomes there are. One query over the `outcomes_receipt`
   * index (badges and pages answer it on every read).
   */
  async decidingAgainst(q: Queryable, scope: { receipt: string } | { job: string }): Promise<{ row: OutcomeRow; count: number } | null> {
    const [where, arg] = 'receipt' in scope ? ['o.receipt_id = ?', scope.receipt] : ['o.receipt_id IN (SELECT LOWER(e.receipt_id) FROM timeline_entries e WHERE e.job_id = ? AND e.receipt_id IS NOT NULL)', scope.job];
    const rows = await q.query<OutcomeRow & { n: number | string }>(
      `SELECT o.*, COUNT(*) OVER () AS n FROM outcomes o
       WHERE ${where} AND o.result <> 'confirmed'
         AND NOT EXISTS (SELECT 1 FROM outcomes l WHERE l.receipt_id = o.receipt_id AND l.system = o.system AND l.effect = o.effect AND l.position > o.position)
       ORDER BY o.position DESC LIMIT 1`,
      [arg],
    );
    if (rows.length === 0) return null;
    const { n, ...row } = rows[0];
    return { row: toRow(row), count: int(n) };
  }

  /** The outcomes naming job `jobId`, in ledger order. */
  async ofJob(q: Queryable, jobId: string): Promise<OutcomeRow[]> {
    return (await q.query<OutcomeRow>('SELECT * FROM outcomes WHERE job_id = ? ORDER BY position', [jobId])).map(toRow);
  }
}
