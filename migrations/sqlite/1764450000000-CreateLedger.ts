import { MigrationInterface, QueryRunner } from 'typeorm';
import { EVENTS_TABLE, OPERATIONAL_TABLES, PROJECTION_TABLES } from '../schema';

/** SQLite: the events table, its append-only triggers, read models and API keys. */
export class CreateLedgerSqlite1764450000000 implements MigrationInterface {
  name = 'CreateLedgerSqlite1764450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(EVENTS_TABLE);
    await q.query(`CREATE INDEX events_type ON events (type)`);
    await q.query(`CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE rejected'); END`);
    await q.query(`CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE rejected'); END`);
    for (const s of [...PROJECTION_TABLES, ...OPERATIONAL_TABLES]) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['api_keys', 'workflow_steps', 'workflows', 'commitments', 'timeline_entries', 'timelines', 'receipts']) await q.query(`DROP TABLE ${t}`);
    await q.query(`DROP TRIGGER events_no_delete`);
    await q.query(`DROP TRIGGER events_no_update`);
    await q.query(`DROP TABLE events`);
  }
}
