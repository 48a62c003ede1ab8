/**
 * C2SP tlog-tiles (c2sp.org/tlog-tiles): the log's Merkle tree and entries
 * as static resources. Pure: paths, which tiles a tree size has, the entry
 * bundle encoding, and a {@link HashReader} over fetched tiles that
 * authenticates every tile it uses against a checkpoint's root, so the
 * proofs it yields (with the plans of merkle.ts) are the log's.
 *
 * Tile geometry ("Merkle Tree"): tiles of height 8, so a tile at level L
 * holds the stored nodes of tree level 8L, 256 to a full tile; tile N spans
 * nodes [256N, 256N + 256). Entry bundles ("Log entries") follow the
 * level-0 tiles: entry i of bundle N is leaf 256N + i, big-endian uint16
 * length-prefixed.
 */
import { TlogError } from './errors';
import { HASH_SIZE, HashReader, leafHash, nodeHash, NodeId, treeHash } from './merkle';

/** Tile height (levels of the tree a tile spans). */
export const TILE_HEIGHT = 8;
/** Hashes in a full tile (2^TILE_HEIGHT); a full tile is 8,192 bytes. */
export const TILE_WIDTH = 256;
/** The largest entry a bundle can hold: its length is a big-endian uint16. */
export const MAX_BUNDLE_ENTRY = 0xffff;

/**
 * A tile or entry bundle: `level` 0..63, or `entries` for an entry bundle;
 * `index` its N; `width` 1..256 (256: full; below: a partial tile, `.p/<W>`).
 */
export interface TileRef {
  readonly level: number | 'entries';
  readonly index: number;
  readonly width: number;
}

