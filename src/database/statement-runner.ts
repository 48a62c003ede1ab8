/**
 * How statements reach the driver on a transaction's connection: one query
 * (a driver error a request caused mapped to its 400), and the rows queued
 * with `Tx.insertLater` as prepared INSERT statements (single-row on
 * SQLite, named multi-row on PostgreSQL, several tables in one statement
 * there where they fit), then the row updates queued with
 * `Tx.updateLater` as prepared UPDATE statements.
 */
import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { EntityManager, QueryFailedError } from 'typeorm';
import type { Dialect } from './database-url';
import { chunkSizes, InsertRun, isUpdate, MAX_PARAMETERS, mergedInsertSql, multiRowInsertSql, QueuedWrite, updateSql } from './deferred-inserts';
import { inputError } from './tx';

/** Distinct merged-insert statements (see StatementRunner's mergedInserts) at most; past that, one statement per table. */
export const MAX_MERGED_SHAPES = 32;

/** Statements on a transaction's connection, for one dialect; caches prepared INSERTs per connection. */
export class StatementRunner {
  constructor(readonly dialect: Dialect) {}

  /** Run `text` (placeholders already in the dialect's form); a driver error {@link inputError} maps becomes that 400. */
  async run<T>(manager: EntityManager, text: string, params: unknown[]): Promise<T[]> {
    let rows: unknown;
    try {
      rows = await manager.query(text, params);
    } catch (e) {
      throw inputError(e) ?? e;
    }
    return (Array.isArray(rows) ? rows : []) as T[];
  }

  /**
   * Write queued runs (see {@link Tx.insertLater}), rows in order, as
   * statements of the sizes {@link chunkSizes} gives: multi-row named
   * statements on PostgreSQL; on SQLite single-row statements (MAX_ROWS),
   * prepared once per connection and run directly on it. A queued row
   * update ({@link Tx.updateLater}) is one prepared UPDATE, in its place.
   */
  async writeRuns(manager: EntityManager, runs: readonly QueuedWrite[]): Promise<void> {
    if (this.dialect === 'sqlite') return this.writeRunsSqlite(manager, runs);
    const merged = this.mergedInserts(runs);
    if (merged) {
      await this.runNamed(manager, merged.statement, merged.params);
      runs = runs.slice(merged.runs);
    }
    for (const run of runs) {
      if (isUpdate(run)) {
        await this.runNamed(manager, this.statement(`u:${run.table}(${run.columns.join(',')})(${run.key.join(',')})`, () => updateSql(this.dialect, run.table, run.columns, run.key)), [...run.values]);
        continue;
      }
      let i = 0;
      for (const k of chunkSizes(this.dialect, run.columns.length, run.rows.length)) {
        const params: unknown[] = [];
        for (let r = i; r < i + k; r++) for (const v of run.rows[r]) params.push(v);
        i += k;
        await this.runNamed(manager, this.insertStatement(run.table, run.columns, k), params);
      }
    }
  }

  /**
   * PostgreSQL: the insert runs at the start of `runs` (two or more, each one
   * statement of {@link chunkSizes}, under the parameter limit together) as
   * ONE statement of data-modifying CTEs, `WITH w1 AS (INSERT ...), ...
   * INSERT ...`: one round trip instead of one per table. Each table's rows
   * keep their order (one VALUES list); the sub-statements share a snapshot
   * and their order is not defined, which insert runs allow (no order between
   * tables, see DeferredInserts). A refused row fails the whole statement, as
   * it fails the call's write. Null when there is nothing to merge, or when
   * {@link MAX_MERGED_SHAPES} merged statements exist already (each is a
   * named statement on every connection; a single write's shapes are few).
   */
  private mergedInserts(runs: readonly QueuedWrite[]): { statement: { text: string; name: string }; params: unknown[]; runs: number } | null {
    let n = 0;
    let parameters = 0;
    const shape: string[] = [];
    for (; n < runs.length; n++) {
      const run = runs[n];
      if (isUpdate(run) || run.rows.length === 0) break;
      const sizes = chunkSizes(this.dialect, run.columns.length, run.rows.length);
      if (sizes.length !== 1 || parameters + run.rows.length * run.columns.length > MAX_PARAMETERS.postgres) break;
      parameters += run.rows.length * run.columns.length;
      shape.push(`${run.table}(${run.columns.join(',')})${run.rows.length}`);
    }
    if (n < 2) return null;
    const key = `w:${shape.join(';')}`;
    if (!this.insertStatements.has(key) && this.mergedShapes >= MAX_MERGED_SHAPES) return null;
    const inserts = runs.slice(0, n) as readonly InsertRun[];
    const statement = this.statement(key, () => {
      this.mergedShapes++;
      return mergedInsertSql(inserts.map((r) => ({ table: r.table, columns: r.columns, rows: r.rows.length })));
    });
    const params: unknown[] = [];
    for (const run of inserts) for (const row of run.rows) for (const v of row) params.push(v);
    return { statement, params, runs: n };
  }

