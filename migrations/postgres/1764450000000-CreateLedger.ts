import { MigrationInterface, QueryRunner } from 'typeorm';
import { EVENTS_TABLE, OPERATIONAL_TABLES, PROJECTION_TABLES } from '../schema';

/** PostgreSQL: the events table, triggers rejecting UPDATE, DELETE and TRUNCATE, read models and API keys. */
export class CreateLedgerPostgres1764450000000 implements MigrationInterface {
  name = 'CreateLedgerPostgres1764450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(EVENTS_TABLE);
    await q.query(`CREATE INDEX events_type ON events (type)`);
    await q.query(`CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'events are append-only: % rejected', TG_OP; END $$`);
    await q.query(`CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only()`);
    await q.query(`CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()`);
    for (const s of [...PROJECTION_TABLES, ...OPERATIONAL_TABLES]) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['api_keys', 'workflow_steps', 'workflows', 'commitments', 'timeline_entries', 'timelines', 'receipts']) await q.query(`DROP TABLE ${t}`);
    await q.query(`DROP TABLE events`);
    await q.query(`DROP FUNCTION events_append_only()`);
  }
}
