/**
 * Verify a ledger database directly, without the service: the check behind
 * `aer1 ledger verify --database <sqlite file | postgres URL>`. Reads the
 * events table in position order (through {@link EventsRepository}, over the
 * database's own driver, read-only for SQLite) and recomputes the ledger hash chain.
 */
import { Queryable, toPostgresPlaceholders } from '../database/rows';
import { LedgerChainReport, LedgerChainVerifier } from '../core/ledger/event-hash';
import { EventsRepository } from './events.repository';

const PAGE = 5000;

/** Every event in pages of {@link PAGE}, into the verifier until it stops. */
async function verifyAll(q: Queryable): Promise<LedgerChainReport> {
  const v = new LedgerChainVerifier();
  const events = new EventsRepository();
  let after = 0;
  for (;;) {
    const rows = await events.page(q, after, Number.MAX_SAFE_INTEGER, PAGE);
    for (const r of rows) if (!v.push(r)) return v.report();
    if (rows.length < PAGE) return v.report();
    after = rows[rows.length - 1].position;
  }
}

/** Open `database` (a SQLite file path, `sqlite:<path>`, or a postgres:// URL) and verify its ledger chain. */
export async function verifyLedgerDatabase(database: string): Promise<LedgerChainReport> {
  if (/^postgres(ql)?:\/\//.test(database)) {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: database });
    await client.connect();
    try {
      return await verifyAll({ query: async <T>(sql: string, params: unknown[] = []) => (await client.query(toPostgresPlaceholders(sql), params)).rows as T[] });
    } finally {
      await client.end();
    }
  }
  const path = database.startsWith('sqlite:') ? database.slice('sqlite:'.length) : database;
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return await verifyAll({ query: async <T>(sql: string, params: unknown[] = []) => db.prepare(sql).all(...params) as T[] });
  } finally {
    db.close();
  }
}
