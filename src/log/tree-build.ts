/**
 * Building the RFC 6962 tree of events written around the service (the
 * benchmark's raw loads; the verifiable-log migration keeps a frozen copy of
 * its own in migrations/frozen/): every event, in position order, is integrated
 * as leaf `position - 1` with its leaf bytes ({@link eventLeaf}), and every
 * complete subtree is stored in `tree_nodes`. Pages of events are read and
 * their nodes written in multi-row INSERTs, so memory stays flat.
 */
import { eventLeaf } from '../core/ledger/event-hash';
import { NodeBatch, TreeIntegrator } from '../core/tlog';
import { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { TreeRepository } from './tree.repository';

const PAGE = 5000;

/**
 * Integrate events `(treeSize, head]` into the stored tree of `treeSize`
 * leaves (0 for a ledger without one). Returns the new size. Runs on `q`
 * (the migration's query runner, inside its transaction).
 */
export async function buildTree(q: Queryable, treeSize = 0): Promise<number> {
  const events = new EventsRepository();
  const nodes = new TreeRepository();
  const tree = treeSize === 0 ? TreeIntegrator.empty() : TreeIntegrator.resume(treeSize, await nodes.rightEdgeHashes(q, treeSize));
  let after = treeSize;
  for (;;) {
    const rows = await events.page(q, after, Number.MAX_SAFE_INTEGER, PAGE);
    if (rows.length === 0) return tree.size;
    if (rows[0].position !== tree.size + 1) throw new Error(`the events table has a gap at position ${tree.size + 1}: the tree cannot be built`);
    const batch: NodeBatch = tree.appendLeaves(rows.map((r) => eventLeaf(r))).nodes;
    await nodes.insert(q, batch);
    after = rows[rows.length - 1].position;
    if (after !== tree.size) throw new Error(`the events table has a gap before position ${after}: the tree cannot be built`);
  }
}