  /** Merged statements made so far (see {@link mergedInserts}). */
  private mergedShapes = 0;

  /** One-row INSERT statements prepared on each SQLite connection, by table and columns. */
  private readonly sqliteInserts = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

  /** {@link writeRuns} on SQLite; a driver error is raised as TypeORM raises it (QueryFailedError), then mapped as {@link run} maps it. */
  private async writeRunsSqlite(manager: EntityManager, runs: readonly QueuedWrite[]): Promise<void> {
    const runner = manager.queryRunner as unknown as { connect(): Promise<BetterSqlite3.Database> } | undefined;
    if (!runner) throw new Error('insertLater rows outside a query runner');
    const handle = await runner.connect();
    let cache = this.sqliteInserts.get(handle);
    if (!cache) this.sqliteInserts.set(handle, (cache = new Map()));
    for (const run of runs) {
      const update = isUpdate(run);
      const key = update ? `u:${run.table}(${run.columns.join(',')})(${run.key.join(',')})` : `${run.table}(${run.columns.join(',')})`;
      const text = update ? updateSql('sqlite', run.table, run.columns, run.key) : multiRowInsertSql('sqlite', run.table, run.columns, 1);
      let st = cache.get(key);
      if (!st) cache.set(key, (st = handle.prepare(text)));
      for (const values of update ? [run.values] : run.rows) {
        try {
          st.run(values as unknown[]);
        } catch (e) {
          throw inputError(e) ?? new QueryFailedError(text, values as unknown[], e as Error);
        }
      }
    }
  }

  /** Multi-row INSERT texts by table, columns and rows (and row UPDATE texts), with a PostgreSQL statement name for each (a handful per table). */
  private readonly insertStatements = new Map<string, { text: string; name: string }>();

  private insertStatement(table: string, columns: readonly string[], rows: number): { text: string; name: string } {
    return this.statement(`${table}(${columns.join(',')})${rows}`, () => multiRowInsertSql(this.dialect, table, columns, rows));
  }

  /** The named statement cached under `key`, its text made by `text` the first time. */
  private statement(key: string, text: () => string): { text: string; name: string } {
    let st = this.insertStatements.get(key);
    if (!st) {
      const t = text();
      // The name stands for the text (pg refuses one name for two texts on a connection); 26 characters, under PostgreSQL's 63.
      st = { text: t, name: `aer1i_${createHash('sha256').update(t).digest('hex').slice(0, 20)}` };
      this.insertStatements.set(key, st);
    }
    return st;
  }

  /**
   * Run `st` on PostgreSQL as a named prepared statement on the transaction's
   * own connection (pg parses it once per connection, then only binds and
   * executes), bypassing TypeORM's unnamed query; errors as TypeORM gives
   * them (QueryFailedError around the driver's), then as {@link run} maps them.
   */
  private async runNamed(manager: EntityManager, st: { text: string; name: string }, params: unknown[]): Promise<void> {
    const runner = manager.queryRunner as unknown as { connect(): Promise<{ query(q: { name: string; text: string; values: unknown[] }): Promise<unknown> }> } | undefined;
    if (!runner) return void (await this.run(manager, st.text, params));
    const client = await runner.connect();
    try {
      await client.query({ name: st.name, text: st.text, values: params });
    } catch (e) {
      throw inputError(e) ?? new QueryFailedError(st.text, params, e as Error);
    }
  }
}
