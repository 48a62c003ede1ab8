import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: who wrote each event, and what each key may do (integrity
 * issue). Frozen as the literal SQL it runs. A constant default is stored in
 * the catalogue, so no row of `events` is rewritten and the append-only
 * triggers are not fired; existing events keep `format` 1 and no key.
 */
export class KeyAttributionPostgres1764480000000 implements MigrationInterface {
  name = 'KeyAttributionPostgres1764480000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN format INTEGER NOT NULL DEFAULT 1`);
    await q.query(`ALTER TABLE events ADD COLUMN key_id TEXT`);
    await q.query(`ALTER TABLE events ADD COLUMN key_name TEXT`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN owner TEXT`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN systems TEXT`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN gateway INTEGER NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN publication TEXT NOT NULL DEFAULT 'full'`);
    await q.query(`ALTER TABLE receipts ADD COLUMN publication TEXT NOT NULL DEFAULT 'full'`);
    await q.query(`ALTER TABLE timeline_entries ADD COLUMN publication TEXT NOT NULL DEFAULT 'full'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE timeline_entries DROP COLUMN publication`);
    await q.query(`ALTER TABLE receipts DROP COLUMN publication`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN publication, DROP COLUMN gateway, DROP COLUMN systems, DROP COLUMN owner`);
    await q.query(`ALTER TABLE events DROP COLUMN key_name, DROP COLUMN key_id, DROP COLUMN format`);
  }
}
