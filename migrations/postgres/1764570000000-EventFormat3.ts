import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: event format 3 (issue 29, erasure). New columns of `events`
 * (existing events keep format 1 or 2 and NULLs: no row is rewritten). The
 * append-only trigger function now allows exactly one UPDATE: erasing a
 * payload (data to '', salt to NULL, every other column unchanged); DELETE
 * and TRUNCATE stay refused. `erasures` and `erased_events` are the read
 * model of `PayloadsErased` events (one `erasures` row per erasure, whose
 * pages are several events; `erased_events.erasure_position` the event that
 * erased it); `api_keys.retention_period` a key's own
 * retention. Frozen as the literal SQL it runs.
 */
export class EventFormat3Postgres1764570000000 implements MigrationInterface {
  name = 'EventFormat3Postgres1764570000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN stream_prev BIGINT, ADD COLUMN public_ids TEXT, ADD COLUMN payload_commitment TEXT, ADD COLUMN payload_salt TEXT`);
    await q.query(`CREATE OR REPLACE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' AND NEW.data = '' AND NEW.payload_salt IS NULL
          AND (NEW.position, NEW.stream_id, NEW.stream_position, NEW.type, NEW.recorded_at, NEW.prev_hash, NEW.event_hash) = (OLD.position, OLD.stream_id, OLD.stream_position, OLD.type, OLD.recorded_at, OLD.prev_hash, OLD.event_hash)
          AND NEW.format IS NOT DISTINCT FROM OLD.format AND NEW.key_id IS NOT DISTINCT FROM OLD.key_id AND NEW.key_name IS NOT DISTINCT FROM OLD.key_name
          AND NEW.stream_prev IS NOT DISTINCT FROM OLD.stream_prev AND NEW.public_ids IS NOT DISTINCT FROM OLD.public_ids AND NEW.payload_commitment IS NOT DISTINCT FROM OLD.payload_commitment
        THEN RETURN NEW; END IF;
        RAISE EXCEPTION 'events are append-only: % rejected', TG_OP;
      END $$`);
    await q.query(`CREATE TABLE erasures (erasure_id TEXT PRIMARY KEY, position BIGINT NOT NULL, erased_at TEXT NOT NULL, key_id TEXT NOT NULL, key_name TEXT NOT NULL, reason TEXT NOT NULL, legal_basis TEXT NOT NULL, event_count INTEGER NOT NULL)`);
    await q.query(`CREATE TABLE erased_events (position BIGINT PRIMARY KEY, erasure_id TEXT NOT NULL, erasure_position BIGINT NOT NULL)`);
    await q.query(`CREATE INDEX erased_events_erasure ON erased_events (erasure_id)`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN retention_period TEXT`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN retention_period`);
    await q.query(`DROP TABLE erased_events`);
    await q.query(`DROP TABLE erasures`);
    await q.query(`CREATE OR REPLACE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'events are append-only: % rejected', TG_OP; END $$`);
    await q.query(`ALTER TABLE events DROP COLUMN payload_salt, DROP COLUMN payload_commitment, DROP COLUMN public_ids, DROP COLUMN stream_prev`);
  }
}
