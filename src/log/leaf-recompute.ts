/**
 * The checkpoint signer's own recomputation of new leaves (issue 14): each
 * event read back from the events table, its hash and chain link checked,
 * its leaf (the event-hash input, RFC 6962 S2.1 leaf data) integrated into
 * a tree resumed from the last signed size. Pure over a {@link Queryable},
 * so it runs the same on the event loop or in the signer's worker thread
 * (leaf-worker.ts).
 */
import { eventHashInput } from '../core/ledger/event-hash';
import { sha256Hex } from '../core/aer1';
import { TreeIntegrator } from '../core/tlog';
import type { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';

/** Events read per query. */
const PAGE = 5000;

/** What the signer asks for: extend the tree of `from` leaves (its right edge `edge`, event hash `prevHash` at `from`) to `to`. */
export interface RecomputeRequest {
  from: number;
  to: number;
  /** The right-edge subtree hashes of the tree of size `from` (TreeIntegrator.edgeHashes). */
  edge: Buffer[];
  /** The event hash at position `from` (the genesis hash at 0). */
  prevHash: string;
}

/**
 * `ok: true`: the tree of `size` leaves (its right edge and root) and the
 * event hash at `size`. `ok: false`: why the events cannot be signed (a gap,
 * a broken link, an altered or unserializable event); the signer stops for good.
 */
export type RecomputeResult = { ok: true; size: number; edge: Buffer[]; root: Buffer; headHash: string } | { ok: false; reason: string };

/**
 * Recompute leaves `from+1..to` from the events on `q`. `pause` runs
 * between pages (the event loop yields there; a worker thread passes none).
 * Errors: only the database's (a failed read); every check that fails is a
 * `{ ok: false, reason }`.
 */
export async function recomputeLeaves(q: Queryable, req: RecomputeRequest, pause?: () => Promise<void>): Promise<RecomputeResult> {
  const events = new EventsRepository();
  const work = TreeIntegrator.resume(req.from, req.edge);
  let prev = req.prevHash;
  for (let after = req.from; after < req.to; ) {
    const rows = await events.page(q, after, req.to, PAGE);
    if (rows.length === 0) break;
    const leaves: Buffer[] = [];
    for (const e of rows) {
      if (e.position !== after + 1) return { ok: false, reason: `the events table has a gap at position ${after + 1}` };
      if (e.prev_hash !== prev) return { ok: false, reason: `event ${e.position} does not link to event ${e.position - 1} (prev_hash differs)` };
      let input: string;
      try {
        input = eventHashInput(e);
      } catch (err) {
        return { ok: false, reason: `event ${e.position} cannot be serialized (${(err as Error).message}): it was altered` };
      }
      if (sha256Hex(input) !== e.event_hash) return { ok: false, reason: `event ${e.position} does not match its stored event_hash: it was altered` };
      leaves.push(Buffer.from(input, 'latin1'));
      prev = e.event_hash;
      after = e.position;
    }
    work.appendLeaves(leaves);
    if (pause) await pause();
  }
  if (work.size !== req.to) return { ok: false, reason: `expected ${req.to} leaves, read ${work.size}` };
  return { ok: true, size: work.size, edge: work.edgeHashes(), root: work.root(), headHash: prev };
}
