/**
 * RFC 6962 / RFC 9162 section 2.1 Merkle tree: hashing, stored nodes,
 * incremental integration, proofs built from stored nodes, and proof
 * verification.
 *
 * Stored nodes. A node is addressed by `(level, index)`: the node at level L
 * and index i is the root of the COMPLETE subtree over leaves
 * [i * 2^L, (i + 1) * 2^L). Level 0 holds the leaf hashes. A log of size n
 * stores exactly the complete subtrees that fit in [0, n): floor(n / 2^L)
 * nodes at level L, 2n - popcount(n) in all. Each is written once, when its
 * last leaf is appended, and never changes; incomplete subtrees (on the
 * right edge of a tree whose size is not a power of two) are never stored:
 * their hash is folded from at most log2(n) stored nodes when needed.
 *
 * Every proof or tree hash reads O(log n) stored nodes. The read is split in
 * two steps so a database can fetch them in one query: a *plan* lists the
 * `(level, index)` it needs (`*Plan` functions), then a pure function turns
 * the fetched hashes into the result ({@link assembleHashes}). The
 * convenience functions taking a {@link HashReader} do both.
 *
 * Sizes and indexes are JavaScript numbers, non-negative safe integers
 * (< 2^53); anything else is refused with a {@link TlogError}.
 *
 * Over 300 lines on purpose: one file per RFC 9162 section 2.1, as Go's
 * golang.org/x/mod/sumdb/tlog keeps tlog.go, so the tree arithmetic, the
 * plans, the integrator and the proof checks that must agree with it are
 * read side by side (its banners mark the parts).
 */
import { hash } from 'node:crypto';
import { TlogError } from './errors';

/** Bytes in a SHA-256 hash. */
export const HASH_SIZE = 32;

/** MTH({}) = SHA-256 of the empty string: the root of the empty tree (RFC 6962 section 2.1). */
export const EMPTY_ROOT: Buffer = hash('sha256', Buffer.alloc(0), 'buffer');

/** Growable scratch for leaf inputs 0x00 || leaf, and one for node inputs 0x01 || left || right. */
let leafScratch = Buffer.alloc(1 + 1024);
const nodeScratch = Buffer.alloc(1 + 2 * HASH_SIZE);
nodeScratch[0] = 0x01;

/** RFC 6962 leaf hash: SHA-256(0x00 || leaf). `leaf` is the raw entry bytes. */
export function leafHash(leaf: Uint8Array): Buffer {
  if (leaf.length + 1 > leafScratch.length) leafScratch = Buffer.alloc(Math.max(leaf.length + 1, 2 * leafScratch.length));
  leafScratch[0] = 0x00;
  leafScratch.set(leaf, 1);
  return hash('sha256', leafScratch.subarray(0, leaf.length + 1), 'buffer');
}

/** RFC 6962 interior node hash: SHA-256(0x01 || left || right). Both are 32-byte hashes (not checked here). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== HASH_SIZE || right.length !== HASH_SIZE) {
    return hash('sha256', Buffer.concat([nodeScratch.subarray(0, 1), left, right]), 'buffer');
  }
  nodeScratch.set(left, 1);
  nodeScratch.set(right, 1 + HASH_SIZE);
  return hash('sha256', nodeScratch, 'buffer');
}

// ---------------------------------------------------------------------------
// Integer helpers on non-negative safe integers (bitwise operators in JS are 32-bit).

const TWO32 = 2 ** 32;

/** Number of bits needed to write x (0 for 0). */
function bitLen(x: number): number {
  return x >= TWO32 ? 32 + bitLen(Math.floor(x / TWO32)) : 32 - Math.clz32(x);
}

function popcount32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Number of set bits of x. */
export function popcount(x: number): number {
  return popcount32(x >>> 0) + popcount32(Math.floor(x / TWO32) >>> 0);
}

/** Bit i of x (0 or 1). */
function bitAt(x: number, i: number): number {
  return Math.floor(x / 2 ** i) % 2;
}

/** a XOR b. */
function xor(a: number, b: number): number {
  return (((a >>> 0) ^ (b >>> 0)) >>> 0) + (((Math.floor(a / TWO32) ^ Math.floor(b / TWO32)) >>> 0) * TWO32);
}

