import { MigrationInterface, QueryRunner } from 'typeorm';
import { backfillTree } from '../frozen/1764500000000-tree-backfill';

/**
 * SQLite: the verifiable log (issue 14). `tree_nodes` holds every complete
 * subtree of the RFC 6962 tree over the events (leaf index = position - 1),
 * `checkpoints` every signed checkpoint; both append-only like `events`.
 * The literal DDL is frozen here; the tree of an existing ledger is then
 * built from its events (RFC 6962 section 2.1, by the frozen copy in ../frozen/1764500000000-tree-backfill.ts).
 */
const VERIFIABLE_LOG_UP = [
  `CREATE INDEX events_event_hash ON events (event_hash)`,
  `CREATE INDEX receipts_output_hash ON receipts (output_hash)`,
  `CREATE TABLE tree_nodes (
    level INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (level, idx)
  ) WITHOUT ROWID`,
  `CREATE TABLE checkpoints (
    size INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    note TEXT NOT NULL,
    signed_at TEXT NOT NULL
  )`,
  `CREATE TRIGGER tree_nodes_no_update BEFORE UPDATE ON tree_nodes BEGIN SELECT RAISE(ABORT, 'tree nodes are append-only: UPDATE rejected'); END`,
  `CREATE TRIGGER tree_nodes_no_delete BEFORE DELETE ON tree_nodes BEGIN SELECT RAISE(ABORT, 'tree nodes are append-only: DELETE rejected'); END`,
  `CREATE TRIGGER checkpoints_no_update BEFORE UPDATE ON checkpoints BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only: UPDATE rejected'); END`,
  `CREATE TRIGGER checkpoints_no_delete BEFORE DELETE ON checkpoints BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only: DELETE rejected'); END`,
];

export class VerifiableLogSqlite1764500000000 implements MigrationInterface {
  name = 'VerifiableLogSqlite1764500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of VERIFIABLE_LOG_UP) await q.query(s);
    await backfillTree((sql, params) => q.query(sql, params));
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['checkpoints_no_delete', 'checkpoints_no_update', 'tree_nodes_no_delete', 'tree_nodes_no_update']) await q.query(`DROP TRIGGER ${t}`);
    await q.query(`DROP TABLE checkpoints`);
    await q.query(`DROP TABLE tree_nodes`);
    await q.query(`DROP INDEX receipts_output_hash`);
    await q.query(`DROP INDEX events_event_hash`);
  }
}
