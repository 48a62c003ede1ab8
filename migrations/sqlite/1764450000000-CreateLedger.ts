import { MigrationInterface, QueryRunner } from 'typeorm';

/* Frozen: the literal statements this migration ran (never edit them; a change is a new migration). */

/** The append-only event log and the ledger hash chain. */
const EVENTS_TABLE = `
CREATE TABLE events (
  position BIGINT PRIMARY KEY,
  stream_id TEXT NOT NULL,
  stream_position INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  event_hash TEXT NOT NULL,
  CONSTRAINT events_stream_version UNIQUE (stream_id, stream_position)
)`;

/** Read models: projections of the events, rebuildable at any time. */
const PROJECTION_TABLES = [
  `CREATE TABLE receipts (
    id TEXT PRIMARY KEY,
    id_as_given TEXT NOT NULL,
    form TEXT NOT NULL,
    wrapped_in TEXT,
    raw TEXT NOT NULL,
    verdict TEXT NOT NULL,
    reasons TEXT NOT NULL,
    provenance_class TEXT,
    tool TEXT,
    status TEXT,
    output_hash TEXT,
    created_at TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    position BIGINT NOT NULL,
    recorded_at TEXT NOT NULL
  )`,
  `CREATE TABLE timelines (
    job_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    entry_count INTEGER NOT NULL,
    head_digest TEXT,
    closed INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    reasons TEXT NOT NULL,
    construction TEXT,
    first_position BIGINT NOT NULL,
    last_position BIGINT NOT NULL
  )`,
  `CREATE TABLE timeline_entries (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    raw TEXT NOT NULL,
    entry_digest TEXT,
    receipt_id TEXT,
    tool TEXT,
    provenance_class TEXT,
    close INTEGER NOT NULL,
    position BIGINT NOT NULL,
    PRIMARY KEY (job_id, seq)
  )`,
  `CREATE INDEX timeline_entries_receipt ON timeline_entries (receipt_id)`,
  `CREATE TABLE commitments (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    raw TEXT NOT NULL,
    binding INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    entry_count_at_record INTEGER NOT NULL,
    position BIGINT NOT NULL,
    recorded_at TEXT NOT NULL
  )`,
  `CREATE INDEX commitments_job ON commitments (job_id)`,
  `CREATE TABLE workflows (
    workflow_id TEXT PRIMARY KEY,
    receipt_id TEXT NOT NULL,
    raw TEXT NOT NULL,
    assembled INTEGER NOT NULL,
    merkle_root TEXT,
    status TEXT,
    goal TEXT,
    position BIGINT NOT NULL,
    recorded_at TEXT NOT NULL
  )`,
  `CREATE TABLE workflow_steps (
    workflow_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    receipt_id TEXT NOT NULL,
    tool TEXT,
    PRIMARY KEY (workflow_id, seq)
  )`,
  `CREATE INDEX workflow_steps_receipt ON workflow_steps (receipt_id)`,
];

/** Operational tables (not projections): API keys are stored hashed. */
const OPERATIONAL_TABLES = [
  `CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  )`,
];

/** SQLite: the events table, its append-only triggers, read models and API keys. */
export class CreateLedgerSqlite1764450000000 implements MigrationInterface {
  name = 'CreateLedgerSqlite1764450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(EVENTS_TABLE);
    await q.query(`CREATE INDEX events_type ON events (type)`);
    await q.query(`CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE rejected'); END`);
    await q.query(`CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE rejected'); END`);
    for (const s of [...PROJECTION_TABLES, ...OPERATIONAL_TABLES]) await q.query(s);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['api_keys', 'workflow_steps', 'workflows', 'commitments', 'timeline_entries', 'timelines', 'receipts']) await q.query(`DROP TABLE ${t}`);
    await q.query(`DROP TRIGGER events_no_delete`);
    await q.query(`DROP TRIGGER events_no_update`);
    await q.query(`DROP TABLE events`);
  }
}
