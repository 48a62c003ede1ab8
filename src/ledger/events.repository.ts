import { insertRow, int, pages, placeholders, Queryable } from '../database/rows';
import type { RecordedBy, StoredEvent } from '../core/ledger/event-hash';

/** The columns of an event an as-of read needs. */
export interface EventDataRow {
  position: number;
  stream_id: string;
  type: string;
  /** The event data's JSON text, as stored. */
  data: string;
}

/** The key that wrote a record, with its owner (null when the key names none). */
export interface Writer extends RecordedBy {
  owner: string | null;
}

/** The columns {@link EventsRepository.insert} writes, in its values' order. */
const EVENT_COLUMNS = ['position', 'stream_id', 'stream_position', 'type', 'data', 'recorded_at', 'prev_hash', 'event_hash', 'format', 'key_id', 'key_name', 'stream_prev', 'public_ids', 'payload_commitment', 'payload_salt'] as const;

/** Ids per `IN (...)` list (well under SQLite's and PostgreSQL's bound-parameter limits). */
const IN_PAGE = 500;

function toStored(r: StoredEvent): StoredEvent {
  return {
    ...r,
    position: int(r.position),
    stream_position: int(r.stream_position),
    format: r.format === undefined || r.format === null ? 1 : int(r.format),
    stream_prev: r.stream_prev === undefined || r.stream_prev === null ? null : int(r.stream_prev),
  };
}

function toDataRow(r: { position: number | string; stream_id: string; type: string; data: string }): EventDataRow {
  return { position: int(r.position), stream_id: r.stream_id, type: r.type, data: r.data };
}

/**
 * The `events` table: the only SQL that reads or writes it. Every method
 * runs on the unit of work it is given (`q`: the database outside a write,
 * or the write transaction); appends only ever run inside a write.
 */
export class EventsRepository {
  /** Write one event (hash already computed); in a write transaction, queued ({@link insertRow}) and written before the next statement. */
  async insert(q: Queryable, ev: StoredEvent): Promise<void> {
    await insertRow(q, 'events', EVENT_COLUMNS, [
      ev.position,
      ev.stream_id,
      ev.stream_position,
      ev.type,
      ev.data,
      ev.recorded_at,
      ev.prev_hash,
      ev.event_hash,
      ev.format,
      ev.key_id,
      ev.key_name,
      ev.stream_prev ?? null,
      ev.public_ids ?? null,
      ev.payload_commitment ?? null,
      ev.payload_salt ?? null,
    ]);
  }

  /** A stream's version (its highest `stream_position`, 0 when empty) and the ledger position of its newest event (0 when empty), in one read. */
  async streamHead(q: Queryable, streamId: string): Promise<{ version: number; position: number }> {
    const rows = await q.query<{ v: number | string; p: number | string }>('SELECT stream_position AS v, position AS p FROM events WHERE stream_id = ? ORDER BY stream_position DESC LIMIT 1', [streamId]);
    return rows[0] ? { version: int(rows[0].v), position: int(rows[0].p) } : { version: 0, position: 0 };
  }

  /**
   * The retained data of every erased event at or below `upTo` (issue 29), by
   * position: what each `PayloadsErased` event keeps of the events it erased,
   * for replaying them (src/ledger/projections.ts).
   */
  async retainedPayloads(q: Queryable, upTo = Number.MAX_SAFE_INTEGER): Promise<Map<number, unknown>> {
    const out = new Map<number, unknown>();
    const rows = await q.query<{ data: string }>("SELECT data FROM events WHERE type = 'PayloadsErased' AND position <= ? ORDER BY position", [upTo]);
    for (const r of rows) {
      // A PayloadsErased event is never erased; one whose data is gone was cleared behind the ledger (the chain check names it).
      if (r.data === '') continue;
      let d: { retained?: Record<string, unknown> };
      try {
        d = JSON.parse(r.data) as { retained?: Record<string, unknown> };
      } catch {
        continue;
      }
      for (const [k, v] of Object.entries(d.retained ?? {})) out.set(Number(k), v);
    }
    return out;
  }

