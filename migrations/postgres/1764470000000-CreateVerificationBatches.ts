import { MigrationInterface, QueryRunner } from 'typeorm';
import { VERIFICATION_TABLE_NAMES, VERIFICATION_TABLES } from '../../src/verification-queue/schema';

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
