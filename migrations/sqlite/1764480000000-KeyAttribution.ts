import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: who wrote each event, and what each key may do (integrity issue).
 * Frozen as the literal SQL it runs. ADD COLUMN rewrites no row, so the
 * append-only triggers on `events` are not fired; existing events keep
 * `format` 1 (hashed without the key) and no key.
 */
const KEY_ATTRIBUTION_UP = [
  `ALTER TABLE events ADD COLUMN format INTEGER NOT NULL DEFAULT 1`,
  `ALTER TABLE events ADD COLUMN key_id TEXT`,
  `ALTER TABLE events ADD COLUMN key_name TEXT`,
  `ALTER TABLE api_keys ADD COLUMN owner TEXT`,
  `ALTER TABLE api_keys ADD COLUMN systems TEXT`,
  `ALTER TABLE api_keys ADD COLUMN gateway INTEGER NOT NULL DEFAULT 0`,
  `ALTER TABLE api_keys ADD COLUMN publication TEXT NOT NULL DEFAULT 'full'`,
  `ALTER TABLE receipts ADD COLUMN publication TEXT NOT NULL DEFAULT 'full'`,
  `ALTER TABLE timeline_entries ADD COLUMN publication TEXT NOT NULL DEFAULT 'full'`,
];

export class KeyAttributionSqlite1764480000000 implements MigrationInterface {
  name = 'KeyAttributionSqlite1764480000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of KEY_ATTRIBUTION_UP) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    // SQLite >= 3.35 drops columns; the triggers stay.
    for (const [t, c] of [['timeline_entries', 'publication'], ['receipts', 'publication'], ['api_keys', 'publication'], ['api_keys', 'gateway'], ['api_keys', 'systems'], ['api_keys', 'owner'], ['events', 'key_name'], ['events', 'key_id'], ['events', 'format']]) {
      await q.query(`ALTER TABLE ${t} DROP COLUMN ${c}`);
    }
  }
}