  /** The events at `positions` (any order; pages of ids), keyed by position; absent positions are missing from the map. */
  async atPositions(q: Queryable, positions: readonly number[]): Promise<Map<number, StoredEvent>> {
    const out = new Map<number, StoredEvent>();
    for (const page of pages([...new Set(positions)], IN_PAGE)) {
      const rows = await q.query<StoredEvent>(`SELECT * FROM events WHERE position IN (${placeholders(page.length)})`, page);
      for (const r of rows) out.set(int(r.position), toStored(r));
    }
    return out;
  }

  /**
   * Erase the payloads of the events at `positions` (issue 29): `data` becomes
   * '' and `payload_salt` NULL; nothing else of the row changes (the
   * append-only trigger allows exactly this UPDATE). Run in the write that
   * appends the `PayloadsErased` event naming them.
   */
  async erasePayloads(q: Queryable, positions: readonly number[]): Promise<void> {
    for (const page of pages([...positions], IN_PAGE)) await q.query(`UPDATE events SET data = '', payload_salt = NULL WHERE position IN (${placeholders(page.length)})`, page);
  }

  /**
   * The event hash of each of `positions` whose payload is still held (not
   * erased), keyed by position: an erasure re-checks its targets with it
   * inside its write (a target erased meanwhile, or not the event it read, is
   * left alone).
   */
  async heldHashes(q: Queryable, positions: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const page of pages([...new Set(positions)], IN_PAGE)) {
      const rows = await q.query<{ position: number | string; event_hash: string }>(`SELECT position, event_hash FROM events WHERE data <> '' AND position IN (${placeholders(page.length)})`, page);
      for (const r of rows) out.set(int(r.position), r.event_hash);
    }
    return out;
  }

  /**
   * Retention (issue 29): the events at positions `from`..`to` (inclusive)
   * of one of `types`, payload held, recorded before `before` (ISO 8601),
   * in order.
   */
  async heldBefore(q: Queryable, from: number, to: number, types: readonly string[], before: string): Promise<StoredEvent[]> {
    const rows = await q.query<StoredEvent>(
      // `type || ''`: the position range drives the read, never the index on `type`, which SQLite would otherwise pick
      // (without statistics) and walk every event of those types for each window: 27x slower over 100,000 events.
      `SELECT * FROM events WHERE position >= ? AND position <= ? AND (type || '') IN (${placeholders(types.length)}) AND data <> '' AND recorded_at < ? ORDER BY position`,
      [from, to, ...types, before],
    );
    return rows.map(toStored);
  }

  /** Positions of events of `streamId` whose type is one of `types`, in order. */
  async positionsOfTypes(q: Queryable, streamId: string, types: readonly string[]): Promise<number[]> {
    const rows = await q.query<{ position: number | string }>(`SELECT position FROM events WHERE stream_id = ? AND type IN (${placeholders(types.length)}) ORDER BY position`, [streamId, ...types]);
    return rows.map((r) => int(r.position));
  }

  /** The number of events in a stream (its highest `stream_position`; 0 when empty). */
  async streamVersion(q: Queryable, streamId: string): Promise<number> {
    const rows = await q.query<{ v: number | string | null }>('SELECT MAX(stream_position) AS v FROM events WHERE stream_id = ?', [streamId]);
    return Number(rows[0]?.v ?? 0);
  }

  /** The last event's position and hash, or null for an empty ledger. */
  async head(q: Queryable): Promise<{ position: number; event_hash: string } | null> {
    const rows = await q.query<{ position: number | string; event_hash: string }>('SELECT position, event_hash FROM events ORDER BY position DESC LIMIT 1');
    return rows[0] ? { position: int(rows[0].position), event_hash: rows[0].event_hash } : null;
  }

  /** The stored `event_hash` at `position`, or null when there is no such event. */
  async hashAt(q: Queryable, position: number): Promise<string | null> {
    return (await q.query<{ event_hash: string }>('SELECT event_hash FROM events WHERE position = ?', [position]))[0]?.event_hash ?? null;
  }

  /** Events of one stream, in order. */
  async stream(q: Queryable, streamId: string): Promise<StoredEvent[]> {
    return (await q.query<StoredEvent>('SELECT * FROM events WHERE stream_id = ? ORDER BY stream_position', [streamId])).map(toStored);
  }

  /** Events of one stream, in order, with the columns a projection reads (not the hashes nor the key). */
  async streamForReplay(q: Queryable, streamId: string): Promise<Pick<StoredEvent, 'position' | 'stream_id' | 'stream_position' | 'type' | 'data' | 'recorded_at'>[]> {
    const rows = await q.query<{ position: number | string; stream_id: string; stream_position: number | string; type: string; data: string; recorded_at: string }>(
      'SELECT position, stream_id, stream_position, type, data, recorded_at FROM events WHERE stream_id = ? ORDER BY stream_position',
      [streamId],
    );
    return rows.map((r) => ({ ...r, position: int(r.position), stream_position: int(r.stream_position) }));
  }

  /** At most `limit` events with `after < position <= upTo`, in position order. */
  async page(q: Queryable, after: number, upTo: number, limit: number): Promise<StoredEvent[]> {
    return (await q.query<StoredEvent>('SELECT * FROM events WHERE position > ? AND position <= ? ORDER BY position LIMIT ?', [after, upTo, limit])).map(toStored);
  }

  /**
   * At most `limit` events with `after < position <= upTo` whose stream id
   * starts with `prefix` (every stream when null), in position order: the
   * pages of the live event stream.
   */
  async pageWithPrefix(q: Queryable, after: number, upTo: number, prefix: string | null, limit: number): Promise<StoredEvent[]> {
    if (prefix === null) return this.page(q, after, upTo, limit);
    const rows = await q.query<StoredEvent>('SELECT * FROM events WHERE position > ? AND position <= ? AND substr(stream_id, 1, ?) = ? ORDER BY position LIMIT ?', [after, upTo, [...prefix].length, prefix, limit]);
    return rows.map(toStored);
  }

  /** The data text of the first event of `type` in a stream, or null. */
  async firstData(q: Queryable, streamId: string, type: string): Promise<string | null> {
    const rows = await q.query<{ data: string }>('SELECT data FROM events WHERE stream_id = ? AND type = ? ORDER BY stream_position LIMIT 1', [streamId, type]);
    return rows[0]?.data ?? null;
  }

  /** The data text of the last event of `type` in a stream, or null. */
  async lastData(q: Queryable, streamId: string, type: string): Promise<string | null> {
    const rows = await q.query<{ data: string }>('SELECT data FROM events WHERE stream_id = ? AND type = ? ORDER BY stream_position DESC LIMIT 1', [streamId, type]);
    return rows[0]?.data ?? null;
  }

  /** The events of a stream (of one `type` when given) at or below `asOf`, in position order. */
  async streamAsOf(q: Queryable, streamId: string, asOf: number, type?: string): Promise<EventDataRow[]> {
    const rows =
      type === undefined
        ? await q.query<EventDataRow>('SELECT position, stream_id, type, data FROM events WHERE stream_id = ? AND position <= ? ORDER BY position', [streamId, asOf])
        : await q.query<EventDataRow>('SELECT position, stream_id, type, data FROM events WHERE stream_id = ? AND type = ? AND position <= ? ORDER BY position', [streamId, type, asOf]);
    return rows.map(toDataRow);
  }

  /** Events of `type` at or below `asOf` in any of `streamIds` (one page of ids; the caller pages). */
  async ofTypeInStreamsAsOf(q: Queryable, type: string, streamIds: string[], asOf: number): Promise<EventDataRow[]> {
    const rows = await q.query<EventDataRow>(`SELECT position, stream_id, type, data FROM events WHERE type = ? AND position <= ? AND stream_id IN (${placeholders(streamIds.length)})`, [
      type,
      asOf,
      ...streamIds,
    ]);
    return rows.map(toDataRow);
  }

  /**
   * The keys (with their owners) that wrote the events of `streamIds` at or
   * below `asOf` (one page of ids; one row per event), limited to `types`
   * when given. A key of null: an event written before attribution.
   */
  async writersOfStreamsAsOf(q: Queryable, streamIds: string[], asOf: number, types?: string[]): Promise<{ stream_id: string; key_id: string | null; key_name: string | null; owner: string | null }[]> {
    const typeSql = types ? ` AND e.type IN (${placeholders(types.length)})` : '';
    return q.query<{ stream_id: string; key_id: string | null; key_name: string | null; owner: string | null }>(
      `SELECT e.stream_id AS stream_id, e.key_id AS key_id, e.key_name AS key_name, k.owner AS owner FROM events e LEFT JOIN api_keys k ON k.id = e.key_id WHERE e.position <= ? AND e.stream_id IN (${placeholders(streamIds.length)})${typeSql}`,
      [asOf, ...streamIds, ...(types ?? [])],
    );
  }

  /** The earliest position at or below `asOf` among events of `streamIds` (one page of ids); null when none. */
  async firstPositionAsOf(q: Queryable, streamIds: string[], asOf: number): Promise<number | null> {
    const r =
      streamIds.length === 1
        ? await q.query<{ p: number | string | null }>('SELECT MIN(position) AS p FROM events WHERE stream_id = ? AND position <= ?', [streamIds[0], asOf])
        : await q.query<{ p: number | string | null }>(`SELECT MIN(position) AS p FROM events WHERE position <= ? AND stream_id IN (${placeholders(streamIds.length)})`, [asOf, ...streamIds]);
    return r[0]?.p === null || r[0]?.p === undefined ? null : int(r[0].p);
  }

  /** The time the event at `position` was recorded, or null. */
  async recordedAt(q: Queryable, position: number): Promise<string | null> {
    return (await q.query<{ recorded_at: string }>('SELECT recorded_at FROM events WHERE position = ?', [position]))[0]?.recorded_at ?? null;
  }

  /** Who wrote the event at each of `positions` (events of format 1 name no key). Keyed by position. */
  async recordedByAt(q: Queryable, positions: number[]): Promise<Map<number, RecordedBy | null>> {
    const out = new Map<number, RecordedBy | null>();
    for (const page of pages([...new Set(positions)], IN_PAGE)) {
      const rows = await q.query<{ position: number | string; key_id: string | null; key_name: string | null }>(
        `SELECT position, key_id, key_name FROM events WHERE position IN (${placeholders(page.length)})`,
        page,
      );
      for (const r of rows) out.set(int(r.position), r.key_id !== null && r.key_name !== null ? { key_id: r.key_id, name: r.key_name } : null);
    }
    return out;
  }

  /** Who wrote the event at `position`, or null (format 1, or no such event). */
  async recordedByOne(q: Queryable, position: number): Promise<RecordedBy | null> {
    return (await this.recordedByAt(q, [position])).get(position) ?? null;
  }

  /** Who wrote the event at `position`, with the key's owner; null for an event written before attribution or no such event. */
  async writerAt(q: Queryable, position: number): Promise<Writer | null> {
    const r = (
      await q.query<{ key_id: string | null; key_name: string | null; owner: string | null }>(
        'SELECT e.key_id AS key_id, e.key_name AS key_name, k.owner AS owner FROM events e LEFT JOIN api_keys k ON k.id = e.key_id WHERE e.position = ?',
        [position],
      )
    )[0];
    if (!r || r.key_id === null || r.key_name === null) return null;
    return { key_id: r.key_id, name: r.key_name, owner: r.owner ?? null };
  }

  /** The event at `position`, or null. */
  async at(q: Queryable, position: number): Promise<StoredEvent | null> {
    const rows = await q.query<StoredEvent>('SELECT * FROM events WHERE position = ?', [position]);
    return rows[0] ? toStored(rows[0]) : null;
  }

  /**
   * At most `limit` events of a stream after its `afterStreamPosition`, at or below ledger position `upTo`, in
   * order (an evidence pack's page; keyset on the `(stream_id, stream_position)` index, so each page costs the same).
   */
  async streamPage(q: Queryable, streamId: string, afterStreamPosition: number, upTo: number, limit: number): Promise<StoredEvent[]> {
    const rows = await q.query<StoredEvent>('SELECT * FROM events WHERE stream_id = ? AND stream_position > ? AND position <= ? ORDER BY stream_position LIMIT ?', [
      streamId,
      afterStreamPosition,
      upTo,
      limit,
    ]);
    return rows.map(toStored);
  }

  /** Every event of `streamIds` (one page of ids; the caller pages) at or below `upTo`, in position order. */
  async ofStreams(q: Queryable, streamIds: string[], upTo: number): Promise<StoredEvent[]> {
    if (streamIds.length === 0) return [];
    const rows = await q.query<StoredEvent>(`SELECT * FROM events WHERE position <= ? AND stream_id IN (${placeholders(streamIds.length)}) ORDER BY position`, [upTo, ...streamIds]);
    return rows.map(toStored);
  }

  /** Which of `positions` (one page) were written by a key with a `metadata` publication (S13). */
  async withheldAmong(q: Queryable, positions: number[]): Promise<Set<number>> {
    if (positions.length === 0) return new Set();
    const rows = await q.query<{ position: number | string }>(
      `SELECT e.position AS position FROM events e JOIN api_keys k ON k.id = e.key_id WHERE k.publication = 'metadata' AND e.position IN (${placeholders(positions.length)})`,
      positions,
    );
    return new Set(rows.map((r) => int(r.position)));
  }

  /** Positions of events whose stored `event_hash` is `eventHash` (one, unless the table was tampered with). */
  async positionsOfHash(q: Queryable, eventHash: string): Promise<number[]> {
    const rows = await q.query<{ position: number | string }>('SELECT position FROM events WHERE event_hash = ? ORDER BY position LIMIT 10', [eventHash]);
    return rows.map((r) => int(r.position));
  }

  /** Positions in `(after, upTo]` whose event was written by a key with a `metadata` publication (its content is withheld from the public, S13). */
  async withheldPositions(q: Queryable, after: number, upTo: number): Promise<Set<number>> {
    const rows = await q.query<{ position: number | string }>(
      "SELECT e.position AS position FROM events e JOIN api_keys k ON k.id = e.key_id WHERE e.position > ? AND e.position <= ? AND k.publication = 'metadata'",
      [after, upTo],
    );
    return new Set(rows.map((r) => int(r.position)));
  }

  /**
   * The newest event of a stream at or below ledger position `asOf`, or null
   * when it has none (issue 30, stream heads): one read on the
   * `(stream_id, stream_position)` index, walking back from the stream's end
   * past its events after `asOf` (stream positions grow with ledger positions).
   */
  async headAsOf(q: Queryable, streamId: string, asOf: number): Promise<StoredEvent | null> {
    const rows = await q.query<StoredEvent>('SELECT * FROM events WHERE stream_id = ? AND position <= ? ORDER BY stream_position DESC LIMIT 1', [streamId, asOf]);
    return rows[0] ? toStored(rows[0]) : null;
  }

  /**
   * {@link headAsOf} for many streams: the newest event of each at or below
   * `asOf`, by stream id (absent: none). Two reads per 500 streams: the
   * newest position of each on the stream index, then those events.
   */
  async headsAsOf(q: Queryable, streamIds: readonly string[], asOf: number): Promise<Map<string, StoredEvent>> {
    const out = new Map<string, StoredEvent>();
    for (const page of pages([...streamIds], IN_PAGE)) {
      const tops = await q.query<{ p: number | string }>(`SELECT MAX(position) AS p FROM events WHERE position <= ? AND stream_id IN (${placeholders(page.length)}) GROUP BY stream_id`, [asOf, ...page]);
      const positions = tops.map((r) => int(r.p));
      if (positions.length === 0) continue;
      const rows = await q.query<StoredEvent>(`SELECT * FROM events WHERE position IN (${placeholders(positions.length)})`, positions);
      for (const r of rows) {
        const e = toStored(r);
        out.set(e.stream_id, e);
      }
    }
    return out;
  }

  /** The position of the newest event of a stream, or null when it has none. */
  async lastPositionOf(q: Queryable, streamId: string): Promise<number | null> {
    const r = await q.query<{ p: number | string | null }>('SELECT MAX(position) AS p FROM events WHERE stream_id = ?', [streamId]);
    return r[0]?.p === null || r[0]?.p === undefined ? null : int(r[0].p);
  }

  /**
   * How many of the (at most `count`) events after `after` fit in `maxBytes`
   * of stored data (at least one when any exists): a page of leaves is cut by
   * size, so a few large events cannot make one read huge.
   */
  async countWithinBytes(q: Queryable, after: number, count: number, maxBytes: number): Promise<number> {
    const rows = await q.query<{ n: number | string }>('SELECT LENGTH(data) AS n FROM events WHERE position > ? ORDER BY position LIMIT ?', [after, count]);
    let total = 0;
    let k = 0;
    for (const r of rows) {
      total += int(r.n);
      if (k > 0 && total > maxBytes) break;
      k++;
    }
    return k;
  }
}
