import { int, pages, Queryable } from '../database/rows';
import type { Tx } from '../database/database.service';
import { HASH_SIZE, NodeBatch, NodeId, rightEdge } from '../core/tlog';

/** Nodes per multi-row INSERT (3 parameters each; well under both drivers' limits). */
const INSERT_PAGE = 500;
/** The columns of a queued node row. */
const NODE_COLUMNS = ['level', 'idx', 'hash'] as const;

/** A stored checkpoint: the signed note exactly as signed, and when. */
export interface StoredCheckpoint {
  size: number;
  /** base64 RFC 6962 root, as in the note. */
  root: string;
  /** The signed note, verbatim (text, blank line, the log's signature line). */
  note: string;
  /** RFC 3339 UTC time it was signed. */
  signed_at: string;
}

function toCheckpoint(r: { size: number | string; root: string; note: string; signed_at: string }): StoredCheckpoint {
  return { size: int(r.size), root: r.root, note: r.note, signed_at: r.signed_at };
}

function toHash(v: unknown): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array);
}

/**
 * The verifiable log's tables: `tree_nodes` (every complete subtree of the
 * RFC 6962 tree, addressed by `(level, idx)`, written once, never changed)
 * and `checkpoints` (each signed checkpoint). The only SQL that touches them.
 */
export class TreeRepository {
  /**
   * Store the nodes an append completed: in a write transaction queued
   * ({@link Tx.insertLater}, written with the call's other queued rows before
   * its next statement or its end), else multi-row INSERTs now.
   */
  async insert(q: Queryable, batch: NodeBatch): Promise<void> {
    const all = batch.hashes;
    const later = (q as Partial<Pick<Tx, 'insertLater'>>).insertLater;
    if (later) {
      for (let i = 0; i < batch.count; i++) later.call(q, 'tree_nodes', NODE_COLUMNS, [batch.levels[i], batch.indexes[i], all.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE)]);
      return;
    }
    for (let start = 0; start < batch.count; start += INSERT_PAGE) {
      const end = Math.min(batch.count, start + INSERT_PAGE);
      const params: unknown[] = [];
      for (let i = start; i < end; i++) params.push(batch.levels[i], batch.indexes[i], all.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
      await q.query(`INSERT INTO tree_nodes (level, idx, hash) VALUES ${Array.from({ length: end - start }, () => '(?, ?, ?)').join(', ')}`, params);
    }
  }

  /**
   * The hashes of `ids`, in that order (one query per 100 ids). Throws when a
   * node is missing: the stored tree is shorter than the caller assumed.
   */
  async hashes(q: Queryable, ids: readonly NodeId[]): Promise<Buffer[]> {
    const found = new Map<string, Buffer>();
    for (const page of pages(ids, 100)) {
      const rows = await q.query<{ level: number | string; idx: number | string; hash: unknown }>(
        `SELECT level, idx, hash FROM tree_nodes WHERE ${page.map(() => '(level = ? AND idx = ?)').join(' OR ')}`,
        page.flatMap((n) => [n.level, n.index]),
      );
      for (const r of rows) found.set(`${int(r.level)}/${int(r.idx)}`, toHash(r.hash));
    }
    return ids.map((n) => {
      const h = found.get(`${n.level}/${n.index}`);
      if (!h) throw new MissingNodeError(n);
      return h;
    });
  }

  /** The hashes of the right edge of a tree of `size` leaves ({@link rightEdge}). */
  rightEdgeHashes(q: Queryable, size: number): Promise<Buffer[]> {
    return this.hashes(q, rightEdge(size));
  }

  /** The number of leaves stored (level-0 nodes are written for every leaf, in order). */
  async leafCount(q: Queryable): Promise<number> {
    const r = await q.query<{ n: number | string | null }>('SELECT MAX(idx) AS n FROM tree_nodes WHERE level = 0');
    return r[0]?.n === null || r[0]?.n === undefined ? 0 : int(r[0].n) + 1;
  }

  /** Stored nodes of one level with `from <= idx < to`, in index order (for a full tree check). */
  async level(q: Queryable, level: number, from: number, to: number): Promise<{ idx: number; hash: Buffer }[]> {
    const rows = await q.query<{ idx: number | string; hash: unknown }>('SELECT idx, hash FROM tree_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx', [level, from, to]);
    return rows.map((r) => ({ idx: int(r.idx), hash: toHash(r.hash) }));
  }

  /** Store a signed checkpoint; false when one of that size is already stored (another process signed it). */
  async insertCheckpoint(q: Queryable, cp: StoredCheckpoint): Promise<boolean> {
    const rows = await q.query<{ size: number | string }>('INSERT INTO checkpoints (size, root, note, signed_at) VALUES (?, ?, ?, ?) ON CONFLICT (size) DO NOTHING RETURNING size', [
      cp.size,
      cp.root,
      cp.note,
      cp.signed_at,
    ]);
    return rows.length === 1;
  }

  /** The newest (largest) signed checkpoint, or null. */
  async latestCheckpoint(q: Queryable): Promise<StoredCheckpoint | null> {
    const r = await q.query<{ size: number | string; root: string; note: string; signed_at: string }>('SELECT size, root, note, signed_at FROM checkpoints ORDER BY size DESC LIMIT 1');
    return r[0] ? toCheckpoint(r[0]) : null;
  }

  /** The checkpoint of exactly `size`, or null. */
  async checkpoint(q: Queryable, size: number): Promise<StoredCheckpoint | null> {
    const r = await q.query<{ size: number | string; root: string; note: string; signed_at: string }>('SELECT size, root, note, signed_at FROM checkpoints WHERE size = ?', [size]);
    return r[0] ? toCheckpoint(r[0]) : null;
  }

  /** The smallest checkpoint of at least `size` leaves (the first that covers leaf `size - 1`), or null. */
  async checkpointCovering(q: Queryable, size: number): Promise<StoredCheckpoint | null> {
    const r = await q.query<{ size: number | string; root: string; note: string; signed_at: string }>('SELECT size, root, note, signed_at FROM checkpoints WHERE size >= ? ORDER BY size LIMIT 1', [size]);
    return r[0] ? toCheckpoint(r[0]) : null;
  }

  /** Checkpoints with `after < size`, smallest first, at most `limit` (for a full check). */
  async checkpointsAfter(q: Queryable, after: number, limit: number): Promise<StoredCheckpoint[]> {
    const r = await q.query<{ size: number | string; root: string; note: string; signed_at: string }>('SELECT size, root, note, signed_at FROM checkpoints WHERE size > ? ORDER BY size LIMIT ?', [after, limit]);
    return r.map(toCheckpoint);
  }
}

/** A node the stored tree should hold and does not. */
export class MissingNodeError extends Error {
  constructor(readonly node: NodeId) {
    super(`tree node (${node.level}, ${node.index}) is not stored`);
  }
}
