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
 * Rows per statement at most (a power of two), whatever the parameter limit
 * allows. PostgreSQL: statements come in a few fixed sizes ({@link chunkSizes})
 * so each is a named prepared statement, parsed and planned once per
 * connection (planning a 1,000-row VALUES list costs about as much as running
 * it). SQLite: 1, one prepared single-row statement run row by row: in
 * process there is no round trip to save, and SQLite runs a 256-row VALUES
 * list about 1.7x slower than 256 runs of the one-row statement
 * (bench/PROFILE.md, "Fourth round").
 */
export const MAX_ROWS: Readonly<Record<Dialect, number>> = { postgres: 1024, sqlite: 1 };

/**
 * On PostgreSQL, a table's queued rows are sent as soon as this many are
 * queued (a power of two, so it is one of the {@link chunkSizes}), without
 * waiting: the server inserts them while the service prepares the next rows
 * (the errors still surface at the next statement or at the call's end, see
 * {@link Tx.insertLater}). 0 on SQLite: in process, nothing runs meanwhile.
 */
export const EAGER_ROWS: Readonly<Record<Dialect, number>> = { postgres: 256, sqlite: 0 };

/** The queued rows of one table and column list, in the order queued. */
export interface InsertRun {
  readonly table: string;
  readonly columns: readonly string[];
  /** Each row's values, one per column. */
  readonly rows: (readonly unknown[])[];
}

/**
 * One row's queued UPDATE ({@link Tx.updateLater}):
 * `UPDATE table SET columns = ... WHERE key = ...`, the last values queued
 * for the row.
 */
export interface QueuedUpdate {
  readonly table: string;
  readonly columns: readonly string[];
  readonly key: readonly string[];
  /** The values of `columns`, then those of `key`. */
  values: readonly unknown[];
}

/** What a flush writes: insert runs, then row updates. */
export type QueuedWrite = InsertRun | QueuedUpdate;

/** Whether `w` is a row update (else an insert run). */
export function isUpdate(w: QueuedWrite): w is QueuedUpdate {
  return 'key' in w;
}

/**
 * The rows queued on one write call's {@link Tx}, one run per table and
 * column list. Rows of a run are written in their queued order (`events`
 * keeps position order); runs are written in the order each was first
 * queued, but a run's first rows may be sent early ({@link EAGER_ROWS}), so
 * no order holds between rows of different tables: a queued row must not
 * depend (foreign key, trigger) on a row of another table queued in the same
 * call. No table of this schema has a foreign key. Queued row updates are
 * written after every queued insert (so an update may name a row inserted in
 * the same call), one statement per row, the last values queued for it.
 */
export class DeferredInserts {
  private runs = new Map<string, InsertRun>();
  private updates = new Map<string, QueuedUpdate>();

  /**
   * Queue one row; `values` must match `columns` one for one (a mismatch
   * throws at once, a bug). The `values` array is kept as given (not copied):
   * the caller passes a fresh one. Returns the rows now queued for this table
   * and column list.
   */
  add(table: string, columns: readonly string[], values: readonly unknown[]): number {
    if (values.length !== columns.length) throw new Error(`insertLater ${table}: ${values.length} values for ${columns.length} columns`);
    const key = `${table}(${columns.join(',')})`;
    let run = this.runs.get(key);
    if (!run) {
      run = { table, columns, rows: [] };
      this.runs.set(key, run);
    }
    return run.rows.push(values);
  }

  /**
   * Queue an update of the row whose `key` columns hold `keyValues`
   * (`values` one for one with `columns`, else it throws at once, a bug). An
   * update already queued for the same table, columns and row is replaced:
   * the row gets the last values queued, in one statement.
   */
  update(table: string, columns: readonly string[], values: readonly unknown[], key: readonly string[], keyValues: readonly unknown[]): void {
    if (values.length !== columns.length || keyValues.length !== key.length) throw new Error(`updateLater ${table}: values do not match the columns`);
    const id = `${table}(${columns.join(',')})(${key.join(',')})${JSON.stringify(keyValues)}`;
    const queued = this.updates.get(id);
    if (queued) queued.values = [...values, ...keyValues];
    else this.updates.set(id, { table, columns, key, values: [...values, ...keyValues] });
  }

  get empty(): boolean {
    return this.runs.size === 0 && this.updates.size === 0;
  }