/** Number of trailing zero bits of x > 0. */
function trailingZeros(x: number): number {
  let n = 0;
  while (x % 2 === 0) {
    x /= 2;
    n++;
  }
  return n;
}

/** The largest power of two strictly below n (n >= 2): RFC 6962's k with k < n <= 2k. */
function splitPoint(n: number): number {
  return 2 ** (bitLen(n - 1) - 1);
}

function isCount(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function checkSize(size: unknown, what = 'size'): number {
  if (!isCount(size)) throw new TlogError('size_invalid', `${what} must be a non-negative safe integer`, { [what]: String(size) });
  return size;
}

/** Stored nodes a tree of `size` leaves holds: 2 * size - popcount(size). */
export function storedNodeCount(size: number): number {
  checkSize(size);
  return 2 * size - popcount(size);
}

// ---------------------------------------------------------------------------
// Stored nodes and reads.

/** The address of a stored node: the complete subtree over leaves [index * 2^level, (index + 1) * 2^level). */
export interface NodeId {
  readonly level: number;
  readonly index: number;
}

/** A stored node with its hash. */
export interface StoredNode extends NodeId {
  readonly hash: Buffer;
}

/**
 * Reads stored node hashes: `readHashes(ids)` returns the hashes of `ids`,
 * in the same order, each 32 bytes. The service backs it with one SQL query
 * (`WHERE (level, idx) IN (...)`); tests back it with memory.
 */
export interface HashReader {
  readHashes(ids: readonly NodeId[]): Promise<readonly Uint8Array[]> | readonly Uint8Array[];
}

/** A {@link HashReader} that answers synchronously (memory, better-sqlite3). */
export interface SyncHashReader {
  readHashes(ids: readonly NodeId[]): readonly Uint8Array[];
}

/**
 * What to read and how to combine it: `nodes` are the distinct stored nodes
 * to fetch; each entry of `parts` lists positions in `nodes` whose hashes are
 * folded from the right (h0 . (h1 . (... . hk))) into one output hash. A
 * proof plan has one part per proof hash, in proof order; a tree-hash plan has
 * one part.
 */
export interface HashPlan {
  readonly nodes: readonly NodeId[];
  readonly parts: readonly (readonly number[])[];
}

/**
 * The complete subtrees covering leaves [lo, hi), largest first, when lo is a
 * multiple of the largest power of two <= hi - lo (true for every range an
 * RFC 6962 recursion reaches). Their right fold is MTH(D[lo:hi]).
 */
function rangeNodes(lo: number, hi: number, out: NodeId[]): void {
  while (lo < hi) {
    let width = 1;
    let level = 0;
    while (lo % (width * 2) === 0 && width * 2 <= hi - lo) {
      width *= 2;
      level++;
    }
    out.push({ level, index: lo / width });
    lo += width;
  }
}

/** Build a plan from leaf ranges (one output hash per range). */
function planFromRanges(ranges: readonly (readonly [number, number])[]): HashPlan {
  const nodes: NodeId[] = [];
  const seen = new Map<string, number>();
  const parts = ranges.map(([lo, hi]) => {
    const ids: NodeId[] = [];
    rangeNodes(lo, hi, ids);
    return ids.map((id) => {
      const key = `${id.level}/${id.index}`;
      let at = seen.get(key);
      if (at === undefined) {
        at = nodes.length;
        seen.set(key, at);
        nodes.push(id);
      }
      return at;
    });
  });
  return { nodes, parts };
}

/**
 * The stored nodes whose right fold is the root of a tree of `size` leaves:
 * the complete subtrees on its right edge, largest first (popcount(size)
 * nodes; none for size 0). The same nodes are an integrator's state
 * ({@link TreeIntegrator.resume}).
 */
export function rightEdge(size: number): NodeId[] {
  checkSize(size);
  const out: NodeId[] = [];
  rangeNodes(0, size, out);
  return out;
}

/** Plan for MTH of the first `size` leaves (RFC 6962 section 2.1). Size 0 has no parts: the root is {@link EMPTY_ROOT}. */
export function treeHashPlan(size: number): HashPlan {
  checkSize(size);
  return size === 0 ? { nodes: [], parts: [] } : planFromRanges([[0, size]]);
}

/**
 * Plan for PATH(index, D[0:size]) (RFC 6962 section 2.1.1; RFC 9162 section
 * 2.1.3.1): hashes from the leaf's sibling up to the root's child.
 * Requires 0 <= index < size. Reads at most 2 * log2(size) nodes.
 */
export function inclusionProofPlan(index: number, size: number): HashPlan {
  checkSize(size);
  if (!isCount(index) || index >= size) throw new TlogError('index_out_of_range', `index ${index} is not below size ${size}`, { index: String(index), size });
  const ranges: [number, number][] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index - lo < k) {
      ranges.push([lo + k, hi]);
      hi = lo + k;
    } else {
      ranges.push([lo, lo + k]);
      lo += k;
    }
  }
  return planFromRanges(ranges.reverse());
}

