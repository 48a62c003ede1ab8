/**
 * The projection audit: every row of every read model checked against the
 * events, including the columns later events update (superseded_by,
 * counters, closed flags, verdicts) and rows that should not exist or are
 * missing.
 *
 * How: the events up to one position H are replayed through the registered
 * projections into a scratch SQLite database (a temporary file, migrations
 * run, the same repository SQL through a Tx over it), and each projection
 * table is then streamed from both databases in primary-key order and merged
 * row by row, values normalised across drivers (PostgreSQL BIGINT as text,
 * SQLite integers as numbers). The first failure of each table is named with
 * its key and ledger position.
 *
 * Concurrency: the caller gives the live database as one read snapshot (a
 * REPEATABLE READ transaction on PostgreSQL, a read transaction on its own
 * connection for a SQLite file), and H is the head read inside it. Projections
 * are written in the transaction that appends their event, so the snapshot's
 * read models are exactly the replay of the events up to H: a write that
 * commits while the audit runs is in neither, and cannot show as a mismatch.
 * No write lock is held.
 */
import type { Dialect } from '../database/database-url';
import type { Tx } from '../database/database.service';
import type { Queryable } from '../database/rows';
import { openScratchDatabase } from '../database/scratch';
import type { StoredEvent } from '../core/ledger/event-hash';
import { EventsRepository } from './events.repository';
import { KeyColumn, READ_MODEL_KEYS, ReadModelsRepository } from './read-models.repository';

/** One row that differs from the replay, or is present on one side only. */
export interface ProjectionFailure {
  /** `differs`: a column's value; `missing`: the events make a row the table lacks; `unexpected`: a row no event makes. */
  kind: 'differs' | 'missing' | 'unexpected';
  /** The row's ledger position (`position`, else `last_position`), or null for a table without one (workflow_steps). */
  position: number | null;
  /** The row's primary key. */
  key: Record<string, unknown>;
  /** For `differs`: the first column that differs, with both values. */
  column?: string;
  stored?: unknown;
  expected?: unknown;
  detail: string;
}

/** The check of one table. */
export interface ProjectionTableReport {
  table: string;
  ok: boolean;
  /** Rows compared: the union of the stored rows and the replayed ones. */
  rows_checked: number;
  /** Rows that failed (only the first is described). */
  failures: number;
  first_failure: ProjectionFailure | null;
}

/** The whole audit, as of one ledger position. */
export interface ProjectionAuditReport {
  ok: boolean;
  /** The ledger position the read models were compared at (0: empty ledger). */
  as_of_position: number;
  events_replayed: number;
  /** The first event the projections could not apply (its data is not what its type writes), or null. */
  replay_failure: { position: number; type: string; detail: string } | null;
  tables: ProjectionTableReport[];
}

/** What the audit replays through: the registered projections (their tables, and one apply for all). */
export interface ProjectionSet {
  tables(): string[];
  apply(tx: Tx, event: StoredEvent, data?: unknown, retained?: ReadonlyMap<number, unknown>): Promise<void>;
}

const PAGE = 2000;
const yieldLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A stored value as comparable text: null, or its decimal or string form (drivers differ in type, not in value). */
export function normalised(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return String(v);
}

/** Compare two keys in the order both databases stream them (integers numerically, text by UTF-8 bytes). */
function compareKeys(keys: readonly KeyColumn[], a: Record<string, unknown>, b: Record<string, unknown>): number {
  for (const [name, kind] of keys) {
    const x = a[name];
    const y = b[name];
    const c = kind === 'int' ? Math.sign(Number(x) - Number(y)) : Buffer.compare(Buffer.from(String(x), 'utf8'), Buffer.from(String(y), 'utf8'));
    if (c !== 0) return c;
  }
  return 0;
}

/** A row's ledger position for a report. */
export function rowPosition(r: Record<string, unknown>): number | null {
  const p = r.position ?? r.last_position ?? null;
  return p === null ? null : Number(p);
}

/** The first column whose value differs between a stored row and the replayed one, or null. */
export function firstDifference(stored: Record<string, unknown>, expected: Record<string, unknown>): { column: string; stored: unknown; expected: unknown } | null {
  const columns = [...new Set([...Object.keys(expected), ...Object.keys(stored)])];
  for (const c of columns) {
    if (normalised(stored[c]) !== normalised(expected[c])) return { column: c, stored: stored[c] ?? null, expected: expected[c] ?? null };
  }
  return null;
}

