/**
 * Verify a ledger database directly, without the service: the check behind
 * `aer1 ledger verify --database <sqlite file | postgres URL>`. Reads the
 * events table in position order with the database's own driver (read-only
 * for SQLite) and recomputes the ledger hash chain.
 */
import { LedgerChainReport, LedgerChainVerifier, StoredEvent } from '../core/ledger/event-hash';

const PAGE = 5000;

/** Open `database` (a SQLite file path, `sqlite:<path>`, or a postgres:// URL) and verify its ledger chain. */
export async function verifyLedgerDatabase(database: string): Promise<LedgerChainReport> {
  const v = new LedgerChainVerifier();
  if (/^postgres(ql)?:\/\//.test(database)) {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: database });
    await client.connect();
    try {
      let after = 0;
      for (;;) {
        const { rows } = await client.query<StoredEvent>('SELECT * FROM events WHERE position > $1 ORDER BY position LIMIT $2', [after, PAGE]);
        for (const r of rows) if (!v.push(r)) return v.report();
        if (rows.length < PAGE) break;
        after = Number(rows[rows.length - 1].position);
      }
    } finally {
      await client.end();
    }
    return v.report();
  }
  const path = database.startsWith('sqlite:') ? database.slice('sqlite:'.length) : database;
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const stmt = db.prepare('SELECT * FROM events ORDER BY position');
    for (const r of stmt.iterate() as IterableIterator<StoredEvent>) if (!v.push(r)) break;
  } finally {
    db.close();
  }
  return v.report();
}
