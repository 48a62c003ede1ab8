/**
 * C2SP tlog-tiles in the core (src/core/tlog/tiles.ts), checked against the
 * independent reader in test/reference/tlog-tiles.ts (written from the spec,
 * no shared code): for every tree size 1..600 the tiles a log serves, their
 * bytes (the stored nodes of level 8L), the entry bundles, partial tiles
 * growing into full ones without a byte of their prefix changing, and the
 * proofs a {@link TileHashReader} gives, against the RFC 6962 reference.
 */
import {
  decodeBundle,
  encodeBundle,
  encodeTileIndex,
  HASH_SIZE,
  inclusionProof,
  consistencyProof,
  isTlogError,
  parseTilePath,
  TileHashReader,
  tileNodes,
  tilePath,
  TileRef,
  tilesBetween,
  TreeIntegrator,
} from '../../../src/core/tlog';
import { MTH, PATH, PROOF, refLeaf } from '../../reference/rfc6962';
import { refBundleMismatches, refDecodeBundle, refIndexPath, refTileBytes, refTilesOf } from '../../reference/tlog-tiles';

const MAX = 600;
/** Leaves of varied lengths (1..700 bytes), deterministic. */
const leaves: Buffer[] = Array.from({ length: MAX }, (_, i) => Buffer.from(`leaf ${i} `.padEnd(1 + ((i * 37) % 700), String.fromCharCode(97 + (i % 26))), 'utf8'));
/** Every stored node of the 600-leaf tree; a tree of size s holds those with (index + 1) * 2^level <= s. */
const nodes = new Map<string, Buffer>();
beforeAll(() => {
  const r = TreeIntegrator.empty().appendLeaves(leaves);
  for (let i = 0; i < r.nodes.count; i++) nodes.set(`${r.nodes.levels[i]}/${r.nodes.indexes[i]}`, r.nodes.hash(i));
});

/** A tile's bytes as the server builds them: the stored nodes it spans, or the bundle of its leaves. */
function ours(t: TileRef): Buffer {
  const { level, from, to } = tileNodes(t);
  if (t.level === 'entries') return encodeBundle(leaves.slice(from, to));
  const out: Buffer[] = [];
  for (let i = from; i < to; i++) out.push(nodes.get(`${level}/${i}`) as Buffer);
  return Buffer.concat(out);
}

/** A tile fetcher over the tree of `size` (optionally tampered). */
function fetcher(size: number, tamper?: (path: string, b: Buffer) => Buffer): (t: TileRef) => Promise<Buffer> {
  return async (t) => {
    const { from, to } = tileNodes(t);
    if (t.level !== 'entries' && to * 256 ** t.level > size) throw new Error(`asked for ${tilePath(t)} beyond size ${size}`);
    void from;
    const b = ours(t);
    return tamper ? tamper(tilePath(t), Buffer.from(b)) : b;
  };
}

describe('tlog-tiles paths', () => {
  it('encodes N as the spec does (1234067 -> x001/x234/067) and parses only that encoding', () => {
    for (const n of [0, 1, 67, 999, 1000, 1234067, 2 ** 40 + 3]) expect(encodeTileIndex(n)).toBe(refIndexPath(n));
    expect(encodeTileIndex(1234067)).toBe('x001/x234/067');
    expect(parseTilePath('tile/0/x001/x234/067')).toEqual({ level: 0, index: 1234067, width: 256 });
    expect(parseTilePath('tile/entries/x001/x234/067.p/5')).toEqual({ level: 'entries', index: 1234067, width: 5 });
    expect(parseTilePath('tile/63/000.p/255')).toEqual({ level: 63, index: 0, width: 255 });
    for (const bad of ['tile/00/000', 'tile/64/000', 'tile/0/00', 'tile/0/0000', 'tile/0/x000/001', 'tile/0/001/002', 'tile/0/000.p/0', 'tile/0/000.p/256', 'tile/0/000.p/05', 'tile/0/000/', 'tile/-1/000', 'tile/entries/000.p', 'tile/0/x1000/000']) {
      expect(() => parseTilePath(bad)).toThrow(expect.objectContaining({ code: 'tile_path_invalid' }));
    }
  });

  it('names for each size 1..600 exactly the tiles and bundles of "Partial Tiles"', () => {
    for (let s = 1; s <= MAX; s++) expect(tilesBetween(0, s).map(tilePath).sort()).toEqual(refTilesOf(s).map((t) => t.path).sort());
    // The spec's examples: 70,000 leaves; 256 leaves.
    expect(tilesBetween(0, 70_000).filter((t) => t.level !== 'entries').map(tilePath).slice(-5)).toEqual(['tile/0/272', 'tile/0/273.p/112', 'tile/1/000', 'tile/1/001.p/17', 'tile/2/000.p/1']);
    expect(tilesBetween(0, 256).map(tilePath)).toEqual(['tile/0/000', 'tile/1/000.p/1', 'tile/entries/000']);
  });
});