/** A value cut for a report (raw texts can be megabytes). */
function shown(v: unknown): unknown {
  return typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}... (${v.length} characters)` : v;
}

/** A row stream in key order, read in pages. */
class RowCursor {
  private buf: Record<string, unknown>[] = [];
  private i = 0;
  private done = false;
  private after: unknown[] | null = null;
  constructor(
    private readonly repo: ReadModelsRepository,
    private readonly q: Queryable,
    private readonly dialect: Dialect,
    private readonly table: string,
    private readonly keys: readonly KeyColumn[],
  ) {}

  async peek(): Promise<Record<string, unknown> | null> {
    if (this.i < this.buf.length) return this.buf[this.i];
    if (this.done) return null;
    if (this.after !== null) await yieldLoop();
    this.buf = await this.repo.rowsAfter(this.q, this.dialect, this.table, this.after, PAGE);
    this.i = 0;
    if (this.buf.length < PAGE) this.done = true;
    if (this.buf.length === 0) return null;
    const last = this.buf[this.buf.length - 1];
    this.after = this.keys.map(([n]) => last[n]);
    return this.buf[0];
  }

  next(): void {
    this.i++;
  }
}

/** Merge one table's stored rows with the replayed ones. */
async function auditTable(repo: ReadModelsRepository, live: Queryable, dialect: Dialect, scratch: Tx, table: string): Promise<ProjectionTableReport> {
  const keys = READ_MODEL_KEYS[table];
  const stored = new RowCursor(repo, live, dialect, table, keys);
  const expected = new RowCursor(repo, scratch, 'sqlite', table, keys);
  let rows = 0;
  let failures = 0;
  let first: ProjectionFailure | null = null;
  const keyOf = (r: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(keys.map(([n, kind]) => [n, kind === 'int' ? Number(r[n]) : r[n]]));
  const fail = (f: ProjectionFailure): void => {
    failures++;
    first ??= f;
  };
  for (;;) {
    const s = await stored.peek();
    const e = await expected.peek();
    if (!s && !e) break;
    rows++;
    const c = !s ? 1 : !e ? -1 : compareKeys(keys, s, e);
    if (c === 0) {
      const d = firstDifference(s as Record<string, unknown>, e as Record<string, unknown>);
      if (d) {
        const position = rowPosition(e as Record<string, unknown>) ?? rowPosition(s as Record<string, unknown>);
        fail({
          kind: 'differs',
          position,
          key: keyOf(s as Record<string, unknown>),
          column: d.column,
          stored: shown(d.stored),
          expected: shown(d.expected),
          detail: `${table}.${d.column} of ${JSON.stringify(keyOf(s as Record<string, unknown>))} is not what the events up to this position make`,
        });
      }
      stored.next();
      expected.next();
    } else if (c < 0) {
      const r = s as Record<string, unknown>;
      fail({ kind: 'unexpected', position: rowPosition(r), key: keyOf(r), detail: `${table} holds a row ${JSON.stringify(keyOf(r))} that no event makes` });
      stored.next();
    } else {
      const r = e as Record<string, unknown>;
      fail({ kind: 'missing', position: rowPosition(r), key: keyOf(r), detail: `${table} lacks the row ${JSON.stringify(keyOf(r))} its events make` });
      expected.next();
    }
  }
  return { table, ok: failures === 0, rows_checked: rows, failures, first_failure: first };
}

/**
 * Audit every projection table of `live` (one read snapshot: see the file
 * comment) against the replay of its events through `projections`. Returns
 * the report; throws only when a database cannot be read.
 */
export async function auditProjections(live: Queryable, dialect: Dialect, projections: ProjectionSet): Promise<ProjectionAuditReport> {
  const tables = projections.tables();
  for (const t of tables) if (!READ_MODEL_KEYS[t]) throw new Error(`projection table ${t} has no primary key in READ_MODEL_KEYS`);
  const events = new EventsRepository();
  const repo = new ReadModelsRepository();
  const head = (await events.head(live))?.position ?? 0;
  const scratch = await openScratchDatabase();
  try {
    let replayed = 0;
    let replayFailure: ProjectionAuditReport['replay_failure'] = null;
    const retained = await events.retainedPayloads(live, head);
    scratch.begin();
    for (let after = 0; after < head; ) {
      const page = await events.page(live, after, head, 5000);
      if (page.length === 0) break;
      for (const e of page) {
        // Each event in a savepoint: one the projections cannot apply leaves nothing half-written.
        await scratch.tx.query('SAVEPOINT ev');
        try {
          await projections.apply(scratch.tx, e, undefined, retained);
          await scratch.tx.query('RELEASE ev');
          replayed++;
        } catch (err) {
          await scratch.tx.query('ROLLBACK TO ev');
          await scratch.tx.query('RELEASE ev');
          replayFailure ??= { position: e.position, type: String(e.type), detail: `the projections cannot apply this event: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500) };
        }
      }
      after = page[page.length - 1].position;
      await yieldLoop();
    }
    scratch.commit();
    const reports: ProjectionTableReport[] = [];
    for (const t of tables) reports.push(await auditTable(repo, live, dialect, scratch.tx, t));
    return { ok: replayFailure === null && reports.every((r) => r.ok), as_of_position: head, events_replayed: replayed, replay_failure: replayFailure, tables: reports };
  } finally {
    scratch.close();
  }
}
