/**
 * A scratch SQLite database (a temporary file, every SQLite migration run)
 * with a {@link Tx} over it: where the projection audit replays the ledger
 * through the registered projections, with the same dialect-neutral
 * repository SQL the live database runs. Nothing in it outlives {@link ScratchDatabase.close}.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { QueryRunner } from 'typeorm';
import type BetterSqlite3 from 'better-sqlite3';
import type { Tx } from './database.service';
import { MIGRATIONS } from '../../migrations';

/** A scratch database: `tx` runs repository SQL on it; `close` deletes it. */
export interface ScratchDatabase {
  readonly tx: Tx;
  /** Start one transaction around the replay (the file is never synced: it is thrown away). */
  begin(): void;
  commit(): void;
  close(): void;
}

/** Parameters as better-sqlite3 binds them (it refuses `undefined` and booleans). */
function bindable(params: unknown[]): unknown[] {
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/** A {@link Tx} over a better-sqlite3 handle, with prepared statements cached by their text. */
export function sqliteTx(db: BetterSqlite3.Database): Tx {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const statement = (sql: string): BetterSqlite3.Statement => {
    let st = cache.get(sql);
    if (!st) {
      st = db.prepare(sql);
      if (cache.size < 500) cache.set(sql, st);
    }
    return st;
  };
  return {
    dialect: 'sqlite',
    query: async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
      const st = statement(sql);
      if (st.reader) return st.all(...bindable(params)) as T[];
      st.run(...bindable(params));
      return [];
    },
    // Nothing to gain by deferring in process: the row is written at once (a refusal throws here).
    insertLater: (table, columns, values) => {
      statement(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).run(...bindable([...values]));
    },
    updateLater: (table, columns, values, key, keyValues) => {
      statement(`UPDATE ${table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE ${key.map((k) => `${k} = ?`).join(' AND ')}`).run(...bindable([...values, ...keyValues]));
    },
    // Replays into a scratch database write read models only: no event is appended, so no hook is ever needed.
    beforeCommit: () => {
      throw new Error('a scratch database has no commit hooks');
    },
    group: {},
    whenKept: () => {
      throw new Error('a scratch database has no commit hooks');
    },
    beforeGroupCommit: () => {
      throw new Error('a scratch database has no commit hooks');
    },
  };
}

/**
 * A stand-in for TypeORM's QueryRunner over a better-sqlite3 handle, enough
 * for the SQLite migrations: one statement per call, with parameters, rows
 * returned for a statement that reads (the verifiable-log migration reads the
 * events to build the tree of an existing ledger; here there are none).
 */
export function migrationRunner(db: BetterSqlite3.Database): QueryRunner {
  return {
    query: async (sql: string, params: unknown[] = []) => {
      const st = db.prepare(sql);
      if (st.reader) return st.all(...bindable(params));
      st.run(...bindable(params));
      return [];
    },
  } as unknown as QueryRunner;
}

/** Give `db` (an empty SQLite database) the schema of every SQLite migration, as the service does at start. */
export async function migrateSqlite(db: BetterSqlite3.Database): Promise<void> {
  const runner = migrationRunner(db);
  for (const M of MIGRATIONS.sqlite) await new M().up(runner);
}

/** Create a scratch database in a new temporary folder, its schema made by the SQLite migrations. */
export async function openScratchDatabase(): Promise<ScratchDatabase> {
  const Database = (await import('better-sqlite3')).default;
  const dir = mkdtempSync(join(tmpdir(), 'aer1-audit-'));
  const db = new Database(join(dir, 'replay.sqlite'));
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    await migrateSqlite(db);
  } catch (e) {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    tx: sqliteTx(db),
    begin: () => void db.exec('BEGIN'),
    commit: () => void db.exec('COMMIT'),
    close: () => {
      if (db.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
