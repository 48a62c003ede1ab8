import { Injectable } from '@nestjs/common';
import { DatabaseService, Tx } from '../database/database.service';
import { ExpectedVersionConflictError } from '../common/errors';
import { CURRENT_EVENT_FORMAT, eventHash, LEDGER_GENESIS_HASH, LedgerChainReport, LedgerChainVerifier, RecordedBy, StoredEvent } from '../core/ledger/event-hash';
import { ProjectionRegistry } from './projections';

/** An event to append: a past-tense type and its data (any JSON value). */
export interface NewEvent {
  type: string;
  data: unknown;
}

/**
 * `expectedVersion`: the stream's current version (0 for a new stream), `'any'`,
 * or `'new'` when the caller has already established inside the same write
 * transaction that the stream has no events (e.g. the receipt is not in the
 * read model): the version query is skipped, and the
 * `UNIQUE (stream_id, stream_position)` constraint still refuses a second
 * first event.
 */
export type ExpectedVersion = number | 'any' | 'new';

const PAGE = 5000;

/**
 * The append-only, tamper-evident event ledger.
 *
 * Every event gets a gapless global position, a position in its stream
 * (`UNIQUE (stream_id, stream_position)`), the previous event's hash and its
 * own hash (see event-hash.ts). Appends name the stream version they expect;
 * a stale one is an {@link ExpectedVersionConflictError} (409). Projections
 * are updated in the same transaction, so a read model never shows an event
 * that did not commit.
 */
@Injectable()
export class LedgerService {
  /** The head each open write transaction has appended up to (entries vanish with their Tx). */
  private readonly txHeads = new WeakMap<Tx, { position: number; event_hash: string }>();

  constructor(
    private readonly db: DatabaseService,
    private readonly projections: ProjectionRegistry,
  ) {}

  /** Current version of a stream: the number of events in it (0 when empty). */
  async streamVersion(tx: Tx, streamId: string): Promise<number> {
    const rows = await tx.query<{ v: number | string | null }>('SELECT MAX(stream_position) AS v FROM events WHERE stream_id = ?', [streamId]);
    return Number(rows[0]?.v ?? 0);
  }

  /** The last event's position and hash, or null for an empty ledger. */
  async head(tx?: Tx): Promise<{ position: number; event_hash: string } | null> {
    const q = tx ?? this.db;
    const rows = await q.query<{ position: number | string; event_hash: string }>('SELECT position, event_hash FROM events ORDER BY position DESC LIMIT 1');
    return rows[0] ? { position: Number(rows[0].position), event_hash: rows[0].event_hash } : null;
  }

  /**
   * Append `events` to `streamId` inside `tx` (call from {@link DatabaseService.write}),
   * written by `by` (the caller's API key, or {@link SYSTEM}): the key is stored and
   * hashed with each event (format 2). Returns the stored events; the stream's next
   * expected version is the last one's `stream_position`.
   */
  async append(tx: Tx, streamId: string, expectedVersion: ExpectedVersion, events: NewEvent[], by: RecordedBy): Promise<StoredEvent[]> {
    const version = expectedVersion === 'new' ? 0 : await this.streamVersion(tx, streamId);
    if (typeof expectedVersion === 'number' && version !== expectedVersion) throw new ExpectedVersionConflictError(streamId, expectedVersion, version);
    // Inside one write transaction no one else appends (writes are serialized), so the head
    // this transaction last wrote is still the head: remembered per transaction, not re-read.
    const head = this.txHeads.get(tx) ?? (await this.head(tx));
    let position = head?.position ?? 0;
    let prevHash = head?.event_hash ?? LEDGER_GENESIS_HASH;
    const recordedAt = new Date().toISOString();
    const stored: StoredEvent[] = [];
    let streamPosition = version;
    for (const e of events) {
      const base = {
        position: ++position,
        stream_id: streamId,
        stream_position: ++streamPosition,
        type: e.type,
        data: JSON.stringify(e.data),
        recorded_at: recordedAt,
        prev_hash: prevHash,
        format: CURRENT_EVENT_FORMAT,
        key_id: by.key_id,
        key_name: by.name,
      };
      const ev: StoredEvent = { ...base, event_hash: eventHash(base) };
      await tx.query(
        'INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash, format, key_id, key_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [ev.position, ev.stream_id, ev.stream_position, ev.type, ev.data, ev.recorded_at, ev.prev_hash, ev.event_hash, ev.format, ev.key_id, ev.key_name],
      );
      await this.projections.apply(tx, ev);
      stored.push(ev);
      prevHash = ev.event_hash;
    }
    if (stored.length > 0) this.txHeads.set(tx, { position, event_hash: prevHash });
    return stored;
  }

