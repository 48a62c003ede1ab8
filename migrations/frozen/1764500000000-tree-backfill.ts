/**
 * Frozen with the verifiable-log migration (1764500000000): building the
 * RFC 6962 tree of a ledger written before that migration. A migration is
 * history, so this file imports nothing from src/ and never changes: it is a
 * copy, as of that release, of the two things the build needs.
 * - The leaf of an event: the event-hash input of formats 1 and 2 (the only
 *   formats that existed then), a JSON array written with the S7.1
 *   ASCII-only string escaping. Leaf index = position - 1.
 * - Every complete subtree of RFC 6962 section 2.1 over those leaves, stored
 *   as `tree_nodes (level, idx, hash)`: leaf hash SHA-256(0x00 || leaf),
 *   interior SHA-256(0x01 || left || right).
 * Events are read in pages and their nodes written in multi-row INSERTs, so
 * memory stays flat (O(log n) pending subtrees).
 */
import { createHash } from 'node:crypto';

/** The migration's query runner: `sql` uses `?` placeholders (the caller rewrites them for PostgreSQL). */
export type FrozenQuery = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

const PAGE = 5000;
const INSERT_ROWS = 500;

/** An ASCII-only JSON string literal (S7.1): U+007F and every UTF-16 code unit above U+007E as `\u` + 4 lowercase hex digits. */
function jsonString(s: string): string {
  return JSON.stringify(s).replace(/[\x7f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** The leaf bytes of a stored event of format 1 or 2. */
function leaf(e: Record<string, unknown>): Buffer {
  const format = e.format === undefined || e.format === null ? 1 : Number(e.format);
  const common = `${Number(e.position)},${jsonString(String(e.prev_hash))},${jsonString(String(e.recorded_at))},${jsonString(String(e.stream_id))},${Number(e.stream_position)},${jsonString(String(e.type))},`;
  if (format === 1) return Buffer.from(`["aer1-ledger-event/1",${common}${jsonString(String(e.data))}]`, 'utf8');
  if (format === 2 && typeof e.key_id === 'string' && typeof e.key_name === 'string') {
    return Buffer.from(`["aer1-ledger-event/2",${common}${jsonString(e.key_id)},${jsonString(e.key_name)},${jsonString(String(e.data))}]`, 'utf8');
  }
  throw new Error(`event ${String(e.position)} has format ${String(e.format)}, which this migration cannot serialize: the tree cannot be built`);
}

const sha256 = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/**
 * Build `tree_nodes` from every event, in position order. Throws (failing
 * the migration, which then rolls back) on a gap in positions or an event it
 * cannot serialize. Returns the number of leaves.
 */
export async function backfillTree(query: FrozenQuery): Promise<number> {
  // The right edge: complete subtrees not yet joined, as [level, index, hash], largest first.
  const edge: [number, number, Buffer][] = [];
  let size = 0;
  let rows: unknown[] = [];
  const flush = async (): Promise<void> => {
    for (let i = 0; i < rows.length; i += 3 * INSERT_ROWS) {
      const chunk = rows.slice(i, i + 3 * INSERT_ROWS);
      await query(`INSERT INTO tree_nodes (level, idx, hash) VALUES ${Array.from({ length: chunk.length / 3 }, () => '(?, ?, ?)').join(', ')}`, chunk);
    }
    rows = [];
  };
  for (;;) {
    const events = await query('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?', [size, PAGE]);
    if (events.length === 0) break;
    for (const e of events) {
      if (Number(e.position) !== size + 1) throw new Error(`the events table has a gap at position ${size + 1}: the tree cannot be built`);
      let node: [number, number, Buffer] = [0, size, sha256(LEAF, leaf(e))];
      rows.push(node[0], node[1], node[2]);
      while (edge.length > 0 && edge[edge.length - 1][0] === node[0]) {
        const left = edge.pop() as [number, number, Buffer];
        node = [node[0] + 1, Math.floor(left[1] / 2), sha256(NODE, left[2], node[2])];
        rows.push(node[0], node[1], node[2]);
      }
      edge.push(node);
      size++;
    }
    await flush();
  }
  return size;
}
