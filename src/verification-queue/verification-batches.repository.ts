import { int, Queryable } from '../database/rows';
import type { Target, TargetKind } from './batch.types';
import type { BatchRequestedData, ResultsRecordedData } from './verification.events';

/** A row of `verification_batches`. */
export interface BatchRow {
  batch_id: string;
  /** The scope's JSON text. */
  scope: string;
  total: number;
  done: number;
  invalid: number;
  created_at: string;
  completed_at: string | null;
  position: number;
}

/** One recorded result as stored (`reasons` parsed). */
export interface ResultRow {
  kind: string;
  id: string;
  verdict: string;
  reasons: string[];
  verified_at: string;
}

const ROWS_PER_INSERT = 500;

export interface BatchListRow {
  batch_id: string;
  scope: string;
  total: number | string;
  done: number | string;
  created_at: string;
  completed_at: string | null;
  position: number | string;
}

/**
 * The `verification_batches` and `verification_results` tables: their SQL,
 * rows and mapping. Every method runs on the unit of work it is given.
 * Results are inserted with ON CONFLICT DO NOTHING (primary key batch,
 * kind, id) and the counts recomputed, so replaying or a duplicated event
 * never counts a result twice.
 */
export class VerificationBatchesRepository {
  /** Insert a requested batch (no-op when it exists); a batch of no targets is complete at once. */
  async insertBatch(q: Queryable, d: BatchRequestedData, position: number, recordedAt: string): Promise<void> {
    await q.query(
      'INSERT INTO verification_batches (batch_id, scope, total, done, invalid, created_at, completed_at, position) VALUES (?, ?, ?, 0, 0, ?, ?, ?) ON CONFLICT (batch_id) DO NOTHING',
      [d.batch_id, JSON.stringify(d.scope), d.total, recordedAt, d.total === 0 ? recordedAt : null, position],
    );
  }

