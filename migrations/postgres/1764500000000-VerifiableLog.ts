import { MigrationInterface, QueryRunner } from 'typeorm';
import { backfillTree } from '../frozen/1764500000000-tree-backfill';

/**
 * PostgreSQL: the verifiable log (issue 14). `tree_nodes` holds every
 * complete subtree of the RFC 6962 tree over the events (leaf index =
 * position - 1), `checkpoints` every signed checkpoint; both append-only
 * like `events` (UPDATE, DELETE and TRUNCATE rejected). The literal DDL is
 * frozen here; the tree of an existing ledger is then built from its events
 * (RFC 6962 section 2.1, by the frozen copy in ../frozen/1764500000000-tree-backfill.ts).
 */
const VERIFIABLE_LOG_UP = [
  `CREATE INDEX events_event_hash ON events (event_hash)`,
  `CREATE INDEX receipts_output_hash ON receipts (output_hash)`,
  `CREATE TABLE tree_nodes (
    level SMALLINT NOT NULL,
    idx BIGINT NOT NULL,
    hash BYTEA NOT NULL,
    PRIMARY KEY (level, idx)
  )`,
  `CREATE TABLE checkpoints (
    size BIGINT PRIMARY KEY,
    root TEXT NOT NULL,
    note TEXT NOT NULL,
    signed_at TEXT NOT NULL
  )`,
  `CREATE FUNCTION log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION '% are append-only: % rejected', TG_TABLE_NAME, TG_OP; END $$`,
  `CREATE TRIGGER tree_nodes_no_update BEFORE UPDATE OR DELETE ON tree_nodes FOR EACH ROW EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER tree_nodes_no_truncate BEFORE TRUNCATE ON tree_nodes FOR EACH STATEMENT EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER checkpoints_no_update BEFORE UPDATE OR DELETE ON checkpoints FOR EACH ROW EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER checkpoints_no_truncate BEFORE TRUNCATE ON checkpoints FOR EACH STATEMENT EXECUTE FUNCTION log_append_only()`,
];

export class VerifiableLogPostgres1764500000000 implements MigrationInterface {
  name = 'VerifiableLogPostgres1764500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of VERIFIABLE_LOG_UP) await q.query(s);
    // `?` placeholders as $1, $2, ... (the frozen SQL has no `?` inside a literal).
    await backfillTree((sql, params) => {
      let n = 0;
      return q.query(sql.replace(/\?/g, () => `$${++n}`), params);
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE checkpoints`);
    await q.query(`DROP TABLE tree_nodes`);
    await q.query(`DROP INDEX receipts_output_hash`);
    await q.query(`DROP INDEX events_event_hash`);
    await q.query(`DROP FUNCTION log_append_only()`);
  }
}
