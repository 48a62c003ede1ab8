/**
 * The per-record guard: before a page or a verifier answers from a record's
 * read-model rows, those rows are checked against the record's own stream of
 * events. The stream is replayed through the registered projections into a
 * small in-memory SQLite database (made from a migrated template, copied per
 * check), or, for a projection that offers it (the job timelines), its rows
 * computed without a database by `expectedRows`; the record's rows are then
 * compared column by column (values normalised across drivers), so a row edited behind the append-only
 * triggers (its bytes, a derived verdict, superseded_by, a counter), deleted
 * or inserted is refused with 409 `projection_mismatch` and logged at error
 * level instead of being shown. Cost: one indexed read of the stream, one of
 * each table's rows, one of the stream version, and the replay of the
 * stream's events in memory.
 *
 * Every row of a record changes only through its own stream's events, so
 * rows read while the stream's version stays the same (read before and after
 * them) are exactly what its first `version` events make: a write that lands
 * in between makes the check start over (five tries). What a stream makes
 * at a version is kept as one digest per table, so a record read again costs
 * the version reads, the rows and one hash over them, not the events and
 * their replay (bench/guard-cost.ts).
 */
import { Injectable, Logger } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import { ProjectionMismatchError } from '../common/errors';
import type { Queryable } from '../database/rows';
import { migrateSqlite, sqliteTx } from '../database/scratch';
import { EventsRepository } from './events.repository';
import { normalised, rowPosition } from './projection-audit';
import { ErasedPayloadError, ProjectionRegistry, RetainedPayloads, UNCHECKED } from './projections';
import { recordedEvent } from './event';
import type { StoredEvent } from '../core/ledger/event-hash';

type ReplayEvent = Awaited<ReturnType<EventsRepository['streamForReplay']>>[number];

/**
 * One SHA-256 over a record's rows of one table, in key order, each value
 * length-prefixed (an unambiguous encoding), the `unchecked` columns left out.
 */
export function rowsDigest(keys: readonly KeyColumn[], rows: readonly Record<string, unknown>[], unchecked: ReadonlySet<string>): string {
  const h = createHash('sha256');
  if (rows.length === 0) return h.update('no rows').digest('hex');
  const columns = Object.keys(rows[0])
    .filter((c) => !unchecked.has(c))
    .sort();
  h.update(`${columns.join(',')}\n`);
  const keyed = rows.map((r) => [JSON.stringify(keys.map(([n]) => normalised(r[n]))), r] as const);
  keyed.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  for (const [k, r] of keyed) {
    let line = k;
    for (const c of columns) {
      const v = normalised(r[c]);
      line += v === null ? '\u0000-' : `\u0000${v.length}:${v}`;
    }
    h.update(`${line}\n`);
  }
  return h.digest('hex');
}

/** What a record's events make of one table, kept: the digest of its rows and the columns not compared. */
interface KeptRows {
  unchecked: ReadonlySet<string>;
  digest: string;
}

function keptOf(keys: readonly KeyColumn[], expected: Record<string, unknown>[]): KeptRows {
  const unchecked = new Set(expected.flatMap((r) => Object.keys(r).filter((c) => r[c] === UNCHECKED)));
  return { unchecked, digest: rowsDigest(keys, expected, unchecked) };
}

/** The first of `columns` whose stored value differs from the expected one (UNCHECKED expected values skipped). */
function difference(columns: string[], stored: Record<string, unknown>, expected: Record<string, unknown>): { column: string } | null {
  for (const c of columns) {
    const e = expected[c];
    if (e === UNCHECKED) continue;
    if (normalised(stored[c]) !== normalised(e)) return { column: c };
  }
  return null;
}
import { KeyColumn, READ_MODEL_KEYS, ReadModelsRepository } from './read-models.repository';
import { createHash } from 'node:crypto';
import { ResultCache } from '../common/result-cache';

/** The rows of one table that belong to a record: those whose `column` is `value`. */
export interface RecordPart {
  table: string;
  column: string;
  value: unknown;
}

/** What the guard checked: the record's rows of each part, as stored (and as its events make them). */
export type CheckedRows = Record<string, Record<string, unknown>>[];

const ATTEMPTS = 5;

@Injectable()
export class ProjectionGuard {
  private readonly logger = new Logger('ProjectionGuard');
  private readonly events = new EventsRepository();
  private readonly repo = new ReadModelsRepository();
  private template: Promise<Buffer> | null = null;
  /**
   * What a record's events make, kept as one SHA-256 per table (over its
   * rows in key order), by stream and version: events are append-only (and chain-checked by /api/ledger/verify),
   * so a stream at the same version makes the same rows. A later check reads
   * the rows (and the version) and compares their digests, without reading
   * and replaying the events again.
   */
  private readonly fingerprints = new ResultCache<KeptRows[]>(256);

  constructor(private readonly registry: ProjectionRegistry) {}

