import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: Nostr anchors of checkpoints (issue 33). `nostr_anchors` holds
 * the one signed NIP-01 event per anchored checkpoint size (its JSON exactly
 * as published); `nostr_publications` every attempt to publish it to a relay
 * (`ok` 1: the relay answered OK true; 0: it refused, with its message, or
 * could not be reached). Both append-only (UPDATE, DELETE and TRUNCATE
 * rejected by log_append_only(), from the VerifiableLog migration). Frozen
 * as the literal SQL it runs.
 */
const NOSTR_UP = [
  `CREATE TABLE nostr_anchors (
    size BIGINT PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    pubkey TEXT NOT NULL,
    event TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`,
  `CREATE TABLE nostr_publications (
    size BIGINT NOT NULL,
    relay TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    ok SMALLINT NOT NULL,
    message TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (size, relay, attempt)
  )`,
  `CREATE TRIGGER nostr_anchors_no_update BEFORE UPDATE OR DELETE ON nostr_anchors FOR EACH ROW EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER nostr_anchors_no_truncate BEFORE TRUNCATE ON nostr_anchors FOR EACH STATEMENT EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER nostr_publications_no_update BEFORE UPDATE OR DELETE ON nostr_publications FOR EACH ROW EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER nostr_publications_no_truncate BEFORE TRUNCATE ON nostr_publications FOR EACH STATEMENT EXECUTE FUNCTION log_append_only()`,
];

export class NostrAnchorsPostgres1764583300000 implements MigrationInterface {
  name = 'NostrAnchorsPostgres1764583300000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of NOSTR_UP) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE nostr_publications`);
    await q.query(`DROP TABLE nostr_anchors`);
  }
}
