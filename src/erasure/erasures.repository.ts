import { insertRow, int, pages, placeholders, Queryable } from '../database/rows';
import type { PayloadsErasedData } from './erasure.events';

/** One erasure (a `PayloadsErased` event), as pages and verifiers show it. */
export interface ErasureRow {
  erasure_id: string;
  /**
   * The ledger position of a `PayloadsErased` event of the erasure: from
   * {@link ErasuresRepository.get}, its first page's; from
   * {@link ErasuresRepository.ofPositions}, the page that erased that
   * position (the event whose `retained` holds it).
   */
  position: number;
  erased_at: string;
  key_id: string;
  key_name: string;
  reason: string;
  legal_basis: string;
  /** Events erased by the erasure, every page together. */
  event_count: number;
}

const ERASURE_COLUMNS = ['erasure_id', 'position', 'erased_at', 'key_id', 'key_name', 'reason', 'legal_basis', 'event_count'] as const;

/**
 * The `erasures` and `erased_events` tables (the read model of
 * `PayloadsErased` events, issue 29): the only SQL that reads or writes them.
 */
export class ErasuresRepository {
  /**
   * Record one page of an erasure (a `PayloadsErased` event at `position`)
   * and the positions it erased: the erasure's first page makes its row (its
   * position, time, key, reason, basis), each later page adds its count.
   */
  async insert(q: Queryable, d: PayloadsErasedData, position: number, by: { key_id: string; name: string }): Promise<void> {
    const id = d.erasure_id.toLowerCase();
    const seen = await q.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM erasures WHERE erasure_id = ?', [id]);
    if (int(seen[0].n) > 0) await q.query('UPDATE erasures SET event_count = event_count + ? WHERE erasure_id = ?', [d.positions.length, id]);
    else await insertRow(q, 'erasures', ERASURE_COLUMNS, [id, position, d.erased_at, by.key_id, by.name, d.reason, d.legal_basis, d.positions.length]);
    for (const p of d.positions) await insertRow(q, 'erased_events', ['position', 'erasure_id', 'erasure_position'], [p, id, position]);
  }

  /** The erasure of each of `positions` that was erased, keyed by position. */
  async ofPositions(q: Queryable, positions: readonly number[]): Promise<Map<number, ErasureRow>> {
    const out = new Map<number, ErasureRow>();
    for (const page of pages([...new Set(positions)], 500)) {
      const rows = await q.query<ErasureRow & { erased_position: number | string }>(
        `SELECT x.position AS erased_position, e.erasure_id, x.erasure_position AS position, e.erased_at, e.key_id, e.key_name, e.reason, e.legal_basis, e.event_count FROM erased_events x JOIN erasures e ON e.erasure_id = x.erasure_id WHERE x.position IN (${placeholders(page.length)})`,
        page,
      );
      for (const r of rows) out.set(int(r.erased_position), toRow(r));
    }
    return out;
  }

  /** The erasure of the event at `position`, or null when its payload is held. */
  async ofPosition(q: Queryable, position: number): Promise<ErasureRow | null> {
    return (await this.ofPositions(q, [position])).get(position) ?? null;
  }

  /** The number of events erased so far, ledger-wide (0 when none): a generation that changes with every erasure, for caches of results computed from content. */
  async erasedCount(q: Queryable): Promise<number> {
    return int((await q.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM erased_events'))[0]?.n ?? 0);
  }

  /** One erasure by id, or null. */
  async get(q: Queryable, erasureId: string): Promise<ErasureRow | null> {
    const r = (await q.query<ErasureRow>('SELECT * FROM erasures WHERE erasure_id = ?', [erasureId.toLowerCase()]))[0];
    return r ? toRow(r) : null;
  }

  /** The positions an erasure erased, in order. */
  async positionsOf(q: Queryable, erasureId: string): Promise<number[]> {
    const rows = await q.query<{ position: number | string }>('SELECT position FROM erased_events WHERE erasure_id = ? ORDER BY position', [erasureId.toLowerCase()]);
    return rows.map((r) => int(r.position));
  }

  /** The positions of an erasure's `PayloadsErased` events (its pages), in order. */
  async eventPositionsOf(q: Queryable, erasureId: string): Promise<number[]> {
    const rows = await q.query<{ p: number | string }>('SELECT DISTINCT erasure_position AS p FROM erased_events WHERE erasure_id = ? ORDER BY erasure_position', [erasureId.toLowerCase()]);
    return rows.map((r) => int(r.p));
  }
}

function toRow(r: ErasureRow): ErasureRow {
  return { erasure_id: r.erasure_id, position: int(r.position), erased_at: r.erased_at, key_id: r.key_id, key_name: r.key_name, reason: r.reason, legal_basis: r.legal_basis, event_count: int(r.event_count) };
}
