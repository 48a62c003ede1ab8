import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: Nostr anchors of checkpoints (issue 33). `nostr_anchors` holds the
 * one signed NIP-01 event per anchored checkpoint size (its JSON exactly as
 * published); `nostr_publications` every attempt to publish it to a relay
 * (`ok` 1: the relay answered OK true; 0: it refused, with its message, or
 * could not be reached). Both append-only. Frozen as the literal SQL it runs.
 */
const NOSTR_UP = [
  `CREATE TABLE nostr_anchors (
    size INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    pubkey TEXT NOT NULL,
    event TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`,
  `CREATE TABLE nostr_publications (
    size INTEGER NOT NULL,
    relay TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    message TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (size, relay, attempt)
  ) WITHOUT ROWID`,
  `CREATE TRIGGER nostr_anchors_no_update BEFORE UPDATE ON nostr_anchors BEGIN SELECT RAISE(ABORT, 'nostr anchors are append-only: UPDATE rejected'); END`,
  `CREATE TRIGGER nostr_anchors_no_delete BEFORE DELETE ON nostr_anchors BEGIN SELECT RAISE(ABORT, 'nostr anchors are append-only: DELETE rejected'); END`,
  `CREATE TRIGGER nostr_publications_no_update BEFORE UPDATE ON nostr_publications BEGIN SELECT RAISE(ABORT, 'nostr publications are append-only: UPDATE rejected'); END`,
  `CREATE TRIGGER nostr_publications_no_delete BEFORE DELETE ON nostr_publications BEGIN SELECT RAISE(ABORT, 'nostr publications are append-only: DELETE rejected'); END`,
];

export class NostrAnchorsSqlite1764583300000 implements MigrationInterface {
  name = 'NostrAnchorsSqlite1764583300000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of NOSTR_UP) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE nostr_publications`);
    await q.query(`DROP TABLE nostr_anchors`);
  }
}
