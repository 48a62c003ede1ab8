/**
 * The projection tables read generically, in primary-key order: the SQL of
 * the projection audit and of the per-record guard. Text keys are ordered by
 * their UTF-8 bytes on both databases (SQLite's BINARY collation; PostgreSQL
 * `COLLATE "C"`), so two databases of different dialects stream a table in
 * the same order and can be merged row by row.
 */
import type { Dialect } from '../database/database-url';
import { placeholders, Queryable } from '../database/rows';

/** A primary-key column: its name and whether it is text (collated) or an integer. */
export type KeyColumn = readonly [name: string, kind: 'text' | 'int'];

/**
 * The primary key of every projection table (from migrations/*). A table a
 * projection registers that is missing here is refused by the audit, so a new
 * read model cannot go unchecked.
 */
export const READ_MODEL_KEYS: Readonly<Record<string, readonly KeyColumn[]>> = {
  receipts: [['id', 'text']],
  timelines: [['job_id', 'text']],
  timeline_entries: [
    ['job_id', 'text'],
    ['seq', 'int'],
  ],
  commitments: [['id', 'text']],
  workflows: [['workflow_id', 'text']],
  workflow_steps: [
    ['workflow_id', 'text'],
    ['seq', 'int'],
  ],
  plans: [['plan_id', 'text']],
  plan_versions: [
    ['plan_id', 'text'],
    ['version', 'int'],
  ],
  coverage_reports: [['report_id', 'text']],
  outcomes: [['outcome_id', 'text']],
  erasures: [['erasure_id', 'text']],
  erased_events: [['position', 'int']],
  verification_batches: [['batch_id', 'text']],
  verification_results: [
    ['batch_id', 'text'],
    ['target_kind', 'text'],
    ['target_id', 'text'],
  ],
};

/** The columns that name a record's rows (each indexed: a key's first column, or commitments_job). */
export const READ_MODEL_RECORD_COLUMNS: readonly string[] = ['id', 'job_id', 'workflow_id', 'plan_id', 'report_id', 'batch_id'];

/** Only names from {@link READ_MODEL_KEYS} reach SQL text. */
function keysOf(table: string): readonly KeyColumn[] {
  const k = READ_MODEL_KEYS[table];
  if (!k) throw new Error(`no primary key known for read model ${JSON.stringify(table)}`);
  return k;
}

export class ReadModelsRepository {
  /**
   * At most `limit` rows of `table` (all columns) with a key after `after`
   * (null: from the start), in key order (see the file comment).
   */
  async rowsAfter(q: Queryable, dialect: Dialect, table: string, after: unknown[] | null, limit: number): Promise<Record<string, unknown>[]> {
    const keys = keysOf(table);
    const col = ([name, kind]: KeyColumn): string => (kind === 'text' && dialect === 'postgres' ? `${name} COLLATE "C"` : name);
    const order = keys.map(col).join(', ');
    if (after === null) return q.query(`SELECT * FROM ${table} ORDER BY ${order} LIMIT ?`, [limit]);
    // (k1 > a1) OR (k1 = a1 AND k2 > a2) OR ...: keyset paging on a composite key, the same on both dialects.
    const ors: string[] = [];
    const params: unknown[] = [];
    for (let i = 0; i < keys.length; i++) {
      const parts: string[] = [];
      for (let j = 0; j < i; j++) {
        parts.push(`${keys[j][0]} = ?`);
        params.push(after[j]);
      }
      parts.push(`${col(keys[i])} > ?`);
      params.push(after[i]);
      ors.push(`(${parts.join(' AND ')})`);
    }
    return q.query(`SELECT * FROM ${table} WHERE ${ors.join(' OR ')} ORDER BY ${order} LIMIT ?`, [...params, limit]);
  }

  /** The rows of `table` whose single-column key is among `ids` (one page of ids). */
  async rowsByKey(q: Queryable, table: string, ids: unknown[]): Promise<Record<string, unknown>[]> {
    const keys = keysOf(table);
    if (keys.length !== 1) throw new Error(`${table} has a composite key`);
    return q.query(`SELECT * FROM ${table} WHERE ${keys[0][0]} IN (${placeholders(ids.length)})`, ids);
  }

  /** The rows of `table` whose `column` (one of {@link READ_MODEL_RECORD_COLUMNS}) is `value`: the rows of one record. */
  async rowsOf(q: Queryable, table: string, column: string, value: unknown): Promise<Record<string, unknown>[]> {
    keysOf(table);
    if (!READ_MODEL_RECORD_COLUMNS.includes(column)) throw new Error(`not a record column: ${column}`);
    return q.query(`SELECT * FROM ${table} WHERE ${column} = ?`, [value]);
  }
}
