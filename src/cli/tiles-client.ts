/**
 * Reading the log from C2SP tlog-tiles (`aer1 log monitor --tiles URL`,
 * `aer1 log inclusion --tiles URL`): a static copy (TILES_DIR, export-tiles)
 * on any web server, or the API's own `/tile/...` paths. The tiles are
 * authenticated against the checkpoint (src/core/tlog/tiles.ts) and the
 * proofs are the core's (src/core/tlog/merkle.ts), so a copy can make a
 * check fail to run (exit 2) but never make a false proof pass.
 */
import { Checkpoint, consistencyProof, decodeBundle, encodeTileIndex, inclusionProof, isTlogError, leafHash, TileHashReader, tilePath, TileRef, tileWidth } from '../core/tlog';
import { errorText } from './io';
import { getOk, httpGet, LogUnreachable } from './log-client';

/** A tiles copy: its prefix URL (no trailing slash) and the HTTP timeout. */
export interface TilesSource {
  base: string;
  timeoutS: number;
}

/** GET `<base>/<path>` as bytes (anything but 200: {@link LogUnreachable}). */
function get(src: TilesSource, path: string): Promise<Buffer> {
  return getOk(`${src.base}/${path}`, src.timeoutS, 'application/octet-stream');
}

/** The authenticated hash reader over the copy's tiles for `cp`. */
export function tileReader(src: TilesSource, cp: Checkpoint): TileHashReader {
  return new TileHashReader(cp.size, cp.rootHash, (t: TileRef) => get(src, tilePath(t)));
}

/** Run `fn`; a tile that is not the checkpoint's tree (or cut short) is a {@link LogUnreachable} naming the copy. */
async function fromTiles<T>(src: TilesSource, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isTlogError(e)) throw new LogUnreachable(`the tiles at ${src.base} cannot give ${what}: ${errorText(e)} (the copy is not the tree of the checkpoint it serves, or is incomplete)`);
    throw e;
  }
}

/** The copy's tiles give `cp`'s root (a monitor's check of the copy itself). */
export function checkTilesRoot(src: TilesSource, cp: Checkpoint): Promise<void> {
  return fromTiles(src, `the root of size ${cp.size}`, async () => void (await tileReader(src, cp).verifiedRoot()));
}

/** PROOF(first, D[0:cp.size]) from authenticated tiles (RFC 9162 section 2.1.4.1); 0 < first < cp.size. */
export function consistencyFromTiles(src: TilesSource, first: number, cp: Checkpoint): Promise<Buffer[]> {
  return fromTiles(src, `a consistency proof from ${first} to ${cp.size}`, async () => {
    const reader = tileReader(src, cp);
    await reader.verifiedRoot();
    return consistencyProof(first, cp.size, reader);
  });
}

/** What the copy gives for one leaf: its bytes (null when its bundle entry is empty: withheld), its leaf hash from the level-0 tile, and its inclusion proof. */
export interface TilesLeaf {
  leaf: Buffer | null;
  leafHash: Buffer;
  proof: Buffer[];
}

/**
 * Leaf `index` < cp.size from the copy: its inclusion proof and leaf hash
 * from authenticated tiles, its bytes from its entry bundle (or, for a
 * zero-length entry, `leaf/<N>` when the copy has it: a public leaf over
 * 65,535 bytes). An entry that does not hash to the tile's leaf hash is a
 * {@link LogUnreachable} (a broken copy).
 */
export function leafFromTiles(src: TilesSource, index: number, cp: Checkpoint): Promise<TilesLeaf> {
  return fromTiles(src, `leaf ${index}`, async () => {
    const reader = tileReader(src, cp);
    await reader.verifiedRoot();
    const [h, proof] = await Promise.all([reader.leafHashAt(index), inclusionProof(index, cp.size, reader)]);
    const n = Math.floor(index / 256);
    const bundleRef: TileRef = { level: 'entries', index: n, width: tileWidth('entries', n, cp.size) };
    const entries = decodeBundle(await get(src, tilePath(bundleRef)));
    if (entries.length !== bundleRef.width) throw new LogUnreachable(`${src.base}/${tilePath(bundleRef)} holds ${entries.length} entries, not ${bundleRef.width}`);
    let leaf: Buffer | null = entries[index % 256];
    if (leaf.length === 0) {
      const a = await httpGet(`${src.base}/leaf/${encodeTileIndex(index)}`, src.timeoutS, 'application/octet-stream');
      leaf = a.status === 200 ? a.body : null;
    }
    if (leaf !== null && !leafHash(leaf).equals(h)) throw new LogUnreachable(`the entry of leaf ${index} served at ${src.base} does not hash to its leaf hash in the level-0 tile`);
    return { leaf, leafHash: h, proof };
  });
}
