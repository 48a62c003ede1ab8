/**
 * The full check of the verifiable log behind `GET /api/ledger/verify` and
 * `aer1 ledger verify`: recompute every leaf from its event, rebuild the
 * RFC 6962 tree (section 2.1) from them, and compare every stored node; check
 * every stored checkpoint's root against the rebuilt tree at its size and
 * its signature under the log's key. Streams in pages (flat memory) up to
 * the head seen when it starts, so concurrent appends cannot disturb it.
 */
import { storedLeaf } from '../core/ledger/event-hash';
import { leafHash, NoteVerifier, TreeIntegrator, verifyCheckpoint } from '../core/tlog';
import { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { TreeRepository } from './tree.repository';

const PAGE = 5000;

/** What the tree check found: the first failure of each kind (null when none). */
export interface TreeAuditReport {
  ok: boolean;
  /** Leaves (events) checked, and stored nodes compared. */
  leaves_checked: number;
  /** Format 1/2 leaves whose data was erased (issue 29): their stored leaf hash was taken as it stands (not recomputable). */
  leaves_erased?: number;
  nodes_checked: number;
  checkpoints_checked: number;
  /** The rebuilt root at the size checked (base64). */
  root: string | null;
  /** A stored node that differs from the tree rebuilt from the events (or is missing). */
  node_failure: { level: number; index: number; reason: 'node_mismatch' | 'node_missing'; detail: string } | null;
  /** Stored leaves beyond the events (the tree holds more than the ledger). */
  extra_leaves: number;
  /** A stored checkpoint whose root is not the rebuilt tree's at its size, or whose signature does not verify. */
  checkpoint_failure: { size: number; reason: 'checkpoint_root_mismatch' | 'checkpoint_signature_invalid' | 'checkpoint_beyond_ledger'; detail: string } | null;
}

/**
 * Check the tree and checkpoints up to `size` leaves (the ledger's head).
 * `logKey` checks checkpoint signatures (omit it to check roots only, e.g.
 * offline without the key). `yieldEvery` lets a server breathe between pages.
 */
export async function auditTree(q: Queryable, size: number, opts: { logKey?: NoteVerifier; yieldEvery?: () => Promise<void> } = {}): Promise<TreeAuditReport> {
  const events = new EventsRepository();
  const tree = new TreeRepository();
  const r: TreeAuditReport = { ok: true, leaves_checked: 0, nodes_checked: 0, checkpoints_checked: 0, root: null, node_failure: null, extra_leaves: 0, checkpoint_failure: null };
  const rebuilt = TreeIntegrator.empty();
  let checkpoints = await tree.checkpointsAfter(q, -1, 1000);
  let cpAt = 0;
  const checkCheckpointsAt = async (n: number): Promise<void> => {
    for (;;) {
      if (cpAt >= checkpoints.length) {
        if (checkpoints.length < 1000) return;
        checkpoints = await tree.checkpointsAfter(q, checkpoints[checkpoints.length - 1].size, 1000);
        cpAt = 0;
        if (checkpoints.length === 0) return;
      }
      const cp = checkpoints[cpAt];
      if (cp.size > n) return;
      cpAt++;
      r.checkpoints_checked++;
      if (r.checkpoint_failure) continue;
      if (cp.size === n && cp.root !== rebuilt.root().toString('base64')) {
        r.checkpoint_failure = { size: cp.size, reason: 'checkpoint_root_mismatch', detail: `the checkpoint of size ${cp.size} has root ${cp.root}; the tree rebuilt from the events has ${rebuilt.root().toString('base64')}` };
        continue;
      }
      if (opts.logKey) {
        try {
          const v = verifyCheckpoint(cp.note, [opts.logKey]);
          if (v.checkpoint.size !== cp.size || v.checkpoint.rootHash.toString('base64') !== cp.root) throw new Error('the signed note names another size or root than its row');
        } catch (e) {
          r.checkpoint_failure = { size: cp.size, reason: 'checkpoint_signature_invalid', detail: `the checkpoint of size ${cp.size} does not verify under the log's key: ${(e as Error).message}` };
        }
      }
    }
  };
  await checkCheckpointsAt(0);
  for (let after = 0; after < size; ) {
    const rows = await events.page(q, after, size, PAGE);
    if (rows.length === 0) break;
    // Integrate up to each checkpoint size inside the page, so its root is checked exactly there.
    let i = 0;
    while (i < rows.length) {
      const nextCp = cpAt < checkpoints.length ? checkpoints[cpAt].size : Infinity;
      const take = Math.min(rows.length - i, nextCp > rebuilt.size ? nextCp - rebuilt.size : rows.length - i);
      const slice = rows.slice(i, i + take);
      const from = rebuilt.size;
      // A row that cannot be serialized has no leaf: an empty one stands in, so its stored leaf is reported as not matching.
      // A format 1/2 leaf whose data was erased (issue 29) cannot be rebuilt: its stored leaf hash stands in, counted in leaves_erased.
      const leafHashes: Buffer[] = [];
      const erasedIdx = slice.flatMap((e) => (storedLeaf(e).erased ? [e.position - 1] : []));
      const storedLeafHash = new Map<number, Buffer>();
      if (erasedIdx.length > 0) for (const n of await tree.level(q, 0, erasedIdx[0], erasedIdx[erasedIdx.length - 1] + 1)) storedLeafHash.set(n.idx, n.hash);
      for (const e of slice) {
        const l = storedLeaf(e);
        if (l.erased) {
          r.leaves_erased = (r.leaves_erased ?? 0) + 1;
          leafHashes.push(storedLeafHash.get(e.position - 1) ?? Buffer.alloc(32));
        } else leafHashes.push(leafHash(l.leaf ?? Buffer.alloc(0)));
      }
      const batch = rebuilt.appendLeafHashes(leafHashes).nodes;
      i += take;
      r.leaves_checked += slice.length;
      if (!r.node_failure) {
        // Compare the nodes this slice completed, one range query per level.
        const byLevel = new Map<number, { lo: number; hi: number }>();
        for (let k = 0; k < batch.count; k++) {
          const range = byLevel.get(batch.levels[k]);
          const idx = batch.indexes[k];
          if (!range) byLevel.set(batch.levels[k], { lo: idx, hi: idx + 1 });
          else range.hi = Math.max(range.hi, idx + 1);
        }
        const stored = new Map<string, Buffer>();
        for (const [level, { lo, hi }] of byLevel) for (const n of await tree.level(q, level, lo, hi)) stored.set(`${level}/${n.idx}`, n.hash);
        for (let k = 0; k < batch.count && !r.node_failure; k++) {
          const level = batch.levels[k];
          const index = batch.indexes[k];
          const s = stored.get(`${level}/${index}`);
          r.nodes_checked++;
          if (!s) r.node_failure = { level, index, reason: 'node_missing', detail: `tree node (${level}, ${index}) is not stored` };
          else if (!s.equals(batch.hash(k))) {
            r.node_failure = {
              level,
              index,
              reason: 'node_mismatch',
              detail: level === 0 ? `leaf ${index} (position ${index + 1}) in the stored tree is not the hash of its event as stored` : `tree node (${level}, ${index}) differs from the tree rebuilt from the events`,
            };
          }
        }
      }
      void from;
      await checkCheckpointsAt(rebuilt.size);
    }
    after = rows[rows.length - 1].position;
    if (opts.yieldEvery) await opts.yieldEvery();
  }
  r.root = rebuilt.root().toString('base64');
  const storedLeaves = await tree.leafCount(q);
  // Leaves written after `size` by concurrent appends are not extra: only count beyond the ledger's events now.
  const head = (await events.head(q))?.position ?? 0;
  r.extra_leaves = Math.max(0, storedLeaves - head);
  const beyond = await tree.checkpointsAfter(q, head, 1);
  if (!r.checkpoint_failure && beyond.length > 0) {
    r.checkpoint_failure = { size: beyond[0].size, reason: 'checkpoint_beyond_ledger', detail: `a checkpoint of size ${beyond[0].size} was signed, but the ledger holds ${head} events: events were removed` };
  }
  r.ok = r.node_failure === null && r.checkpoint_failure === null && r.extra_leaves === 0 && r.leaves_checked === size;
  return r;
}
