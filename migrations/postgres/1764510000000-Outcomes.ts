import { MigrationInterface, QueryRunner } from 'typeorm';

/* Frozen: the literal statements this migration ran (never edit them; a change is a new migration). */
/**
 * Postgres: the read model of outcome reports (issue 18, src/outcomes), the
 * projection of `OutcomeReported`. Rows are never updated: a later outcome
 * supersedes an earlier one by ledger order, it never edits it. Looked up by
 * the receipt an outcome answers (pages, coverage reports) and by job.
 */
const OUTCOMES_TABLE = `CREATE TABLE outcomes (
    outcome_id TEXT PRIMARY KEY,
    id_as_given TEXT NOT NULL,
    job_id TEXT NOT NULL,
    receipt_id TEXT NOT NULL,
    effect TEXT NOT NULL,
    result TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    system TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    raw TEXT NOT NULL,
    publication TEXT NOT NULL,
    position BIGINT NOT NULL,
    recorded_at TEXT NOT NULL
  )`;

export class OutcomesPostgres1764510000000 implements MigrationInterface {
  name = 'OutcomesPostgres1764510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(OUTCOMES_TABLE);
    await q.query(`CREATE INDEX outcomes_receipt ON outcomes (receipt_id, position)`);
    await q.query(`CREATE INDEX outcomes_job ON outcomes (job_id, position)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outcomes_job`);
    await q.query(`DROP INDEX outcomes_receipt`);
    await q.query(`DROP TABLE outcomes`);
  }
}