  /**
   * The first rows of every run with at least `size` queued, in whole
   * multiples of `size` (left queued: the rest); runs in first-queued order.
   */
  takeFull(size: number): InsertRun[] {
    const out: InsertRun[] = [];
    for (const run of this.runs.values()) {
      const n = run.rows.length - (run.rows.length % size);
      if (n > 0) out.push({ table: run.table, columns: run.columns, rows: run.rows.splice(0, n) });
    }
    return out;
  }

  /** Every queued run, in order, then every queued row update, in first-queued order; the buffer is empty afterwards. */
  take(): QueuedWrite[] {
    const out: QueuedWrite[] = [...this.runs.values(), ...this.updates.values()];
    this.runs = new Map();
    this.updates = new Map();
    return out;
  }
}

/** The largest power of two <= n (n >= 1). */
function pow2floor(n: number): number {
  return 2 ** Math.floor(Math.log2(n));
}

/** Rows of the largest statement for `columns` columns on `dialect`: a power of two, under both the parameter limit and {@link MAX_ROWS}. */
export function rowsPerStatement(dialect: Dialect, columns: number, limits: { parameters?: number; rows?: number } = {}): number {
  const byParams = Math.floor((limits.parameters ?? MAX_PARAMETERS[dialect]) / columns);
  return byParams < 1 ? 1 : pow2floor(Math.min(byParams, limits.rows ?? MAX_ROWS[dialect]));
}

/**
 * The row counts of the statements that write `rows` rows, in order: full
 * statements of {@link rowsPerStatement}, then the rest in descending powers
 * of two (at most log2 of the largest size more statements; every size is one
 * of a handful, so each is prepared once).
 */
export function chunkSizes(dialect: Dialect, columns: number, rows: number): number[] {
  const max = rowsPerStatement(dialect, columns);
  const out: number[] = [];
  let left = rows;
  for (; left >= max; left -= max) out.push(max);
  for (let k = max >> 1; k >= 1; k >>= 1) if (left & k) out.push(k);
  return out;
}

/**
 * `INSERT INTO table (c1, ..., ck) VALUES (...), ...` for `rows` rows, with
 * `?` placeholders (SQLite) or `$1..$n` (PostgreSQL), written directly
 * (the statement is not rewritten afterwards); on PostgreSQL numbered from
 * `$first` (a statement that carries other parameters before these).
 */
export function multiRowInsertSql(dialect: Dialect, table: string, columns: readonly string[], rows: number, first = 1): string {
  const k = columns.length;
  const tuples: string[] = new Array<string>(rows);
  if (dialect === 'sqlite') {
    const one = `(${new Array<string>(k).fill('?').join(', ')})`;
    tuples.fill(one);
  } else {
    const marks: string[] = new Array<string>(k);
    for (let r = 0, n = first; r < rows; r++) {
      for (let c = 0; c < k; c++) marks[c] = `$${n++}`;
      tuples[r] = `(${marks.join(', ')})`;
    }
  }
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`;
}

/**
 * PostgreSQL: the INSERTs of several runs as one statement of data-modifying
 * CTEs, `WITH w1 AS (INSERT ...), w2 AS (INSERT ...) INSERT ...` (the last
 * run's INSERT is the main statement), each with `rows` rows; placeholders
 * `$1..$n` run after run, row after row, as {@link multiRowInsertSql} numbers them.
 */
export function mergedInsertSql(runs: readonly { table: string; columns: readonly string[]; rows: number }[]): string {
  let first = 1;
  const parts = runs.map((r) => {
    const sql = multiRowInsertSql('postgres', r.table, r.columns, r.rows, first);
    first += r.rows * r.columns.length;
    return sql;
  });
  const last = parts.pop()!;
  return `WITH ${parts.map((p, i) => `w${i + 1} AS (${p})`).join(', ')} ${last}`;
}

/** `UPDATE table SET c1 = ?, ... WHERE k1 = ? AND ...` (`$n` placeholders on PostgreSQL), parameters: the set values, then the key's. */
export function updateSql(dialect: Dialect, table: string, columns: readonly string[], key: readonly string[]): string {
  let n = 0;
  const mark = (): string => (dialect === 'postgres' ? `$${++n}` : '?');
  const set = columns.map((c) => `${c} = ${mark()}`).join(', ');
  return `UPDATE ${table} SET ${set} WHERE ${key.map((k) => `${k} = ${mark()}`).join(' AND ')}`;
}
