/**
 * Databases for the benchmarks: a fresh SQLite file in the scratch folder or
 * a fresh PostgreSQL database (CREATE / DROP on 127.0.0.1), migrated by the
 * application's own migrations, and the raw-driver insert reference.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions, dialectOf } from '../../src/database/database-url';
import { toPostgresPlaceholders } from '../../src/database/database.service';
import { buildTree } from '../../src/log/tree-build';
import { now } from './measure';
import { INSERT_EVENT, INSERT_RECEIPT, LedgerRows } from './receipts';

export type Dialect = 'sqlite' | 'postgres';

export interface BenchDb {
  dialect: Dialect;
  /** DATABASE_URL for the application. */
  url: string;
  /** SQLite file path (sqlite only). */
  file?: string;
  drop(): Promise<void>;
}

let counter = 0;

export async function createDb(dialect: Dialect, tmp: string, pgAdminUrl: string): Promise<BenchDb> {
  if (dialect === 'sqlite') {
    const file = join(tmp, `ledger-${process.pid}-${++counter}.sqlite`);
    return { dialect, url: `sqlite:${file}`, file, drop: async () => undefined };
  }
  const name = `aer1_bench_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: pgAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = pgAdminUrl.replace(/\/[^/]*$/, `/${name}`);
  return {
    dialect,
    url,
    drop: async () => {
      const c = new Client({ connectionString: pgAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Run the application's migrations on `db` (TypeORM, as the app does at start). */
export async function migrate(db: BenchDb): Promise<void> {
  const ds = new DataSource(dataSourceOptions(db.url, MIGRATIONS[dialectOf(db.url)]));
  await ds.initialize();
  try {
    await ds.runMigrations({ transaction: 'each' }); // a no-op when the options already ran them
  } finally {
    await ds.destroy();
  }
}

/**
 * How the raw reference sends the rows:
 * - `per-row`: one prepared INSERT per row (2 per receipt), the reference
 *   before issue 17 (on PostgreSQL every statement is a round trip);
 * - `fastest`: the fastest the driver does for the same rows and the same
 *   durability: on SQLite the same prepared statements (better-sqlite3 runs
 *   in process: there is no round trip to save), on PostgreSQL one multi-row
 *   `INSERT ... VALUES (...), (...)` per table per transaction (2 statements
 *   per 1,000 receipts). Measured on this machine (20,000 receipts, 2 runs
 *   each): multi-row VALUES 27-31k receipts/s, `INSERT ... SELECT FROM
 *   unnest($1::bigint[], ...)` 19-21k, COPY through pg-copy-streams 29-37k
 *   (not clearly faster, and a dependency more), per-row 3.4k.
 * Both: one transaction per `perTx` receipts, synchronous commit as the app.
 */
export type RawMode = 'per-row' | 'fastest';

/**
 * A `VALUES` list of `rows` copies of a single-row `INSERT ... VALUES (?, ...)`
 * with `$n` placeholders numbered row by row (literals such as NULL kept).
 */
export function multiRowInsert(insert: string, rows: number): string {
  const at = insert.indexOf(' VALUES ');
  if (at < 0 || rows < 1) throw new Error(`not a single-row INSERT: ${insert}`);
  const tuple = insert.slice(at + ' VALUES '.length);
  let p = 0;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) tuples.push(tuple.replace(/\?/g, () => `$${++p}`));
  return `${insert.slice(0, at)} VALUES ${tuples.join(', ')}`;
}

/**
 * Insert `rows` with the raw driver, one transaction per `perTx` receipts
 * (each receipt: its event row and its read-model row, the statements the
 * ledger runs), sent as `mode` says. SQLite with the application's pragmas
 * (WAL, synchronous FULL, foreign keys). Returns seconds spent inserting.
 */
export async function rawInsert(db: BenchDb, rows: LedgerRows, perTx = 1000, mode: RawMode = 'fastest'): Promise<number> {
  const n = rows.events.length;
  if (db.dialect === 'sqlite') {
    const s = new Database(db.file!);
    s.pragma('journal_mode = WAL');
    s.pragma('synchronous = FULL');
    s.pragma('foreign_keys = ON');
    const ev = s.prepare(INSERT_EVENT);
    const rc = s.prepare(INSERT_RECEIPT);
    const tx = s.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        ev.run(...rows.events[i]);
        rc.run(...rows.receipts[i]);
      }
    });
    const t0 = now();
    for (let i = 0; i < n; i += perTx) tx(i, Math.min(n, i + perTx));
    const secs = now() - t0;
    s.close();
    return secs;
  }
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    let t0 = now();
    if (mode === 'per-row') {
      const evSql = toPostgresPlaceholders(INSERT_EVENT);
      const rcSql = toPostgresPlaceholders(INSERT_RECEIPT);
      for (let i = 0; i < n; i += perTx) {
        await c.query('BEGIN');
        for (let j = i; j < Math.min(n, i + perTx); j++) {
          await c.query({ name: 'bench_ev', text: evSql, values: rows.events[j] });
          await c.query({ name: 'bench_rc', text: rcSql, values: rows.receipts[j] });
        }
        await c.query('COMMIT');
      }
    } else {
      const sql = new Map<number, [string, string]>(); // built once per size, outside the timing of later chunks
      const statements = (k: number): [string, string] => {
        let s = sql.get(k);
        if (!s) sql.set(k, (s = [multiRowInsert(INSERT_EVENT, k), multiRowInsert(INSERT_RECEIPT, k)]));
        return s;
      };
      statements(Math.min(n, perTx));
      t0 = now();
      for (let i = 0; i < n; i += perTx) {
        const to = Math.min(n, i + perTx);
        const k = to - i;
        const [evSql, rcSql] = statements(k);
        await c.query('BEGIN');
        await c.query({ name: `bench_ev_${k}`, text: evSql, values: rows.events.slice(i, to).flat() });
        await c.query({ name: `bench_rc_${k}`, text: rcSql, values: rows.receipts.slice(i, to).flat() });
        await c.query('COMMIT');
      }
    }
    return now() - t0;
  } finally {
    await c.end();
  }
}

/**
 * Build the verifiable log's tree (tree_nodes) of events loaded with
 * {@link rawInsert}, as the upgrade migration builds it for an existing
 * ledger: a ledger whose tree lacks its events is refused by the service
 * (the next append cannot extend the tree). PostgreSQL only.
 */
export async function buildTreeOf(db: BenchDb): Promise<number> {
  if (db.dialect !== 'postgres') throw new Error('buildTreeOf: PostgreSQL only');
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('BEGIN');
    const size = await buildTree({ query: async <T>(sql: string, params: unknown[] = []) => (await c.query(toPostgresPlaceholders(sql), params)).rows as T[] });
    await c.query('COMMIT');
    return size;
  } finally {
    await c.end();
  }
}

/** Rows in `events` (sanity checks after a run). */
export async function countEvents(db: BenchDb): Promise<number> {
  if (db.dialect === 'sqlite') {
    const s = new Database(db.file!, { readonly: true });
    const n = (s.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    s.close();
    return n;
  }
  const c = new Client({ connectionString: db.url });
  await c.connect();
  const r = await c.query<{ n: string }>('SELECT COUNT(*) AS n FROM events');
  await c.end();
  return Number(r.rows[0].n);
}
