import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: event format 3 (issue 29, erasure). New columns of `events`: the
 * previous position of the event's stream, its public identifiers, the
 * payload commitment and its salt (existing events keep format 1 or 2 and
 * NULLs). The append-only trigger is replaced by one that allows exactly one
 * UPDATE: erasing a payload (data to '', salt to NULL, every other column
 * unchanged). `erasures` and `erased_events` are the read model of
 * `PayloadsErased` events (one `erasures` row per erasure, whose pages are
 * several events; `erased_events.erasure_position` the event that erased it); `api_keys.retention_period` a key's own
 * retention. ADD COLUMN rewrites no row. Frozen as the literal SQL it runs.
 */
const UP = [
  `ALTER TABLE events ADD COLUMN stream_prev BIGINT`,
  `ALTER TABLE events ADD COLUMN public_ids TEXT`,
  `ALTER TABLE events ADD COLUMN payload_commitment TEXT`,
  `ALTER TABLE events ADD COLUMN payload_salt TEXT`,
  `DROP TRIGGER events_no_update`,
  `CREATE TRIGGER events_no_update BEFORE UPDATE ON events WHEN NOT (NEW.data = '' AND NEW.payload_salt IS NULL AND NEW.position IS OLD.position AND NEW.stream_id IS OLD.stream_id
    AND NEW.stream_position IS OLD.stream_position AND NEW.type IS OLD.type AND NEW.recorded_at IS OLD.recorded_at AND NEW.prev_hash IS OLD.prev_hash AND NEW.event_hash IS OLD.event_hash
    AND NEW.format IS OLD.format AND NEW.key_id IS OLD.key_id AND NEW.key_name IS OLD.key_name AND NEW.stream_prev IS OLD.stream_prev AND NEW.public_ids IS OLD.public_ids
    AND NEW.payload_commitment IS OLD.payload_commitment)
    BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE rejected (only erasing a payload is allowed)'); END`,
  `CREATE TABLE erasures (erasure_id TEXT PRIMARY KEY, position BIGINT NOT NULL, erased_at TEXT NOT NULL, key_id TEXT NOT NULL, key_name TEXT NOT NULL, reason TEXT NOT NULL, legal_basis TEXT NOT NULL, event_count INTEGER NOT NULL)`,
  `CREATE TABLE erased_events (position BIGINT PRIMARY KEY, erasure_id TEXT NOT NULL, erasure_position BIGINT NOT NULL)`,
  `CREATE INDEX erased_events_erasure ON erased_events (erasure_id)`,
  `ALTER TABLE api_keys ADD COLUMN retention_period TEXT`,
];

export class EventFormat3Sqlite1764570000000 implements MigrationInterface {
  name = 'EventFormat3Sqlite1764570000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of UP) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN retention_period`);
    await q.query(`DROP TABLE erased_events`);
    await q.query(`DROP TABLE erasures`);
    await q.query(`DROP TRIGGER events_no_update`);
    await q.query(`CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE rejected'); END`);
    for (const c of ['payload_salt', 'payload_commitment', 'public_ids', 'stream_prev']) await q.query(`ALTER TABLE events DROP COLUMN ${c}`);
  }
}