  /**
   * Check the rows of `parts` (the record of stream `streamId`) against the
   * replay of that stream. Resolves to the rows checked, one list per part
   * (empty when the record does not exist and no event makes it). Throws
   * {@link ProjectionMismatchError} (409) when any row differs, is missing or
   * should not exist.
   */
  async check(q: Queryable, streamId: string, parts: RecordPart[]): Promise<Record<string, unknown>[][]> {
    for (let attempt = 1; ; attempt++) {
      // The stream's version before and after the rows: equal, the rows are exactly what its first `version` events make.
      const version = await this.events.streamVersion(q, streamId);
      const rows = await Promise.all(parts.map((p) => this.repo.rowsOf(q, p.table, p.column, p.value)));
      const after = await this.events.streamVersion(q, streamId);
      if (after !== version && attempt < ATTEMPTS) continue;
      if (version === 0 && rows.every((r) => r.length === 0)) return rows;
      const key = `${streamId}\u0000${version}\u0000${parts.map((p) => `${p.table}.${p.column}`).join(',')}`;
      const kept = this.fingerprints.get(key);
      if (kept && parts.every((p, i) => rowsDigest(READ_MODEL_KEYS[p.table], rows[i], kept[i].unchecked) === kept[i].digest)) return rows;
      // Not seen at this version, or something differs: compare with the events themselves (and name what differs).
      const events = (await this.events.streamForReplay(q, streamId)).filter((e) => e.stream_position <= version);
      // Erased events (issue 29, data '') replay from what their PayloadsErased event retains.
      const retained = events.some((e) => e.data === '') ? await this.events.retainedPayloads(q) : undefined;
      const expected = await this.expected(events, parts, retained);
      for (let i = 0; i < parts.length; i++) this.compare(parts[i], rows[i], expected[i]);
      this.fingerprints.set(
        key,
        parts.map((p, i) => keptOf(READ_MODEL_KEYS[p.table], expected[i])),
      );
      return rows;
    }
  }

  /**
   * The rows of `parts` as `events` make them: from the owning projection's
   * `expectedRows` when it has one (no database), else by replaying the
   * events into a copy of the template database.
   */
  private async expected(events: ReplayEvent[], parts: RecordPart[], retained?: RetainedPayloads): Promise<Record<string, unknown>[][]> {
    const owner = this.registry.owner(parts[0].table);
    if (owner?.expectedRows && parts.every((p) => owner.tables.includes(p.table))) {
      let made: Record<string, Record<string, unknown>[]>;
      try {
        made = owner.expectedRows(
          events.map((e) => {
            if (e.data !== '') return recordedEvent(e as StoredEvent);
            const kept = retained?.get(e.position);
            if (kept === undefined) throw new ErasedPayloadError(e.position);
            return recordedEvent(e as StoredEvent, { value: kept });
          }),
        );
      } catch (err) {
        return this.fail(parts[0].table, events[0]?.position ?? null, `the events of this record cannot be applied: ${err instanceof Error ? err.message : String(err)}`, { kind: 'replay_failed' });
      }
      return parts.map((p) => (made[p.table] ?? []).filter((r) => normalised(r[p.column]) === normalised(p.value)));
    }
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(await (this.template ??= this.makeTemplate()));
    try {
      const tx = sqliteTx(db);
      db.exec('BEGIN');
      for (const e of events) {
        try {
          await this.registry.apply(tx, e as StoredEvent, undefined, retained);
        } catch (err) {
          return this.fail(parts[0].table, e.position, `the events of this record cannot be applied: ${err instanceof Error ? err.message : String(err)}`, { kind: 'replay_failed' });
        }
      }
      db.exec('COMMIT');
      const out: Record<string, unknown>[][] = [];
      for (const p of parts) out.push(await this.repo.rowsOf(tx, p.table, p.column, p.value));
      return out;
    } finally {
      db.close();
    }
  }

  /** An empty database with the schema of every SQLite migration, serialized once. */
  private async makeTemplate(): Promise<Buffer> {
    const Database = (await import('better-sqlite3')).default;
    const db: BetterSqlite3.Database = new Database(':memory:');
    try {
      await migrateSqlite(db);
      return db.serialize();
    } finally {
      db.close();
    }
  }

  private compare(part: RecordPart, stored: Record<string, unknown>[], expected: Record<string, unknown>[]): void {
    const keys = READ_MODEL_KEYS[part.table];
    const keyText = (r: Record<string, unknown>): string => JSON.stringify(keys.map(([n]) => normalised(r[n])));
    const keyOf = (r: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(keys.map(([n, kind]) => [n, kind === 'int' ? Number(r[n]) : r[n]]));
    const live = new Map(stored.map((r) => [keyText(r), r]));
    // Every stored column is compared (a column the events do not make counts as differing), except UNCHECKED ones.
    const columns = [...new Set([...Object.keys(stored[0] ?? {}), ...Object.keys(expected[0] ?? {})])];
    for (const e of expected) {
      const s = live.get(keyText(e));
      if (!s) this.fail(part.table, rowPosition(e), `the row ${JSON.stringify(keyOf(e))} its events make is missing`, { key: keyOf(e), kind: 'missing' });
      const d = difference(columns, s, e);
      if (d) this.fail(part.table, rowPosition(e), `column ${d.column} of ${JSON.stringify(keyOf(e))} differs from what its events make`, { key: keyOf(e), kind: 'differs', column: d.column });
      live.delete(keyText(e));
    }
    for (const s of live.values()) this.fail(part.table, rowPosition(s), `the row ${JSON.stringify(keyOf(s))} is made by no event of its record`, { key: keyOf(s), kind: 'unexpected' });
  }

  private fail(table: string, position: number | null, detail: string, extra: Record<string, unknown>): never {
    const e = new ProjectionMismatchError(table, position, detail, extra);
    this.logger.error(`projection_mismatch: ${e.message} ${JSON.stringify(extra)}`);
    throw e;
  }
}