/**
 * Plan for PROOF(m, D[0:n]) (RFC 6962 section 2.1.2; RFC 9162 section
 * 2.1.4.1), the consistency proof from size m to size n. Requires
 * 0 < m <= n (m = n gives the empty proof). Reads O(log n) nodes.
 */
export function consistencyProofPlan(m: number, n: number): HashPlan {
  checkSize(m, 'size1');
  checkSize(n, 'size2');
  if (m > n) throw new TlogError('sizes_out_of_order', `size1 ${m} > size2 ${n}`, { size1: m, size2: n });
  if (m === 0) throw new TlogError('consistency_from_empty_tree', 'no consistency proof from the empty tree (it is consistent with every tree)', { size1: m, size2: n });
  const ranges: [number, number][] = [];
  let lo = 0;
  let hi = n;
  let rel = m; // m counted from lo
  let complete = true; // SUBPROOF's b: the subtree is the whole old tree's root, already known
  if (m < n) {
    for (;;) {
      const width = hi - lo;
      if (rel === width) {
        if (!complete) ranges.push([lo, hi]);
        break;
      }
      const k = splitPoint(width);
      if (rel <= k) {
        ranges.push([lo + k, hi]);
        hi = lo + k;
      } else {
        ranges.push([lo, lo + k]);
        lo += k;
        rel -= k;
        complete = false;
      }
    }
  }
  return planFromRanges(ranges.reverse());
}

/**
 * Combine the hashes read for `plan.nodes` (same order, 32 bytes each) into
 * one hash per part. Throws `reader_invalid` when the count or a length is
 * wrong (a broken reader, not a proof failure).
 */
export function assembleHashes(plan: HashPlan, hashes: readonly Uint8Array[]): Buffer[] {
  if (!Array.isArray(hashes) || hashes.length !== plan.nodes.length) {
    throw new TlogError('reader_invalid', `reader returned ${Array.isArray(hashes) ? hashes.length : typeof hashes} hashes for ${plan.nodes.length} nodes`, {});
  }
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i];
    if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) {
      const id = plan.nodes[i];
      throw new TlogError('reader_invalid', `reader returned a bad hash for node ${id.level}/${id.index}`, { level: id.level, index: id.index });
    }
  }
  return plan.parts.map((part) => {
    let acc: Buffer = Buffer.from(hashes[part[part.length - 1]]);
    for (let j = part.length - 2; j >= 0; j--) acc = nodeHash(hashes[part[j]], acc);
    return acc;
  });
}

function rootOf(size: number, hashes: readonly Uint8Array[], plan: HashPlan): Buffer {
  return size === 0 ? Buffer.from(EMPTY_ROOT) : assembleHashes(plan, hashes)[0];
}

function syncRead(reader: SyncHashReader, ids: readonly NodeId[]): readonly Uint8Array[] {
  if (ids.length === 0) return [];
  const r = reader.readHashes(ids) as unknown;
  if (r instanceof Promise) throw new TlogError('reader_invalid', 'a SyncHashReader returned a Promise', {});
  return r as readonly Uint8Array[];
}

async function asyncRead(reader: HashReader, ids: readonly NodeId[]): Promise<readonly Uint8Array[]> {
  return ids.length === 0 ? [] : await reader.readHashes(ids);
}

/** MTH of the first `size` leaves from stored nodes (size <= the stored size). One read of popcount(size) nodes. */
export async function treeHash(size: number, reader: HashReader): Promise<Buffer> {
  const plan = treeHashPlan(size);
  return rootOf(size, await asyncRead(reader, plan.nodes), plan);
}