  /** Events of one stream, in order. */
  async readStream(streamId: string, tx?: Tx): Promise<StoredEvent[]> {
    const q = tx ?? this.db;
    const rows = await q.query<StoredEvent>('SELECT * FROM events WHERE stream_id = ? ORDER BY stream_position', [streamId]);
    return rows.map(normalize);
  }

  /** All events from `after`+1 up to `upTo` (inclusive), in pages, in position order. */
  async *readAll(options: { after?: number; upTo?: number; tx?: Tx } = {}): AsyncGenerator<StoredEvent> {
    const q = options.tx ?? this.db;
    let after = options.after ?? 0;
    const upTo = options.upTo ?? Number.MAX_SAFE_INTEGER;
    for (;;) {
      const rows = await q.query<StoredEvent>('SELECT * FROM events WHERE position > ? AND position <= ? ORDER BY position LIMIT ?', [after, upTo, PAGE]);
      for (const r of rows) yield normalize(r);
      if (rows.length < PAGE) return;
      // Let other requests run between pages: a whole-ledger read must not hold the event loop.
      await new Promise<void>((resolve) => setImmediate(resolve));
      after = Number(rows[rows.length - 1].position);
    }
  }

  /**
   * Recompute the whole ledger chain (GET /api/ledger/verify). When `expectedHead`
   * is given (a head published earlier), also check the ledger still contains it
   * unchanged: the chain alone cannot show that its newest events were removed.
   */
  async verifyChain(expectedHead?: { position: number; event_hash: string }): Promise<LedgerChainReport & { expected_head?: { ok: boolean; detail: string } }> {
    const v = new LedgerChainVerifier();
    let seen: string | null = null;
    for await (const e of this.readAll()) {
      if (!v.push(e)) break;
      if (expectedHead && e.position === expectedHead.position) seen = e.event_hash;
    }
    const report = v.report();
    if (!expectedHead) return report;
    const ok = seen === expectedHead.event_hash;
    return {
      ...report,
      ok: report.ok && ok,
      expected_head: {
        ok,
        detail: ok ? `position ${expectedHead.position} holds the expected hash` : seen === null ? `position ${expectedHead.position} is missing or not reached: events were removed` : `position ${expectedHead.position} has hash ${seen}, expected ${expectedHead.event_hash}`,
      },
    };
  }

  /** Empty every projection table and replay all events through the projections, in one transaction. */
  async rebuildProjections(): Promise<{ events: number; projections: string[] }> {
    return this.db.write(async (tx) => {
      const names: string[] = [];
      for (const p of this.projections.all()) {
        for (const t of p.tables) await tx.query(`DELETE FROM ${t}`);
        names.push(p.name);
      }
      let count = 0;
      for await (const e of this.readAll({ tx })) {
        await this.projections.apply(tx, e);
        count++;
      }
      return { events: count, projections: names };
    });
  }
}

function normalize(r: StoredEvent): StoredEvent {
  return { ...r, position: Number(r.position), stream_position: Number(r.stream_position), format: r.format === undefined || r.format === null ? 1 : Number(r.format) };
}

/** Who wrote the event at each of `positions` (events of format 1 name no key). Keyed by position. */
export async function recordedByAt(q: Pick<Tx, 'query'>, positions: number[]): Promise<Map<number, RecordedBy | null>> {
  const out = new Map<number, RecordedBy | null>();
  const unique = [...new Set(positions)];
  for (let i = 0; i < unique.length; i += 500) {
    const page = unique.slice(i, i + 500);
    const rows = await q.query<{ position: number | string; key_id: string | null; key_name: string | null }>(
      `SELECT position, key_id, key_name FROM events WHERE position IN (${page.map(() => '?').join(', ')})`,
      page,
    );
    for (const r of rows) out.set(Number(r.position), r.key_id !== null && r.key_name !== null ? { key_id: r.key_id, name: r.key_name } : null);
  }
  return out;
}

/** The key that wrote a record, with its owner (null when the key names none). */
export interface Writer extends RecordedBy {
  owner: string | null;
}

/** Who wrote the event at `position`, with the key's owner; null for an event written before attribution or no such event. */
export async function writerAt(q: Pick<Tx, 'query'>, position: number): Promise<Writer | null> {
  const r = (
    await q.query<{ key_id: string | null; key_name: string | null; owner: string | null }>(
      'SELECT e.key_id AS key_id, e.key_name AS key_name, k.owner AS owner FROM events e LEFT JOIN api_keys k ON k.id = e.key_id WHERE e.position = ?',
      [position],
    )
  )[0];
  if (!r || r.key_id === null || r.key_name === null) return null;
  return { key_id: r.key_id, name: r.key_name, owner: r.owner ?? null };
}
