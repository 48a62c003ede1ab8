import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: witnessing and time anchors (issue 15). `checkpoint_cosignatures`
 * holds each verified witness cosignature (c2sp.org/tlog-cosignature line)
 * on a stored checkpoint, one per (size, witness key); `checkpoint_timestamps`
 * one verified RFC 3161 TimeStampToken (DER) per checkpoint size. Both
 * append-only like `checkpoints`. Frozen as the literal SQL it runs.
 */
const WITNESSING_UP = [
  `CREATE TABLE checkpoint_cosignatures (
    size INTEGER NOT NULL,
    witness_vkey TEXT NOT NULL,
    witness_name TEXT NOT NULL,
    line TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (size, witness_vkey)
  ) WITHOUT ROWID`,
  `CREATE INDEX checkpoint_cosignatures_witness ON checkpoint_cosignatures (witness_vkey, size)`,
  `CREATE TABLE checkpoint_timestamps (
    size INTEGER PRIMARY KEY,
    token BLOB NOT NULL,
    gen_time TEXT NOT NULL,
    tsa_name TEXT NOT NULL,
    received_at TEXT NOT NULL
  )`,
  `CREATE TRIGGER checkpoint_cosignatures_no_update BEFORE UPDATE ON checkpoint_cosignatures BEGIN SELECT RAISE(ABORT, 'checkpoint cosignatures are append-only: UPDATE rejected'); END`,
  `CREATE TRIGGER checkpoint_cosignatures_no_delete BEFORE DELETE ON checkpoint_cosignatures BEGIN SELECT RAISE(ABORT, 'checkpoint cosignatures are append-only: DELETE rejected'); END`,
  `CREATE TRIGGER checkpoint_timestamps_no_update BEFORE UPDATE ON checkpoint_timestamps BEGIN SELECT RAISE(ABORT, 'checkpoint timestamps are append-only: UPDATE rejected'); END`,
  `CREATE TRIGGER checkpoint_timestamps_no_delete BEFORE DELETE ON checkpoint_timestamps BEGIN SELECT RAISE(ABORT, 'checkpoint timestamps are append-only: DELETE rejected'); END`,
];

export class WitnessingSqlite1764530000000 implements MigrationInterface {
  name = 'WitnessingSqlite1764530000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of WITNESSING_UP) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE checkpoint_timestamps`);
    await q.query(`DROP TABLE checkpoint_cosignatures`);
  }
}