/** Synchronous {@link treeHash}. */
export function treeHashSync(size: number, reader: SyncHashReader): Buffer {
  const plan = treeHashPlan(size);
  return rootOf(size, syncRead(reader, plan.nodes), plan);
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves (see {@link inclusionProofPlan}). */
export async function inclusionProof(index: number, size: number, reader: HashReader): Promise<Buffer[]> {
  const plan = inclusionProofPlan(index, size);
  return assembleHashes(plan, await asyncRead(reader, plan.nodes));
}

/** Synchronous {@link inclusionProof}. */
export function inclusionProofSync(index: number, size: number, reader: SyncHashReader): Buffer[] {
  const plan = inclusionProofPlan(index, size);
  return assembleHashes(plan, syncRead(reader, plan.nodes));
}

/** The consistency proof from size m to size n (see {@link consistencyProofPlan}). */
export async function consistencyProof(m: number, n: number, reader: HashReader): Promise<Buffer[]> {
  const plan = consistencyProofPlan(m, n);
  return assembleHashes(plan, await asyncRead(reader, plan.nodes));
}

/** Synchronous {@link consistencyProof}. */
export function consistencyProofSync(m: number, n: number, reader: SyncHashReader): Buffer[] {
  const plan = consistencyProofPlan(m, n);
  return assembleHashes(plan, syncRead(reader, plan.nodes));
}

// ---------------------------------------------------------------------------
// Integration.

/**
 * Nodes to store after an append, column-wise (a few allocations per batch,
 * not per node, which keeps integration near the SHA-256 floor): node i is
 * `(levels[i], indexes[i])` with hash {@link hash}(i), or bytes
 * `[32 * i, 32 * i + 32)` of {@link hashes}. Nodes come in the order they
 * were completed (a leaf, then the subtrees it completes, bottom up).
 */
export class NodeBatch {
  private slab: Buffer | null = null;

  constructor(
    readonly count: number,
    readonly levels: Uint8Array,
    readonly indexes: Float64Array,
    /** The hashes as 32-character latin1 strings (one byte per character). */
    private readonly latin1: readonly string[],
  ) {}

  /** All hashes, count * 32 bytes, in node order (built once, on first use). */
  get hashes(): Buffer {
    if (this.slab === null) this.slab = Buffer.from(this.latin1.join(''), 'latin1');
    return this.slab;
  }

  /** The hash of node i (a view into {@link hashes}; copy it to keep it beyond the batch). */
  hash(i: number): Buffer {
    return this.hashes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE);
  }

  /** Every node as an object (convenient, slower for large batches). */
  toArray(): StoredNode[] {
    const out: StoredNode[] = new Array(this.count);
    for (let i = 0; i < this.count; i++) out[i] = { level: this.levels[i], index: this.indexes[i], hash: this.hash(i) };
    return out;
  }
}

/** What an append produced: the new size and root, and the nodes to store (all complete subtrees finished by it). */
export interface IntegrationResult {
  readonly size: number;
  readonly root: Buffer;
  readonly nodes: NodeBatch;
}

function latin1Of(h: Uint8Array, what: string, i: number): string {
  if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) {
    throw new TlogError('hash_wrong_length', `${what} ${i} is not a 32-byte hash`, { what, position: i, actual: h instanceof Uint8Array ? h.length : typeof h });
  }
  return Buffer.isBuffer(h) ? h.toString('latin1') : Buffer.from(h.buffer, h.byteOffset, h.length).toString('latin1');
}

/**
 * Incremental RFC 6962 tree builder ("compact range"). It keeps the hashes
 * of the complete subtrees on the right edge (popcount(size) of them) in
 * memory, so appending needs no reads: each leaf costs its leaf node plus on
 * average one interior node hash. Keep one instance per log across appends;
 * after a restart (or when the stored size moved on elsewhere) resume it from
 * the stored right edge: `TreeIntegrator.resume(size, hashesOf(rightEdge(size)))`.
 *
 * Not safe for concurrent appends: the caller serializes them (one writer per log).
 */
export class TreeIntegrator {
  private n: number;
  /** Right-edge subtree hashes, largest first, as 32-char latin1 strings (cheap to write into the hash input). */
  private readonly edge: string[];
  private readonly input = Buffer.alloc(1 + 2 * HASH_SIZE);
  private leafInputs: Buffer = Buffer.alloc(1 + 64);

  private constructor(size: number, edge: string[]) {
    this.n = size;
    this.edge = edge;
    this.input[0] = 0x01;
  }

