import { int, Queryable } from '../database/rows';

/** The signed Nostr event anchoring the checkpoint of `size` (issue 33). */
export interface StoredNostrAnchor {
  size: number;
  /** NIP-01 event id, 64 hex. */
  event_id: string;
  /** The publisher key, 64 hex. */
  pubkey: string;
  /** The signed event as JSON text, exactly as published. */
  event: string;
  /** The event's created_at as RFC 3339 UTC. */
  created_at: string;
}

/** One attempt to publish an anchor to one relay. */
export interface StoredNostrPublication {
  size: number;
  relay: string;
  /** 1, 2, ... per (size, relay). */
  attempt: number;
  /** True when the relay answered `["OK", id, true, ...]`. */
  ok: boolean;
  /** The relay's OK message, or why it could not be reached. */
  message: string;
  /** RFC 3339 UTC time of the answer. */
  at: string;
}

type AnchorRow = { size: number | string; event_id: string; pubkey: string; event: string; created_at: string };
const toAnchor = (r: AnchorRow): StoredNostrAnchor => ({ size: int(r.size), event_id: r.event_id, pubkey: r.pubkey, event: r.event, created_at: r.created_at });
type PubRow = { size: number | string; relay: string; attempt: number | string; ok: number | string | boolean; message: string; at: string };
const toPub = (r: PubRow): StoredNostrPublication => ({ size: int(r.size), relay: r.relay, attempt: int(r.attempt), ok: Number(r.ok) === 1 || r.ok === true, message: r.message, at: r.at });
const ANCHOR_COLS = 'size, event_id, pubkey, event, created_at';

/**
 * `nostr_anchors` and `nostr_publications` (issue 33): the only SQL that
 * touches them. Inserts are idempotent (ON CONFLICT DO NOTHING), so several
 * API processes may store the same anchor or attempt.
 */
export class NostrRepository {
  /** Store a signed anchor event; false when the size already has one. */
  async insertAnchor(q: Queryable, a: StoredNostrAnchor): Promise<boolean> {
    const rows = await q.query<{ size: number | string }>(`INSERT INTO nostr_anchors (${ANCHOR_COLS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING size`, [a.size, a.event_id, a.pubkey, a.event, a.created_at]);
    return rows.length === 1;
  }

  /** The anchor of the checkpoint of exactly `size`, or null. */
  async anchor(q: Queryable, size: number): Promise<StoredNostrAnchor | null> {
    const rows = await q.query<AnchorRow>(`SELECT ${ANCHOR_COLS} FROM nostr_anchors WHERE size = ?`, [size]);
    return rows[0] ? toAnchor(rows[0]) : null;
  }

  /** The newest anchor, or null. */
  async newestAnchor(q: Queryable): Promise<StoredNostrAnchor | null> {
    const rows = await q.query<AnchorRow>(`SELECT ${ANCHOR_COLS} FROM nostr_anchors ORDER BY size DESC LIMIT 1`);
    return rows[0] ? toAnchor(rows[0]) : null;
  }

  /** The newest anchor of a size in `(above, upTo]` that at least one relay accepted (OK true), or null. */
  async newestPublished(q: Queryable, above: number, upTo: number): Promise<StoredNostrAnchor | null> {
    const rows = await q.query<AnchorRow>(
      `SELECT a.size, a.event_id, a.pubkey, a.event, a.created_at FROM nostr_anchors a WHERE a.size > ? AND a.size <= ? AND EXISTS (SELECT 1 FROM nostr_publications p WHERE p.size = a.size AND p.ok = 1) ORDER BY a.size DESC LIMIT 1`,
      [above, upTo],
    );
    return rows[0] ? toAnchor(rows[0]) : null;
  }

  /** Record one attempt; false when that attempt number is already stored. */
  async insertPublication(q: Queryable, p: StoredNostrPublication): Promise<boolean> {
    const rows = await q.query<{ size: number | string }>('INSERT INTO nostr_publications (size, relay, attempt, ok, message, at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING size', [
      p.size,
      p.relay,
      p.attempt,
      p.ok ? 1 : 0,
      p.message,
      p.at,
    ]);
    return rows.length === 1;
  }

  /** How many attempts on the anchor of `size` are stored for `relay`. */
  async attempts(q: Queryable, size: number, relay: string): Promise<number> {
    const rows = await q.query<{ n: number | string | null }>('SELECT MAX(attempt) AS n FROM nostr_publications WHERE size = ? AND relay = ?', [size, relay]);
    return Number(rows[0]?.n ?? 0);
  }

  /** Every attempt on the anchor of `size`, by relay then attempt. */
  async publications(q: Queryable, size: number): Promise<StoredNostrPublication[]> {
    const rows = await q.query<PubRow>('SELECT size, relay, attempt, ok, message, at FROM nostr_publications WHERE size = ? ORDER BY relay, attempt', [size]);
    return rows.map(toPub);
  }
}