describe('tlog-tiles bytes for sizes 1..600', () => {
  it('every tile equals the spec formula over the leaves, every bundle decodes to the leaves and hashes to its level-0 tile', () => {
    for (let s = 1; s <= MAX; s++) {
      const d = leaves.slice(0, s);
      for (const t of refTilesOf(s)) {
        const mine = ours(parseTilePath(t.path));
        if (t.level < 0) {
          const got = refDecodeBundle(mine);
          const want = d.slice(t.n * 256, t.n * 256 + t.w);
          expect(got.length === want.length && got.every((e, i) => e.equals(want[i]))).toBe(true);
          expect(refBundleMismatches(mine, refTileBytes(d, 0, t.n, t.w))).toEqual([]);
        } else expect(mine.equals(refTileBytes(d, t.level, t.n, t.w))).toBe(true);
      }
    }
  });

  it('a partial tile grows into the full one without any byte of its prefix changing', () => {
    const seen = new Map<string, Buffer>();
    let checked = 0;
    for (let s = 1; s <= MAX; s++) {
      for (const t of refTilesOf(s)) {
        const key = `${t.level}/${t.n}`;
        const bytes = ours(parseTilePath(t.path));
        const before = seen.get(key);
        if (before) {
          expect(bytes.length).toBeGreaterThanOrEqual(before.length);
          expect(bytes.subarray(0, before.length).equals(before)).toBe(true);
          checked++;
        }
        seen.set(key, bytes);
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('tilesBetween(old, new) names every tile a copy written at each checkpoint lacks', () => {
    const sizes = [1, 2, 7, 255, 256, 257, 300, 511, 512, 513, 599, 600];
    const written = new Map<string, Buffer>();
    let prev = 0;
    for (const s of sizes) {
      for (const t of tilesBetween(prev, s)) {
        const p = tilePath(t);
        if (written.has(p) && t.width === 256) throw new Error(`${p} written twice`);
        written.set(p, ours(t));
      }
      for (const t of refTilesOf(s)) expect(written.get(t.path)?.equals(t.level < 0 ? ours(parseTilePath(t.path)) : refTileBytes(leaves.slice(0, s), t.level, t.n, t.w))).toBe(true);
      prev = s;
    }
  });

  it('entry bundles: big-endian uint16 lengths; an entry over 65,535 bytes is refused', () => {
    const b = encodeBundle([Buffer.alloc(0), Buffer.from('ab'), Buffer.alloc(65_535, 1)]);
    expect(b.subarray(0, 6)).toEqual(Buffer.from([0, 0, 0, 2, 0x61, 0x62]));
    expect(b.readUInt16BE(6)).toBe(65_535);
    expect(decodeBundle(b).map((e) => e.length)).toEqual([0, 2, 65_535]);
    expect(() => encodeBundle([Buffer.alloc(65_536)])).toThrow(expect.objectContaining({ code: 'bundle_malformed' }));
    expect(() => decodeBundle(Buffer.from([0, 5, 1]))).toThrow(expect.objectContaining({ code: 'bundle_malformed' }));
  });
});

describe('TileHashReader', () => {
  it('gives the reference inclusion and consistency proofs for sizes 1..600', async () => {
    for (let s = 1; s <= MAX; s += s < 20 ? 1 : 7) {
      const d = leaves.slice(0, s);
      const r = new TileHashReader(s, MTH(d), fetcher(s));
      expect((await r.verifiedRoot()).equals(MTH(d))).toBe(true);
      for (const i of new Set([0, s - 1, Math.floor(s / 2)])) {
        expect((await inclusionProof(i, s, r)).map((h) => h.toString('hex'))).toEqual(PATH(i, d).map((h) => h.toString('hex')));
        expect((await r.leafHashAt(i)).equals(refLeaf(d[i]))).toBe(true);
      }
      const m = Math.max(1, Math.floor(s / 3));
      if (m < s) expect((await consistencyProof(m, s, r)).map((h) => h.toString('hex'))).toEqual(PROOF(m, d).map((h) => h.toString('hex')));
    }
  });

  it('refuses tiles that are not the checkpoint tree: a changed full tile, a changed partial tile, a short tile', async () => {
    const s = 600;
    const root = MTH(leaves.slice(0, s));
    const flipAt = (path: string, at: number) => (p: string, b: Buffer) => {
      if (p === path) b[at] ^= 1;
      return b;
    };
    const code = async (r: TileHashReader, i: number): Promise<string> => {
      try {
        await inclusionProof(i, s, r);
        return 'ok';
      } catch (e) {
        return isTlogError(e) ? e.code : String(e);
      }
    };
    expect(await code(new TileHashReader(s, root, fetcher(s)), 5)).toBe('ok');
    expect(await code(new TileHashReader(s, root, fetcher(s, flipAt('tile/0/000', 5 * HASH_SIZE))), 5)).toBe('root_mismatch');
    expect(await code(new TileHashReader(s, root, fetcher(s, flipAt('tile/0/002.p/88', 0))), 5)).toBe('root_mismatch');
    expect(await code(new TileHashReader(s, root, fetcher(s, flipAt('tile/1/000.p/2', 40))), 5)).toBe('root_mismatch');
    expect(await code(new TileHashReader(s, root, fetcher(s, (p, b) => (p === 'tile/0/001' ? b.subarray(1) : b))), 300)).toBe('tile_malformed');
    const other = Buffer.from(root);
    other[0] ^= 1;
    expect(await code(new TileHashReader(s, other, fetcher(s)), 5)).toBe('root_mismatch');
  });
});