  /** A builder for the empty tree. */
  static empty(): TreeIntegrator {
    return new TreeIntegrator(0, []);
  }

  /**
   * A builder at `size` from the hashes of {@link rightEdge}(size), in that
   * order (32 bytes each). Throws `reader_invalid` on a wrong count or length.
   */
  static resume(size: number, edgeHashes: readonly Uint8Array[]): TreeIntegrator {
    const ids = rightEdge(size);
    if (!Array.isArray(edgeHashes) || edgeHashes.length !== ids.length) {
      throw new TlogError('reader_invalid', `a tree of size ${size} has ${ids.length} right-edge nodes, got ${Array.isArray(edgeHashes) ? edgeHashes.length : typeof edgeHashes}`, { size });
    }
    const edge = edgeHashes.map((h, i) => {
      if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) throw new TlogError('reader_invalid', `right-edge hash ${i} is not 32 bytes`, { size, position: i });
      return Buffer.from(h.buffer, h.byteOffset, h.length).toString('latin1');
    });
    return new TreeIntegrator(size, edge);
  }

  /** {@link resume} reading the right edge through `reader` (one read). */
  static async open(size: number, reader: HashReader): Promise<TreeIntegrator> {
    return TreeIntegrator.resume(size, await asyncRead(reader, rightEdge(size)));
  }

  /** The number of leaves integrated. */
  get size(): number {
    return this.n;
  }

  /** The current root (MTH of all leaves; {@link EMPTY_ROOT} for none). */
  root(): Buffer {
    const e = this.edge;
    if (e.length === 0) return Buffer.from(EMPTY_ROOT);
    let acc = e[e.length - 1];
    for (let j = e.length - 2; j >= 0; j--) {
      this.input.write(e[j], 1, HASH_SIZE, 'latin1');
      this.input.write(acc, 1 + HASH_SIZE, HASH_SIZE, 'latin1');
      acc = hash('sha256', this.input, 'binary');
    }
    return Buffer.from(acc, 'latin1');
  }

  /** The right-edge hashes (largest subtree first), matching {@link rightEdge}(size). */
  edgeHashes(): Buffer[] {
    return this.edge.map((s) => Buffer.from(s, 'latin1'));
  }

  /**
   * Append leaves given by their leaf hashes (32 bytes each, as
   * {@link leafHash} computes them). Returns the nodes to store and the new
   * root. Validates every hash before changing any state.
   */
  appendLeafHashes(leafHashes: readonly Uint8Array[]): IntegrationResult {
    const hs = leafHashes.map((h, i) => latin1Of(h, 'leaf_hash', i));
    return this.run(hs.length, (i) => hs[i]);
  }

  /** Append raw leaves (each hashed as SHA-256(0x00 || leaf)). */
  appendLeaves(leaves: readonly Uint8Array[]): IntegrationResult {
    for (let i = 0; i < leaves.length; i++) {
      if (!(leaves[i] instanceof Uint8Array)) throw new TlogError('proof_malformed', `leaf ${i} is not bytes`, { position: i });
    }
    let buf = this.leafInputs;
    let view: Buffer = buf;
    let viewLen = -1;
    return this.run(leaves.length, (i) => {
      const leaf = leaves[i];
      if (leaf.length !== viewLen) {
        if (leaf.length + 1 > buf.length) {
          buf = this.leafInputs = Buffer.alloc(Math.max(leaf.length + 1, 2 * buf.length));
        }
        viewLen = leaf.length;
        view = buf.subarray(0, viewLen + 1);
      }
      buf[0] = 0x00;
      buf.set(leaf, 1);
      return hash('sha256', view, 'binary');
    });
  }

  private run(count: number, leafAt: (i: number) => string): IntegrationResult {
    const start = this.n;
    const end = start + count;
    if (!Number.isSafeInteger(end)) throw new TlogError('size_invalid', 'tree size would exceed 2^53 - 1', { size: start, append: count });
    const total = 2 * end - popcount(end) - (2 * start - popcount(start));
    const levels = new Uint8Array(total);
    const indexes = new Float64Array(total);
    const out: string[] = new Array(total);
    const edge = this.edge;
    const input = this.input;
    let k = 0;
    for (let i = 0; i < count; i++) {
      let h = leafAt(i);
      let idx = start + i;
      let level = 0;
      levels[k] = 0;
      indexes[k] = idx;
      out[k] = h;
      k++;
      while (idx % 2 === 1) {
        input.write(edge.pop() as string, 1, HASH_SIZE, 'latin1');
        input.write(h, 1 + HASH_SIZE, HASH_SIZE, 'latin1');
        h = hash('sha256', input, 'binary');
        idx = (idx - 1) / 2;
        level++;
        levels[k] = level;
        indexes[k] = idx;
        out[k] = h;
        k++;
      }
      edge.push(h);
    }
    this.n = end;
    return { size: end, root: this.root(), nodes: new NodeBatch(total, levels, indexes, out) };
  }
}

