/**
 * A deliberately simple C2SP tlog-tiles reader, written from the spec
 * (../shared/spec/c2sp/tlog-tiles.md) and the RFC 6962 reference beside it;
 * no shared code with src/ (its tile code is checked against this).
 *
 * - "Merkle Tree": the n-th tile at level l is, for i in 0..255,
 *   MTH(D[(n * 256 + i) * 256**l : (n * 256 + i + 1) * 256**l]).
 * - "Partial Tiles": the partial tile at level l for size s has
 *   floor(s / 256**l) mod 256 entries; empty tiles are not served.
 * - `<N>`: zero-padded 3-digit path elements, all but the last prefixed x.
 * - "Log entries": big-endian uint16 length-prefixed entries.
 */
import { MTH, refLeaf } from './rfc6962';

/** `<N>` of the spec: 1234067 -> x001/x234/067. */
export function refIndexPath(n: number): string {
  let s = n.toString();
  while (s.length % 3 !== 0) s = '0' + s;
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += 3) parts.push(s.slice(i, i + 3));
  return parts.map((p, i) => (i === parts.length - 1 ? p : 'x' + p)).join('/');
}

/** One resource a tree of some size serves. */
export interface RefTile {
  /** A level 0..63, or -1 for an entry bundle. */
  level: number;
  n: number;
  /** Hashes (or entries) in it: 256 full, 1..255 partial. */
  w: number;
  path: string;
}

export function refPath(level: number, n: number, w: number): string {
  return `tile/${level < 0 ? 'entries' : String(level)}/${refIndexPath(n)}${w === 256 ? '' : `.p/${w}`}`;
}

/** Every tile and bundle a log of `size` serves, straight from "Partial Tiles" (full ones, then the partial one, per level). */
export function refTilesOf(size: number): RefTile[] {
  const out: RefTile[] = [];
  for (let level = 0; size >= 256 ** level; level++) {
    const count = Math.floor(size / 256 ** level);
    for (let n = 0; n < Math.floor(count / 256); n++) out.push({ level, n, w: 256, path: refPath(level, n, 256) });
    if (count % 256 > 0) out.push({ level, n: Math.floor(count / 256), w: count % 256, path: refPath(level, Math.floor(count / 256), count % 256) });
  }
  const leaves = size;
  for (let n = 0; n < Math.floor(leaves / 256); n++) out.push({ level: -1, n, w: 256, path: refPath(-1, n, 256) });
  if (leaves % 256 > 0) out.push({ level: -1, n: Math.floor(leaves / 256), w: leaves % 256, path: refPath(-1, Math.floor(leaves / 256), leaves % 256) });
  return out;
}

/** The bytes a hash tile must hold, from the spec's formula over the leaves `d`. */
export function refTileBytes(d: Buffer[], level: number, n: number, w: number): Buffer {
  const span = 256 ** level;
  const hashes: Buffer[] = [];
  for (let i = 0; i < w; i++) hashes.push(MTH(d.slice((n * 256 + i) * span, (n * 256 + i + 1) * span)));
  return Buffer.concat(hashes);
}

/** Split a hash tile into its 32-byte hashes (throws when its length is not a multiple of 32). */
export function refTileHashes(bytes: Buffer): Buffer[] {
  if (bytes.length % 32 !== 0) throw new Error(`a tile of ${bytes.length} bytes`);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 32) out.push(bytes.subarray(i, i + 32));
  return out;
}

/** Decode an entry bundle: each entry a big-endian uint16 length and that many bytes (throws when cut short). */
export function refDecodeBundle(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  while (i < bytes.length) {
    if (i + 2 > bytes.length) throw new Error('a length cut short');
    const len = bytes[i] * 256 + bytes[i + 1];
    if (i + 2 + len > bytes.length) throw new Error('an entry cut short');
    out.push(bytes.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
  return out;
}

/**
 * Check a bundle against its level-0 tile the way a spec client does: each
 * entry hashes to the tile's hash at its place. Returns the indexes (within
 * the bundle) of entries that do not (for this log: the zero-length
 * entries of withheld leaves), after checking the count.
 */
export function refBundleMismatches(bundle: Buffer, level0Tile: Buffer): number[] {
  const entries = refDecodeBundle(bundle);
  const hashes = refTileHashes(level0Tile);
  if (entries.length !== hashes.length) throw new Error(`a bundle of ${entries.length} entries for a tile of ${hashes.length} hashes`);
  return entries.flatMap((e, i) => (refLeaf(e).equals(hashes[i]) ? [] : [i]));
}
