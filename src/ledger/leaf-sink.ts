import type { Tx } from '../database/database.service';
import type { StoredEvent } from '../core/ledger/event-hash';

/**
 * Where {@link LedgerService.append} hands each appended event's leaf (its
 * event-hash input, issue 14): the ledger defines the interface, the
 * verifiable log (`src/log/tree-writer.ts`) implements it and provides it
 * under {@link LEAF_SINK}. Called once per event, in position order, inside
 * the write transaction `tx` that appends it: the sink must make the leaf part
 * of that transaction (the tree commits with its events, or not at all) and
 * must refuse the write (throw) when it cannot.
 */
export interface LeafSink {
  /** Queue `event`'s leaf: `leaf` is its hash input (ASCII, so its UTF-8 bytes are its characters). */
  add(tx: Tx, event: StoredEvent, leaf: string): void;
}

/** The Nest injection token of the {@link LeafSink}. */
export const LEAF_SINK = Symbol('LEAF_SINK');

/**
 * The tree check behind `GET /api/ledger/verify` (the log's full audit):
 * provided by the verifiable log under {@link TREE_AUDIT}. Its report is
 * served as the `tree` member of the verification; `ok` is its verdict.
 */
export interface TreeAudit {
  audit(): Promise<{ ok: boolean }>;
}

/** The Nest injection token of the {@link TreeAudit}. */
export const TREE_AUDIT = Symbol('TREE_AUDIT');
