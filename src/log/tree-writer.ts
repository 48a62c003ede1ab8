import { Injectable } from '@nestjs/common';
import { UnavailableError } from '../common/errors';
import type { Tx } from '../database/database.service';
import type { StoredEvent } from '../core/ledger/event-hash';
import { TreeIntegrator } from '../core/tlog';
import type { LeafSink } from '../ledger/leaf-sink';
import { MissingNodeError, TreeRepository } from './tree.repository';

/** The leaves a write transaction appended, integrated into the tree just before it commits. */
interface PendingLeaves {
  /** Position of the first event appended (its leaf index is this - 1). */
  firstPosition: number;
  /** The hash before it: the event hash at the tree size the leaves extend. */
  prevHash: string;
  /** Each event's leaf: its hash input (ASCII, so its UTF-8 bytes are its characters). */
  leaves: string[];
  lastHash: string;
}

/**
 * The verifiable log's {@link LeafSink} (provided as `LEAF_SINK`): the leaves
 * `LedgerService.append` hands it are integrated into the RFC 6962 tree and
 * their completed subtrees written to `tree_nodes` by a before-commit hook of
 * the write transaction, so the tree always has exactly as many leaves as the
 * ledger has events (issue 14).
 */
@Injectable()
export class TreeWriter implements LeafSink {
  /** Leaves appended by each call (until it is kept), then by each commit group. */
  private readonly pending = new WeakMap<object, PendingLeaves>();
  /**
   * The tree as this process last integrated it, with the event hash at its
   * size. Used only when a transaction extends exactly that size and that
   * hash (the hash pins the whole history, so a tree resumed elsewhere or a
   * rolled-back integration is never reused); otherwise the right edge is
   * read again (O(log n) nodes).
   */
  private tree: { integrator: TreeIntegrator; headHash: string } | null = null;
  private readonly nodes = new TreeRepository();

  /**
   * Queue the event's leaf. A call's leaves join its commit group's once the
   * call is kept; the group's leaves are integrated once, just before the
   * group commits (one read of the right edge at most, one multi-row INSERT
   * per 500 nodes for the whole group).
   */
  add(tx: Tx, ev: StoredEvent, input: string): void {
    let p = this.pending.get(tx);
    if (!p) {
      p = { firstPosition: ev.position, prevHash: ev.prev_hash, leaves: [], lastHash: ev.prev_hash };
      this.pending.set(tx, p);
      tx.whenKept(() => this.keep(tx));
    }
    p.leaves.push(input);
    p.lastHash = ev.event_hash;
  }

  /** A kept call's leaves join its group's (they follow the group's, as its events follow theirs). */
  private keep(tx: Tx): void {
    const mine = this.pending.get(tx)!;
    this.pending.delete(tx);
    const group = this.pending.get(tx.group);
    if (group) {
      for (const l of mine.leaves) group.leaves.push(l);
      group.lastHash = mine.lastHash;
      return;
    }
    this.pending.set(tx.group, mine);
    tx.beforeGroupCommit((groupTx) => this.integrate(groupTx, tx.group));
  }

  /** Integrate the leaves a commit group appended and store the nodes they complete (one multi-row INSERT per 500 nodes). */
  private async integrate(tx: Tx, group: object): Promise<void> {
    const p = this.pending.get(group);
    if (!p) return;
    this.pending.delete(group);
    const size = p.firstPosition - 1;
    let t = this.tree;
    this.tree = null;
    if (!t || t.integrator.size !== size || t.headHash !== p.prevHash) {
      let edge: Buffer[];
      try {
        edge = await this.nodes.rightEdgeHashes(tx, size);
      } catch (e) {
        // A tree that lacks nodes of the ledger's events (deleted behind the triggers, or events loaded around the service)
        // cannot be extended: every write is refused, saying why, until it is repaired.
        if (e instanceof MissingNodeError) throw new UnavailableError('log_unavailable', `the verifiable log's stored tree lacks ${e.message.replace(/ is not stored$/, '')} of the ledger's first ${size} events, so nothing can be appended; writes are refused until the tree is repaired (npm run ledger -- verify reports what is wrong)`);
        throw e;
      }
      t = { integrator: TreeIntegrator.resume(size, edge), headHash: p.prevHash };
    }
    const result = t.integrator.appendLeaves(p.leaves.map((l) => Buffer.from(l, 'latin1')));
    await this.nodes.insert(tx, result.nodes);
    this.tree = { integrator: t.integrator, headHash: p.lastHash };
  }
}
