/**
 * Verify a ledger database directly, without the service: the check behind
 * `aer1 ledger verify --database <sqlite file | postgres URL>`. Reads the
 * events table in position order (through {@link EventsRepository}, over the
 * database's own driver, read-only for SQLite) and recomputes the ledger hash chain,
 * then audits every projection table against the events (projection-audit.ts),
 * both in one read snapshot (a REPEATABLE READ READ ONLY transaction on
 * PostgreSQL, a read transaction on SQLite), so a running service's writes
 * cannot show as a mismatch.
 */
import { Queryable, toPostgresPlaceholders } from '../database/rows';
import { LedgerChainReport, LedgerChainVerifier } from '../core/ledger/event-hash';
import { EventsRepository } from './events.repository';
import { auditProjections, ProjectionAuditReport } from './projection-audit';
import { projectionRegistry } from '../projections';
import { sqliteTx } from '../database/scratch';
import type { Dialect } from '../database/database-url';

/** The chain report (its `first_failure` is the chain's), the projection audit, and `ok` for both. */
export type LedgerDatabaseReport = LedgerChainReport & { chain_ok: boolean; projections: ProjectionAuditReport };

async function verifyAndAudit(q: Queryable, dialect: Dialect): Promise<LedgerDatabaseReport> {
  const chain = await verifyAll(q);
  const projections = await auditProjections(q, dialect, projectionRegistry());
  return { ...chain, ok: chain.ok && projections.ok, chain_ok: chain.ok, projections };
}

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

/** Open `database` (a SQLite file path, `sqlite:<path>`, or a postgres:// URL), verify its ledger chain and audit its projections. */
export async function verifyLedgerDatabase(database: string): Promise<LedgerDatabaseReport> {
  if (/^postgres(ql)?:\/\//.test(database)) {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: database });
    await client.connect();
    try {
      await client.query('START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return await verifyAndAudit({ query: async <T>(sql: string, params: unknown[] = []) => (await client.query(toPostgresPlaceholders(sql), params)).rows as T[] }, 'postgres');
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    }
  }
  const path = database.startsWith('sqlite:') ? database.slice('sqlite:'.length) : database;
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.exec('BEGIN');
    return await verifyAndAudit(sqliteTx(db), 'sqlite');
  } finally {
    if (db.inTransaction) db.exec('COMMIT');
    db.close();
  }
}
