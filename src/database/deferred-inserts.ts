/**
 * Rows queued by {@link Tx.insertLater} and written as multi-row INSERTs
 * (issue 17: a batch of 1,000 receipts is a few statements, not 2,000 round
 * trips). Kept apart from the transaction machinery so the SQL it writes is
 * testable on its own.
 */
import type { Dialect } from './database-url';

/**
 * Bound parameters one statement may carry: PostgreSQL's protocol counts
 * them in 16 bits (65,535); SQLite's default SQLITE_MAX_VARIABLE_NUMBER
 * (better-sqlite3's build keeps it) is 32,766.
 */
export const MAX_PARAMETERS: Readonly<Record<Dialect, number>> = { postgres: 65_535, sqlite: 32_766 };

/**
 * Rows per statement at most, whatever the parameter limit allows: on
 * SQLite each distinct row count is a statement to prepare (they are cached),
 * so full chunks of this size reuse one; on PostgreSQL a larger statement
 * saves little once the round trips are gone, and keeps one message bounded.
 */
export const MAX_ROWS: Readonly<Record<Dialect, number>> = { postgres: 1000, sqlite: 200 };

/** The queued rows of one table and column list, in the order queued. */
export interface InsertRun {
  readonly table: string;
  readonly columns: readonly string[];
  /** Each row's values, one per column. */
  readonly rows: unknown[][];
}

/**
 * The rows queued on one write call's {@link Tx}, one run per table and
 * column list. Runs are written in the order each was first queued, rows of
 * a run in their queued order: a row must not depend (foreign key, trigger)
 * on a row of a table first queued after its own. No table of this schema
 * has a foreign key; `events` must keep position order.
 */
export class DeferredInserts {
  private runs = new Map<string, InsertRun>();

  /** Queue one row; `values` must match `columns` one for one (a mismatch throws at once, a bug). */
  add(table: string, columns: readonly string[], values: readonly unknown[]): void {
    if (values.length !== columns.length) throw new Error(`insertLater ${table}: ${values.length} values for ${columns.length} columns`);
    const key = `${table}(${columns.join(',')})`;
    let run = this.runs.get(key);
    if (!run) {
      run = { table, columns: [...columns], rows: [] };
      this.runs.set(key, run);
    }
    run.rows.push([...values]);
  }

  get empty(): boolean {
    return this.runs.size === 0;
  }

  /** Every queued run, in order; the buffer is empty afterwards. */
  take(): InsertRun[] {
    const runs = [...this.runs.values()];
    this.runs = new Map();
    return runs;
  }
}

/** Rows of one statement for `columns` columns on `dialect`: under both the parameter limit and {@link MAX_ROWS}. */
export function rowsPerStatement(dialect: Dialect, columns: number, limits: { parameters?: number; rows?: number } = {}): number {
  const byParams = Math.floor((limits.parameters ?? MAX_PARAMETERS[dialect]) / columns);
  return Math.max(1, Math.min(byParams, limits.rows ?? MAX_ROWS[dialect]));
}

/**
 * `INSERT INTO table (c1, ..., ck) VALUES (...), ...` for `rows` rows, with
 * `?` placeholders (SQLite) or `$1..$n` (PostgreSQL), written directly
 * (the statement is not rewritten afterwards).
 */
export function multiRowInsertSql(dialect: Dialect, table: string, columns: readonly string[], rows: number): string {
  const k = columns.length;
  const tuples: string[] = new Array<string>(rows);
  if (dialect === 'sqlite') {
    const one = `(${new Array<string>(k).fill('?').join(', ')})`;
    tuples.fill(one);
  } else {
    const marks: string[] = new Array<string>(k);
    for (let r = 0, n = 1; r < rows; r++) {
      for (let c = 0; c < k; c++) marks[c] = `$${n++}`;
      tuples[r] = `(${marks.join(', ')})`;
    }
  }
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`;
}