  /** Insert results not recorded before, recount the batch, and complete it when every target has a result. */
  async insertResults(q: Queryable, d: ResultsRecordedData, position: number, recordedAt: string): Promise<void> {
    for (let i = 0; i < d.results.length; i += ROWS_PER_INSERT) {
      const part = d.results.slice(i, i + ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (const r of part) params.push(d.batch_id, r.kind, r.id, r.seq, r.verdict, JSON.stringify(r.reasons), r.verified_at, position);
      await q.query(
        `INSERT INTO verification_results (batch_id, target_kind, target_id, seq, verdict, reasons, verified_at, position) VALUES ${part.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (batch_id, target_kind, target_id) DO NOTHING`,
        params,
      );
    }
    await q.query(
      `UPDATE verification_batches SET
         done = (SELECT COUNT(*) FROM verification_results WHERE batch_id = ?),
         invalid = (SELECT COUNT(*) FROM verification_results WHERE batch_id = ? AND verdict = 'invalid')
       WHERE batch_id = ?`,
      [d.batch_id, d.batch_id, d.batch_id],
    );
    await q.query('UPDATE verification_batches SET completed_at = ? WHERE batch_id = ? AND completed_at IS NULL AND done >= total', [recordedAt, d.batch_id]);
  }

  /** The batch's row (id lowercase), or null. */
  async get(q: Queryable, batchId: string): Promise<BatchRow | null> {
    const r = (await q.query<BatchRow>('SELECT * FROM verification_batches WHERE batch_id = ?', [batchId]))[0];
    return r ? { ...r, total: int(r.total), done: int(r.done), invalid: int(r.invalid), position: int(r.position) } : null;
  }

  /** True when the batch is recorded. */
  async exists(q: Queryable, batchId: string): Promise<boolean> {
    return (await q.query('SELECT batch_id FROM verification_batches WHERE batch_id = ?', [batchId])).length > 0;
  }

  /** Ids of the batches not completed, in request order. */
  async unfinishedIds(q: Queryable): Promise<string[]> {
    return (await q.query<{ batch_id: string }>('SELECT batch_id FROM verification_batches WHERE completed_at IS NULL ORDER BY position')).map((r) => r.batch_id);
  }

  /** One page of a batch's results, in seq order. */
  async results(q: Queryable, batchId: string, limit: number, offset: number): Promise<ResultRow[]> {
    const rows = await q.query<{ target_kind: string; target_id: string; verdict: string; reasons: string; verified_at: string }>(
      'SELECT target_kind, target_id, verdict, reasons, verified_at FROM verification_results WHERE batch_id = ? ORDER BY seq LIMIT ? OFFSET ?',
      [batchId, limit, offset],
    );
    return rows.map((r) => ({ kind: r.target_kind, id: r.target_id, verdict: r.verdict, reasons: JSON.parse(r.reasons) as string[], verified_at: r.verified_at }));
  }

  /** At most `limit` results of the batch whose verdict is not `valid`, in target order. */
  async failures(q: Queryable, batchId: string, limit: number): Promise<{ kind: string; id: string; verdict: string; reasons: string[] }[]> {
    const rows = await q.query<{ target_kind: string; target_id: string; verdict: string; reasons: string }>(
      "SELECT target_kind, target_id, verdict, reasons FROM verification_results WHERE batch_id = ? AND verdict <> 'valid' ORDER BY seq LIMIT ?",
      [batchId, limit],
    );
    return rows.map((r) => ({ kind: r.target_kind, id: r.target_id, verdict: r.verdict, reasons: JSON.parse(r.reasons) as string[] }));
  }

  /** Results per verdict, split by whether their reasons are exactly `reasons` (the JSON text). */
  async countsByVerdict(q: Queryable, batchId: string, reasons: string): Promise<{ verdict: string; matches: boolean; n: number }[]> {
    const rows = await q.query<{ verdict: string; nf: number | string; n: number | string }>(
      'SELECT verdict, CASE WHEN reasons = ? THEN 1 ELSE 0 END AS nf, COUNT(*) AS n FROM verification_results WHERE batch_id = ? GROUP BY 1, 2',
      [reasons, batchId],
    );
    return rows.map((r) => ({ verdict: r.verdict, matches: int(r.nf) === 1, n: int(r.n) }));
  }

  /** The `kind\0id` keys of results recorded for the batch with seq in `[minSeq, maxSeq]`. */
  async recordedKeys(q: Queryable, batchId: string, minSeq: number, maxSeq: number): Promise<Set<string>> {
    const rows = await q.query<{ target_kind: string; target_id: string }>('SELECT target_kind, target_id FROM verification_results WHERE batch_id = ? AND seq >= ? AND seq <= ?', [batchId, minSeq, maxSeq]);
    return new Set(rows.map((r) => `${r.target_kind}\u0000${r.target_id}`));
  }

  /**
   * Receipts, jobs and workflows recorded (by event position) after `since`,
   * in position order: a read across the three read models that batches verify.
   */
  async targetsSince(q: Queryable, since: number): Promise<Target[]> {
    const rows = await q.query<{ kind: TargetKind; id: string; p: number | string }>(
      `SELECT 'receipt' AS kind, id, position AS p FROM receipts WHERE position > ?
       UNION ALL SELECT 'job' AS kind, job_id AS id, last_position AS p FROM timelines WHERE last_position > ?
       UNION ALL SELECT 'workflow' AS kind, workflow_id AS id, position AS p FROM workflows WHERE position > ?`,
      [since, since, since],
    );
    return rows
      .map((r) => ({ kind: r.kind, id: r.id, p: int(r.p) }))
      .sort((a, b) => a.p - b.p || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0))
      .map(({ kind, id }) => ({ kind, id }));
  }

  /** batches requested after a ledger position, in that order. */
  async batchesAfter(q: Queryable, p: { after: number; limit: number }): Promise<BatchListRow[]> {
    return q.query<BatchListRow>('SELECT batch_id, scope, total, done, created_at, completed_at, position FROM verification_batches WHERE position > ? ORDER BY position LIMIT ?', [p.after, p.limit + 1]);
  }
}

