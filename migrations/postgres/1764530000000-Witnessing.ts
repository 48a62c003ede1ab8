import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: witnessing and time anchors (issue 15). `checkpoint_cosignatures`
 * holds each verified witness cosignature (c2sp.org/tlog-cosignature line)
 * on a stored checkpoint, one per (size, witness key); `checkpoint_timestamps`
 * one verified RFC 3161 TimeStampToken (DER) per checkpoint size. Both
 * append-only like `checkpoints` (UPDATE, DELETE and TRUNCATE rejected by
 * log_append_only(), from the VerifiableLog migration). Frozen as the
 * literal SQL it runs.
 */
const WITNESSING_UP = [
  `CREATE TABLE checkpoint_cosignatures (
    size BIGINT NOT NULL,
    witness_vkey TEXT NOT NULL,
    witness_name TEXT NOT NULL,
    line TEXT NOT NULL,
    timestamp BIGINT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (size, witness_vkey)
  )`,
  `CREATE INDEX checkpoint_cosignatures_witness ON checkpoint_cosignatures (witness_vkey, size)`,
  `CREATE TABLE checkpoint_timestamps (
    size BIGINT PRIMARY KEY,
    token BYTEA NOT NULL,
    gen_time TEXT NOT NULL,
    tsa_name TEXT NOT NULL,
    received_at TEXT NOT NULL
  )`,
  `CREATE TRIGGER checkpoint_cosignatures_no_update BEFORE UPDATE OR DELETE ON checkpoint_cosignatures FOR EACH ROW EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER checkpoint_cosignatures_no_truncate BEFORE TRUNCATE ON checkpoint_cosignatures FOR EACH STATEMENT EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER checkpoint_timestamps_no_update BEFORE UPDATE OR DELETE ON checkpoint_timestamps FOR EACH ROW EXECUTE FUNCTION log_append_only()`,
  `CREATE TRIGGER checkpoint_timestamps_no_truncate BEFORE TRUNCATE ON checkpoint_timestamps FOR EACH STATEMENT EXECUTE FUNCTION log_append_only()`,
];

export class WitnessingPostgres1764530000000 implements MigrationInterface {
  name = 'WitnessingPostgres1764530000000';

  async up(q: QueryRunner): Promise<void> {
    for (const s of WITNESSING_UP) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE checkpoint_timestamps`);
    await q.query(`DROP TABLE checkpoint_cosignatures`);
  }
}