/**
 * Pure one-shot integration: from a tree of `oldSize` leaves whose right
 * edge ({@link rightEdge}(oldSize)) has `edgeHashes`, append `leafHashes`.
 * Prefer keeping a {@link TreeIntegrator} across calls (no reads at all).
 */
export function integrate(oldSize: number, edgeHashes: readonly Uint8Array[], leafHashes: readonly Uint8Array[]): IntegrationResult {
  return TreeIntegrator.resume(oldSize, edgeHashes).appendLeafHashes(leafHashes);
}

// ---------------------------------------------------------------------------
// Verification (RFC 9162 sections 2.1.3.2 and 2.1.4.2). Pure; every failure is a TlogError.

const b64 = (h: Uint8Array): string => Buffer.from(h.buffer, h.byteOffset, h.length).toString('base64');

function checkHash(h: unknown, what: string, position?: number): Uint8Array {
  if (!(h instanceof Uint8Array)) throw new TlogError('proof_malformed', `${what} is not bytes`, position === undefined ? { what } : { what, position });
  if (h.length !== HASH_SIZE) {
    throw new TlogError('hash_wrong_length', `${what} has ${h.length} bytes, not ${HASH_SIZE}`, { what, ...(position === undefined ? {} : { position }), expected: HASH_SIZE, actual: h.length });
  }
  return h;
}

function checkProof(proof: unknown): readonly Uint8Array[] {
  if (!Array.isArray(proof)) throw new TlogError('proof_malformed', 'proof is not a list of hashes', {});
  proof.forEach((p, i) => checkHash(p, 'proof', i));
  return proof as Uint8Array[];
}

function equalBytes(a: unknown, b: Uint8Array): boolean {
  return a instanceof Uint8Array && a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}

function mismatch(expected: unknown, calculated: Uint8Array, which: string): TlogError {
  return new TlogError('root_mismatch', `calculated ${which} root does not match the expected root`, {
    which,
    expected: expected instanceof Uint8Array ? b64(expected) : String(expected),
    calculated: b64(calculated),
  });
}

/** Expected proof length split: `inner` levels below where the paths to `index` and `size - 1` diverge, `border` above. */
function decompose(index: number, size: number): { inner: number; border: number } {
  const inner = bitLen(xor(index, size - 1));
  return { inner, border: popcount(Math.floor(index / 2 ** inner)) };
}

/**
 * The root implied by an inclusion proof for leaf `index` (with leaf hash
 * `leafHash`) in a tree of `size` leaves. Requires 0 <= index < size, a
 * 32-byte leaf hash and 32-byte proof hashes, and exactly the RFC's proof
 * length. Throws a TlogError: size_invalid, index_out_of_range,
 * proof_malformed, hash_wrong_length, proof_wrong_length.
 */
export function rootFromInclusionProof(index: number, size: number, leafHash: Uint8Array, proof: readonly Uint8Array[]): Buffer {
  checkSize(size);
  if (!isCount(index) || index >= size) throw new TlogError('index_out_of_range', `index ${String(index)} is not below size ${size}`, { index: String(index), size });
  const leaf = checkHash(leafHash, 'leaf_hash');
  const p = checkProof(proof);
  const { inner, border } = decompose(index, size);
  if (p.length !== inner + border) {
    throw new TlogError('proof_wrong_length', `inclusion proof has ${p.length} hashes, expected ${inner + border}`, { expected: inner + border, actual: p.length });
  }
  let acc: Buffer = Buffer.from(leaf);
  for (let i = 0; i < inner; i++) acc = bitAt(index, i) === 0 ? nodeHash(acc, p[i]) : nodeHash(p[i], acc);
  for (let i = inner; i < p.length; i++) acc = nodeHash(p[i], acc);
  return acc;
}