/** `n` as tlog-tiles path elements: zero-padded 3-digit groups, all but the last prefixed `x` (1234067 -> `x001/x234/067`). */
export function encodeTileIndex(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new TlogError('tile_path_invalid', 'a tile index is a non-negative safe integer', { index: String(n) });
  let digits = String(n);
  digits = digits.padStart(Math.ceil(digits.length / 3) * 3, '0');
  const groups = digits.match(/.{3}/g) as string[];
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** The path of a tile below the log's prefix, without a leading slash: `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`. */
export function tilePath(t: TileRef): string {
  if (!Number.isInteger(t.width) || t.width < 1 || t.width > TILE_WIDTH) throw new TlogError('tile_path_invalid', 'a tile width is 1..256', { width: String(t.width) });
  return `tile/${t.level}/${encodeTileIndex(t.index)}${t.width < TILE_WIDTH ? `.p/${t.width}` : ''}`;
}

/**
 * Parse a tile path (`tile/...`, no leading slash, no query) strictly: only
 * the encoding {@link tilePath} writes is accepted (no extra leading zeros,
 * no empty x groups). Throws TlogError `tile_path_invalid`.
 */
export function parseTilePath(path: string): TileRef {
  const bad = (why: string): TlogError => new TlogError('tile_path_invalid', `not a tile path: ${why}`, { path: path.slice(0, 200) });
  const m = /^tile\/(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*)([0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(path);
  if (!m) throw bad('expected tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], N in 3-digit path elements');
  const level = m[1] === 'entries' ? 'entries' : Number(m[1]);
  if (level !== 'entries' && level > 63) throw bad('the level is 0..63');
  const digits = m[2].replace(/[x/]/g, '') + m[3];
  if (digits.length > 15) throw bad('the index is too large');
  const index = Number(digits);
  const width = m[4] === undefined ? TILE_WIDTH : Number(m[4]);
  if (m[4] !== undefined && width >= TILE_WIDTH) throw bad('a partial width is 1..255');
  const t: TileRef = { level, index, width };
  if (tilePath(t) !== path) throw bad('the index is not in its canonical encoding');
  return t;
}

/** Hashes of level `8 * tileLevel` a tree of `size` leaves stores: floor(size / 256^tileLevel). */
function nodesAtTileLevel(tileLevel: number, size: number): number {
  return Math.floor(size / TILE_WIDTH ** tileLevel);
}

/**
 * The width of tile `index` at `level` (entry bundles: as level 0) in the
 * tree of `size` leaves: 256 when full, 1..255 for the partial tile, 0
 * when the tree has no such tile ("Partial Tiles": floor(s / 256^l) mod 256).
 */
export function tileWidth(level: number | 'entries', index: number, size: number): number {
  const count = nodesAtTileLevel(level === 'entries' ? 0 : level, size);
  const full = Math.floor(count / TILE_WIDTH);
  if (index < full) return TILE_WIDTH;
  if (index === full) return count % TILE_WIDTH;
  return 0;
}

/**
 * The tiles and bundles that exist for a tree of `size` leaves and not for
 * one of `from` leaves (`from` <= `size`; 0: all of them): each full tile
 * completed in between, and the partial tiles of `size`. Hash tiles by
 * level, then the entry bundles; index order within each.
 */
export function tilesBetween(from: number, size: number): TileRef[] {
  const out: TileRef[] = [];
  const levels: (number | 'entries')[] = [];
  for (let l = 0; nodesAtTileLevel(l, size) > 0; l++) levels.push(l);
  if (size > 0) levels.push('entries');
  for (const level of levels) {
    const count = nodesAtTileLevel(level === 'entries' ? 0 : level, size);
    const before = Math.floor(nodesAtTileLevel(level === 'entries' ? 0 : level, from) / TILE_WIDTH);
    const full = Math.floor(count / TILE_WIDTH);
    for (let n = before; n < full; n++) out.push({ level, index: n, width: TILE_WIDTH });
    const w = count % TILE_WIDTH;
    // A partial tile exists only when the tree has grown since `from` at that level (else it was already written).
    if (w > 0 && count !== nodesAtTileLevel(level === 'entries' ? 0 : level, from)) out.push({ level, index: full, width: w });
  }
  return out;
}

/** The stored nodes a hash tile holds: tree level 8L, indexes [from, from + width). */
export function tileNodes(t: TileRef): { level: number; from: number; to: number } {
  const l = t.level === 'entries' ? 0 : t.level;
  return { level: TILE_HEIGHT * l, from: t.index * TILE_WIDTH, to: t.index * TILE_WIDTH + t.width };
}

/**
 * An entry bundle: each entry as a big-endian uint16 length and its bytes.
 * Throws TlogError `bundle_malformed` for an entry over {@link MAX_BUNDLE_ENTRY} bytes
 * (the caller decides what such an entry becomes; see docs/tiles.md).
 */
export function encodeBundle(entries: readonly Uint8Array[]): Buffer {
  let total = 0;
  for (const e of entries) {
    if (e.length > MAX_BUNDLE_ENTRY) throw new TlogError('bundle_malformed', `an entry of ${e.length} bytes does not fit a uint16 length`, { length: e.length });
    total += 2 + e.length;
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const e of entries) {
    out.writeUInt16BE(e.length, at);
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/** The entries of a bundle; throws TlogError `bundle_malformed` when a length runs past the end. */
export function decodeBundle(bytes: Uint8Array): Buffer[] {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const out: Buffer[] = [];
  let at = 0;
  while (at < b.length) {
    if (at + 2 > b.length) throw new TlogError('bundle_malformed', 'a length prefix is cut short', { offset: at });
    const n = b.readUInt16BE(at);
    if (at + 2 + n > b.length) throw new TlogError('bundle_malformed', `an entry of ${n} bytes runs past the end`, { offset: at });
    out.push(b.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return out;
}

/** MTH of `count` (a power of two) consecutive hashes of a tile starting at `pos`. */
function subtreeOf(tile: Buffer, pos: number, count: number): Buffer {
  let row: Buffer[] = [];
  for (let i = 0; i < count; i++) row.push(tile.subarray((pos + i) * HASH_SIZE, (pos + i + 1) * HASH_SIZE));
  while (row.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < row.length; i += 2) next.push(nodeHash(row[i], row[i + 1]));
    row = next;
  }
  return Buffer.from(row[0]);
}

/** Fetches a tile's bytes (e.g. `GET <prefix>/<tilePath(t)>`). */
export type TileFetcher = (t: TileRef) => Promise<Uint8Array>;

/**
 * A {@link HashReader} over the hash tiles of the tree of `size` leaves
 * with root `root` (from a verified checkpoint). Every tile is checked
 * before its hashes are used: its length (32 x width); a full tile's MTH
 * against its hash in the tile above; the partial tiles (which hold the
 * tree's right edge) against `root`. So every node it returns is the
 * log's, and a proof built from it that fails shows the log, not the copy,
 * at fault. Throws TlogError `tile_malformed` (a wrong length) or
 * `root_mismatch` (tiles that are not this tree).
 */
export class TileHashReader implements HashReader {
  private readonly tiles = new Map<string, Promise<Buffer>>();
  private readonly checked = new Map<string, Promise<void>>();
  private rootChecked: Promise<void> | null = null;

  constructor(
    readonly size: number,
    private readonly root: Uint8Array,
    private readonly fetchTile: TileFetcher,
  ) {}

  /** Tiles fetched so far (each once). */
  get fetched(): number {
    return this.tiles.size;
  }

  /** The tile's bytes, fetched once, length checked (not yet authenticated). */
  private raw(level: number, index: number): Promise<Buffer> {
    const width = tileWidth(level, index, this.size);
    if (width === 0) return Promise.reject(new TlogError('index_out_of_range', `the tree of size ${this.size} has no tile ${index} at level ${level}`, { level, index, size: this.size }));
    const t: TileRef = { level, index, width };
    const key = tilePath(t);
    let p = this.tiles.get(key);
    if (!p) {
      p = this.fetchTile(t).then((bytes) => {
        if (bytes.length !== width * HASH_SIZE) throw new TlogError('tile_malformed', `${key} is ${bytes.length} bytes, not ${width * HASH_SIZE}`, { path: key, length: bytes.length });
        return Buffer.from(bytes);
      });
      this.tiles.set(key, p);
    }
    return p;
  }

  /** The tile, authenticated (see the class comment). */
  private async tile(level: number, index: number): Promise<Buffer> {
    const bytes = await this.raw(level, index);
    const key = `${level}/${index}`;
    let c = this.checked.get(key);
    if (!c) {
      c = tileWidth(level, index, this.size) < TILE_WIDTH ? this.checkRoot() : this.checkFull(level, index, bytes);
      this.checked.set(key, c);
    }
    await c;
    return bytes;
  }

  /** A full tile's MTH equals entry `index mod 256` of its (authenticated) parent tile. */
  private async checkFull(level: number, index: number, bytes: Buffer): Promise<void> {
    const parent = await this.tile(level + 1, Math.floor(index / TILE_WIDTH));
    const pos = index % TILE_WIDTH;
    if (!subtreeOf(bytes, 0, TILE_WIDTH).equals(parent.subarray(pos * HASH_SIZE, (pos + 1) * HASH_SIZE))) {
      throw new TlogError('root_mismatch', `tile ${index} at level ${level} does not hash to its entry in the tile above: the tiles are not this tree`, { level, index });
    }
  }

  /** The partial tiles (the right edge, read unauthenticated) give `root`. */
  private checkRoot(): Promise<void> {
    this.rootChecked ??= (async () => {
      const raw: HashReader = { readHashes: (ids) => Promise.all(ids.map((id) => this.nodeFrom(id, (l, i) => this.raw(l, i)))) };
      const got = await treeHash(this.size, raw);
      if (!got.equals(Buffer.from(this.root))) {
        throw new TlogError('root_mismatch', `the tiles give root ${got.toString('base64')} for size ${this.size}, not the checkpoint's ${Buffer.from(this.root).toString('base64')}: the tiles are not this tree`, {
          expected: Buffer.from(this.root).toString('base64'),
          calculated: got.toString('base64'),
        });
      }
    })();
    return this.rootChecked;
  }

  /** Node (h, i) from the tile of level floor(h / 8) holding its 2^(h mod 8) descendants at level 8 floor(h / 8). */
  private async nodeFrom(id: NodeId, get: (level: number, index: number) => Promise<Buffer>): Promise<Buffer> {
    const l = Math.floor(id.level / TILE_HEIGHT);
    const span = 2 ** (id.level % TILE_HEIGHT);
    const first = id.index * span;
    const tileIndex = Math.floor(first / TILE_WIDTH);
    const pos = first % TILE_WIDTH;
    if (first + span > nodesAtTileLevel(l, this.size)) throw new TlogError('index_out_of_range', `node (${id.level}, ${id.index}) is not complete in the tree of size ${this.size}`, { size: this.size });
    return subtreeOf(await get(l, tileIndex), pos, span);
  }

  /** The hashes of `ids` (complete subtrees of this tree), from authenticated tiles. */
  readHashes(ids: readonly NodeId[]): Promise<Buffer[]> {
    return Promise.all(ids.map((id) => this.nodeFrom(id, (l, i) => this.tile(l, i))));
  }

  /** The root this reader's tiles give (after checking it equals the checkpoint's). */
  async verifiedRoot(): Promise<Buffer> {
    if (this.size === 0) return Buffer.from(this.root);
    await this.checkRoot();
    return Buffer.from(this.root);
  }

  /** The leaf hash of leaf `index` (from its authenticated level-0 tile). */
  async leafHashAt(index: number): Promise<Buffer> {
    return (await this.readHashes([{ level: 0, index }]))[0];
  }
}

/** True when `entry` hashes (RFC 6962 leaf hash) to `expected`. */
export function entryMatches(entry: Uint8Array, expected: Uint8Array): boolean {
  return leafHash(entry).equals(Buffer.from(expected));
}
