/**
 * The frozen tree backfill of the verifiable-log migration
 * (migrations/frozen/1764500000000-tree-backfill.ts) builds what today's code
 * builds: its leaves are today's `eventLeaf` for formats 1 and 2 (non-ASCII,
 * controls and astral characters included), and every complete subtree it
 * stores equals the reference tree's (test/reference/rfc6962.ts), across page
 * boundaries. Run on an in-memory stand-in for the migration's query runner.
 */
import { backfillTree } from '../../migrations/frozen/1764500000000-tree-backfill';
import { eventHash, eventLeaf, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import { MTH, refLeaf } from '../reference/rfc6962';

function events(n: number): StoredEvent[] {
  const out: StoredEvent[] = [];
  let prev = LEDGER_GENESIS_HASH;
  for (let i = 1; i <= n; i++) {
    const format = i % 3 === 0 ? 1 : 2;
    const e: Omit<StoredEvent, 'event_hash'> = {
      position: i,
      stream_id: `receipt:${i}-é`,
      stream_position: 1,
      type: 'ReceiptRecorded',
      data: JSON.stringify({ i, text: `ä\u0001\u007f\u2028😀"\\/${i}` }),
      recorded_at: `2026-09-01T10:00:${String(i % 60).padStart(2, '0')}.000Z`,
      prev_hash: prev,
      format,
      key_id: format === 2 ? `key-${i}` : null,
      key_name: format === 2 ? `naïve “key” ${i}` : null,
    };
    const full = { ...e, event_hash: eventHash(e) };
    prev = full.event_hash;
    out.push(full);
  }
  return out;
}

/** A query runner over `rows`: answers the backfill's SELECT and records its INSERTs. */
function fakeRunner(rows: StoredEvent[]): { query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>; nodes: Map<string, Buffer> } {
  const nodes = new Map<string, Buffer>();
  return {
    nodes,
    query: async (sql, params = []) => {
      if (sql.startsWith('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?')) {
        const [after, limit] = params as number[];
        return rows.filter((r) => r.position > after).slice(0, limit) as unknown as Record<string, unknown>[];
      }
      if (sql.startsWith('INSERT INTO tree_nodes (level, idx, hash) VALUES')) {
        for (let i = 0; i < params.length; i += 3) {
          const key = `${params[i]}/${params[i + 1]}`;
          if (nodes.has(key)) throw new Error(`node ${key} inserted twice`);
          nodes.set(key, params[i + 2] as Buffer);
        }
        return [];
      }
      throw new Error(`unexpected SQL: ${sql}`);
    },
  };
}

describe('the frozen tree backfill (1764500000000)', () => {
  it.each([0, 1, 2, 3, 7, 8, 13, 100, 5001])('%i events: every complete subtree equals the reference tree over eventLeaf', async (n) => {
    const rows = events(n);
    const r = fakeRunner(rows);
    expect(await backfillTree(r.query)).toBe(n);
    const leaves = rows.map((e) => eventLeaf(e));
    let expected = 0;
    for (let level = 0; 2 ** level <= n; level++) {
      const width = 2 ** level;
      for (let idx = 0; (idx + 1) * width <= n; idx++) {
        expected++;
        const want = level === 0 ? refLeaf(leaves[idx]) : MTH(leaves.slice(idx * width, (idx + 1) * width));
        // Reference MTH is O(width): every node of the small trees; of the page-crossing one, every leaf and the first and last node of each level.
        if (n > 100 && level > 0 && idx !== 0 && (idx + 2) * width <= n) continue;
        expect(r.nodes.get(`${level}/${idx}`)?.toString('hex')).toBe(want.toString('hex'));
      }
    }
    expect(r.nodes.size).toBe(expected);
  });

  it('a gap in positions fails the migration, naming the position', async () => {
    const rows = events(5).filter((e) => e.position !== 3);
    await expect(backfillTree(fakeRunner(rows).query)).rejects.toThrow('the events table has a gap at position 3');
  });

  it('a format it does not know fails the migration, naming the event', async () => {
    const rows = events(2).map((e) => (e.position === 2 ? { ...e, format: 7 } : e));
    await expect(backfillTree(fakeRunner(rows).query)).rejects.toThrow('event 2 has format 7');
  });
});
