import { MigrationInterface, QueryRunner } from 'typeorm';

/* Frozen: the literal statements this migration ran (never edit them; a change is a new migration). */
const VERIFICATION_TABLES = [
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

const VERIFICATION_TABLE_NAMES = ['verification_results', 'verification_batches'];

/** PostgreSQL: verification batches and their per-target results (read models of `batch:<id>` streams). */
export class CreateVerificationBatchesPostgres1764470000000 implements MigrationInterface {
  name = 'CreateVerificationBatchesPostgres1764470000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of VERIFICATION_TABLES) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of VERIFICATION_TABLE_NAMES) await q.query(`DROP TABLE ${t}`);
  }
}
