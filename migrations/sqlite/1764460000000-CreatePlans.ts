import { MigrationInterface, QueryRunner } from 'typeorm';

/* Frozen: the literal statements this migration ran (never edit them; a change is a new migration). */
/**
 * Read models of expected-action plans and coverage reports (src/coverage),
 * projections of `PlanRegistered`, `PlanAmended` and `CoverageReportIssued`.
 * The same statements serve both dialects (TEXT, INTEGER, BIGINT).
 */
const PLAN_TABLES = [
  `CREATE TABLE plans (
    plan_id TEXT PRIMARY KEY,
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    current_version INTEGER NOT NULL,
    title TEXT NOT NULL,
    first_position BIGINT NOT NULL,
    last_position BIGINT NOT NULL,
    CONSTRAINT plans_one_per_subject UNIQUE (subject_kind, subject_id)
  )`,
  `CREATE TABLE plan_versions (
    plan_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    plan TEXT NOT NULL,
    digest TEXT NOT NULL,
    reason TEXT,
    registered_at TEXT NOT NULL,
    position BIGINT NOT NULL,
    PRIMARY KEY (plan_id, version)
  )`,
  `CREATE INDEX plan_versions_subject ON plan_versions (subject_kind, subject_id, position)`,
  `CREATE TABLE coverage_reports (
    report_id TEXT PRIMARY KEY,
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    plan_version INTEGER NOT NULL,
    as_of_position BIGINT NOT NULL,
    result TEXT NOT NULL,
    digest TEXT NOT NULL,
    report TEXT NOT NULL,
    issued_at TEXT NOT NULL,
    position BIGINT NOT NULL
  )`,
  `CREATE INDEX coverage_reports_subject ON coverage_reports (subject_kind, subject_id)`,
];

const PLAN_TABLE_NAMES = ['plans', 'plan_versions', 'coverage_reports'];

/** SQLite: plans, plan versions and coverage reports. */
export class CreatePlansSqlite1764460000000 implements MigrationInterface {
  name = 'CreatePlansSqlite1764460000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of PLAN_TABLES) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [...PLAN_TABLE_NAMES].reverse()) await q.query(`DROP TABLE ${t}`);
  }
}