/**
 * Verify an inclusion proof (RFC 9162 section 2.1.3.2): returns normally
 * when `proof` proves `leafHash` at `index` in the tree of `size` leaves with
 * root `root`; throws a TlogError otherwise (the codes of
 * {@link rootFromInclusionProof}, or root_mismatch with `expected` and
 * `calculated` as base64).
 */
export function verifyInclusion(index: number, size: number, leafHash: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): void {
  const calculated = rootFromInclusionProof(index, size, leafHash, proof);
  if (!equalBytes(root, calculated)) throw mismatch(root, calculated, 'tree');
}

/**
 * The size2 root implied by a consistency proof from (size1, root1). Checks
 * root1 on the way (root_mismatch with which = 'old'). Requires
 * size1 <= size2; size1 = size2 needs an empty proof and returns root1
 * (size 0 only with the empty-tree root); size1 = 0 < size2 is refused
 * (consistency_from_empty_tree: the empty tree is consistent with every
 * tree and has no proof, so a caller such as a witness must handle it before).
 * Other codes: size_invalid, sizes_out_of_order, proof_malformed,
 * hash_wrong_length, proof_wrong_length.
 */
export function rootFromConsistencyProof(size1: number, size2: number, proof: readonly Uint8Array[], root1: Uint8Array): Buffer {
  checkSize(size1, 'size1');
  checkSize(size2, 'size2');
  if (size1 > size2) throw new TlogError('sizes_out_of_order', `size1 ${size1} > size2 ${size2}`, { size1, size2 });
  const p = checkProof(proof);
  if (size1 === size2) {
    if (p.length !== 0) throw new TlogError('proof_wrong_length', `sizes are equal, but the proof has ${p.length} hashes`, { expected: 0, actual: p.length });
    if (!(root1 instanceof Uint8Array)) throw new TlogError('proof_malformed', 'root1 is not bytes', { what: 'root1' });
    if (size1 === 0 && !equalBytes(root1, EMPTY_ROOT)) throw mismatch(root1, EMPTY_ROOT, 'old');
    return Buffer.from(root1);
  }
  if (size1 === 0) throw new TlogError('consistency_from_empty_tree', 'no consistency proof from the empty tree', { size1, size2 });
  if (p.length === 0) throw new TlogError('proof_wrong_length', 'consistency proof is empty', { actual: 0 });
  const d = decompose(size1 - 1, size2);
  const shift = trailingZeros(size1);
  const inner = d.inner - shift;
  // When size1 is a power of two the old root is itself the first node of the path; otherwise the proof starts with it.
  const seedFromRoot = size1 === 2 ** shift;
  const start = seedFromRoot ? 0 : 1;
  if (p.length !== start + inner + d.border) {
    throw new TlogError('proof_wrong_length', `consistency proof has ${p.length} hashes, expected ${start + inner + d.border}`, { expected: start + inner + d.border, actual: p.length });
  }
  const seed = seedFromRoot ? checkHash(root1, 'root1') : p[0];
  const path = p.slice(start);
  const mask = Math.floor((size1 - 1) / 2 ** shift);
  let old: Buffer = Buffer.from(seed);
  let cur: Buffer = Buffer.from(seed);
  for (let i = 0; i < inner; i++) {
    if (bitAt(mask, i) === 1) {
      old = nodeHash(path[i], old);
      cur = nodeHash(path[i], cur);
    } else {
      cur = nodeHash(cur, path[i]);
    }
  }
  for (let i = inner; i < path.length; i++) {
    old = nodeHash(path[i], old);
    cur = nodeHash(path[i], cur);
  }
  if (!equalBytes(root1, old)) throw mismatch(root1, old, 'old');
  return cur;
}

/**
 * Verify a consistency proof (RFC 9162 section 2.1.4.2) from (size1, root1)
 * to (size2, root2). Returns normally or throws a TlogError (the codes of
 * {@link rootFromConsistencyProof}, or root_mismatch with which = 'new').
 */
export function verifyConsistency(size1: number, size2: number, proof: readonly Uint8Array[], root1: Uint8Array, root2: Uint8Array): void {
  const calculated = rootFromConsistencyProof(size1, size2, proof, root1);
  if (!equalBytes(root2, calculated)) throw mismatch(root2, calculated, 'new');
}
