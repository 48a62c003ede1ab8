import { MigrationInterface, QueryRunner } from 'typeorm';
import { PLAN_TABLE_NAMES, PLAN_TABLES } from '../sqlite/1764460000000-CreatePlans';

/** PostgreSQL: plans, plan versions and coverage reports (same statements as SQLite). */
export class CreatePlansPostgres1764460000000 implements MigrationInterface {
  name = 'CreatePlansPostgres1764460000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of PLAN_TABLES) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [...PLAN_TABLE_NAMES].reverse()) await q.query(`DROP TABLE ${t}`);
  }
}
