/**
 * The bytes of C2SP tlog-tiles resources read from the ledger's database
 * (docs/tiles.md): hash tiles from `tree_nodes`, entry bundles from the
 * events (each leaf rebuilt with `storedLeaf` and checked against
 * the stored leaf hash before it is served). Shared by `GET /tile/...`,
 * the static copy (TILES_DIR) and `npm run ledger -- export-tiles`.
 */
import { LedgerError } from '../common/errors';
import { storedLeaf } from '../core/ledger/event-hash';
import { encodeBundle, HASH_SIZE, leafHash, MAX_BUNDLE_ENTRY, TileRef, tileNodes } from '../core/tlog';
import { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { leafBytesWithheld } from './log-answers';
import { TreeRepository } from './tree.repository';

/** Why an entry of a bundle is empty instead of its leaf. */
export type EmptiedEntry = 'withheld' | 'erased' | 'too_large';

/** A bundle and the entries in it that are empty (index within the bundle, and why). */
export interface BundleBytes {
  bytes: Buffer;
  emptied: { index: number; why: EmptiedEntry }[];
}

/** Reads tiles and bundles of the stored tree (see the module comment). */
export class TileReads {
  private readonly tree = new TreeRepository();

  constructor(private readonly events: EventsRepository) {}

  /**
   * A hash tile: the `width` stored hashes of tree level 8L from index 256N,
   * concatenated (32 x width bytes). 409 `tree_mismatch` when the stored
   * tree lacks one (the caller only asks for tiles within a checkpoint).
   */
  async hashTile(q: Queryable, t: TileRef): Promise<Buffer> {
    const { level, from, to } = tileNodes(t);
    const rows = await this.tree.level(q, level, from, to);
    if (rows.length !== to - from || rows.some((r, i) => r.idx !== from + i)) {
      throw new LedgerError(409, 'tree_mismatch', `the stored tree lacks nodes of tile ${t.index} at level ${String(t.level)}: it is not served`, { level: t.level, index: t.index });
    }
    const out = Buffer.allocUnsafe(rows.length * HASH_SIZE);
    rows.forEach((r, i) => out.set(r.hash, i * HASH_SIZE));
    return out;
  }

  /**
   * An entry bundle: leaves 256N .. 256N + width - 1, each big-endian
   * uint16 length-prefixed. A leaf anyone may read is its exact bytes; a
   * leaf withheld from the public (a `metadata` publication key, or an
   * event type served to compliance, auditor and admin keys only:
   * {@link leafWithheld}), a format 1/2 leaf whose data was erased (issue
   * 29: it can no longer be rebuilt) and a leaf over 65,535 bytes are a
   * zero-length entry (a leaf is never empty: docs/tiles.md). 409 `tree_mismatch` when
   * a leaf recomputed from its event does not hash to the stored leaf hash.
   */
  async bundle(q: Queryable, t: TileRef): Promise<BundleBytes> {
    const start = t.index * 256;
    const rows = await this.events.page(q, start, start + t.width, t.width);
    const stored = await this.tree.level(q, 0, start, start + t.width);
    if (rows.length !== t.width || stored.length !== t.width) throw new LedgerError(409, 'tree_mismatch', `the ledger lacks events of entry bundle ${t.index}: it is not served`, { index: t.index });
    const withheld = await this.events.withheldPositions(q, start, start + t.width);
    const emptied: BundleBytes['emptied'] = [];
    const entries = rows.map((e, i) => {
      const l = storedLeaf(e);
      if (l.erased && stored[i].idx === e.position - 1) {
        // A format 1/2 leaf whose data was erased (issue 29): its bytes are gone, its stored hash stands in the tile.
        emptied.push({ index: i, why: 'erased' });
        return Buffer.alloc(0);
      }
      const leaf = l.leaf;
      if (leaf === null || stored[i].idx !== e.position - 1 || !leafHash(leaf).equals(stored[i].hash)) {
        throw new LedgerError(409, 'tree_mismatch', `leaf ${e.position - 1} computed from its event does not match the stored tree: entry bundle ${t.index} is not served`, { index: e.position - 1 });
      }
      if (leafBytesWithheld(e, withheld.has(e.position), null)) {
        emptied.push({ index: i, why: 'withheld' });
        return Buffer.alloc(0);
      }
      if (leaf.length > MAX_BUNDLE_ENTRY) {
        emptied.push({ index: i, why: 'too_large' });
        return Buffer.alloc(0);
      }
      return leaf;
    });
    return { bytes: encodeBundle(entries), emptied };
  }

  /** The tile or bundle `t`. */
  async read(q: Queryable, t: TileRef): Promise<Buffer> {
    return t.level === 'entries' ? (await this.bundle(q, t)).bytes : this.hashTile(q, t);
  }
}
