import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sqlite: indexes for the cursor lists of issue 12 (`GET /api/receipts`,
 * `/api/jobs`, `/api/workflows`, `/api/plans`, `/api/coverage-reports`,
 * `/api/verification-batches`): each pages by ledger position. Frozen as the
 * literal SQL it runs; indexes only, no row is rewritten.
 */
const LIST_INDEXES = [
  ['receipts_position', 'receipts (position)'],
  ['timelines_first_position', 'timelines (first_position)'],
  ['workflows_position', 'workflows (position)'],
  ['plans_first_position', 'plans (first_position)'],
  ['coverage_reports_position', 'coverage_reports (position)'],
  ['verification_batches_position', 'verification_batches (position)'],
];

export class ListIndexesSqlite1764490000000 implements MigrationInterface {
  name = 'ListIndexesSqlite1764490000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, on] of LIST_INDEXES) await q.query(`CREATE INDEX ${name} ON ${on}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name] of LIST_INDEXES) await q.query(`DROP INDEX ${name}`);
  }
}
