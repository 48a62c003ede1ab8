/**
 * Tables of the verification queue (same types in SQLite and PostgreSQL).
 * Both are projections of the `batch:<id>` streams: rebuildable from the
 * ledger. `verification_results` has one row per (batch, target): a chunk
 * processed twice (retried, stalled, duplicated) never records a result twice.
 */
export const VERIFICATION_TABLES = [
  `CREATE TABLE verification_batches (
    batch_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    total INTEGER NOT NULL,
    done INTEGER NOT NULL,
    invalid INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    completed_at TEXT,
    position BIGINT NOT NULL
  )`,
  `CREATE TABLE verification_results (
    batch_id TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    reasons TEXT NOT NULL,
    verified_at TEXT NOT NULL,
    position BIGINT NOT NULL,
    PRIMARY KEY (batch_id, target_kind, target_id)
  )`,
  `CREATE INDEX verification_results_seq ON verification_results (batch_id, seq)`,
];

export const VERIFICATION_TABLE_NAMES = ['verification_results', 'verification_batches'];
