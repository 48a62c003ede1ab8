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
import { dataSourceOptions } from '../../src/database/database-url';
import { toPostgresPlaceholders } from '../../src/database/database.service';
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
  const ds = new DataSource(dataSourceOptions(db.url));
  await ds.initialize();
  try {
    await ds.runMigrations({ transaction: 'each' }); // a no-op when the options already ran them
  } finally {
    await ds.destroy();
  }
}

/**
 * Insert `rows` with the raw driver, one transaction per `perTx` receipts
 * (each receipt: its event row and its read-model row, the statements the
 * ledger runs). SQLite with the application's pragmas (WAL, synchronous FULL,
 * foreign keys). Returns seconds spent inserting.
 */
export async function rawInsert(db: BenchDb, rows: LedgerRows, perTx = 1000): Promise<number> {
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
  const evSql = toPostgresPlaceholders(INSERT_EVENT);
  const rcSql = toPostgresPlaceholders(INSERT_RECEIPT);
  const t0 = now();
  for (let i = 0; i < n; i += perTx) {
    await c.query('BEGIN');
    for (let j = i; j < Math.min(n, i + perTx); j++) {
      await c.query({ name: 'bench_ev', text: evSql, values: rows.events[j] });
      await c.query({ name: 'bench_rc', text: rcSql, values: rows.receipts[j] });
    }
    await c.query('COMMIT');
  }
  const secs = now() - t0;
  await c.end();
  return secs;
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
