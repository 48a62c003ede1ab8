/**
 * The stored-node Merkle tree against a deliberately simple reference: MTH,
 * PATH and PROOF/SUBPROOF written as the recursive definitions of RFC 6962
 * section 2.1, over the whole leaf list. No shared code with src/.
 */
import {
  assembleHashes,
  consistencyProof,
  consistencyProofPlan,
  consistencyProofSync,
  EMPTY_ROOT,
  inclusionProof,
  inclusionProofPlan,
  inclusionProofSync,
  integrate,
  isTlogError,
  leafHash,
  NodeId,
  rightEdge,
  rootFromInclusionProof,
  storedNodeCount,
  SyncHashReader,
  treeHash,
  treeHashSync,
  TreeIntegrator,
  verifyConsistency,
  verifyInclusion,
} from '../../../src/core/tlog';
import { codeOf } from './helpers';

import { MTH, PATH, PROOF, refLeaf } from '../../reference/rfc6962';

const hex = (hs: Buffer[]): string => hs.map((h) => h.toString('hex')).join(',');

// ---- a store of nodes in memory, counting reads ----
class MemStore implements SyncHashReader {
  readonly nodes = new Map<string, Buffer>();
  reads = 0;
  lastRead = 0;
  put(level: number, index: number, hash: Buffer): void {
    const key = `${level}/${index}`;
    if (this.nodes.has(key)) throw new Error(`node ${key} stored twice`);
    this.nodes.set(key, Buffer.from(hash));
  }
  readHashes(ids: readonly NodeId[]): Buffer[] {
    this.reads++;
    this.lastRead = ids.length;
    return ids.map((id) => {
      const h = this.nodes.get(`${id.level}/${id.index}`);
      if (!h) throw new Error(`node ${id.level}/${id.index} not stored`);
      return h;
    });
  }
}

const data = (i: number): Buffer => Buffer.from(`entry ${i}`);

function build(n: number): { store: MemStore; leaves: Buffer[]; roots: Buffer[] } {
  const store = new MemStore();
  const leaves: Buffer[] = [];
  const roots: Buffer[] = [EMPTY_ROOT];
  const t = TreeIntegrator.empty();
  for (let i = 0; i < n; i++) {
    leaves.push(data(i));
    const r = t.appendLeaves([data(i)]);
    for (const node of r.nodes.toArray()) store.put(node.level, node.index, node.hash);
    roots.push(r.root);
  }
  return { store, leaves, roots };
}

const MAX = 70;
const big = build(MAX);


describe('hashing', () => {
  it('leafHash and the empty root are RFC 6962', () => {
    expect(leafHash(Buffer.from('abc'))).toEqual(refLeaf(Buffer.from('abc')));
    expect(leafHash(Buffer.alloc(5000, 7))).toEqual(refLeaf(Buffer.alloc(5000, 7)));
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('stored nodes against the RFC 6962 reference, every size 1..70', () => {
  it('each root equals MTH, from the integrator and from stored nodes', () => {
    for (let n = 0; n <= MAX; n++) {
      const want = MTH(big.leaves.slice(0, n));
      expect(big.roots[n]).toEqual(want);
      big.store.reads = 0;
      expect(treeHashSync(n, big.store)).toEqual(want);
      expect(big.store.reads).toBe(n === 0 ? 0 : 1);
      if (n > 0) expect(big.store.lastRead).toBe(rightEdge(n).length);
    }
  });

  it('stores exactly 2n - popcount(n) nodes, each once', () => {
    expect(big.store.nodes.size).toBe(2 * MAX - 3); // 70 = 0b1000110
    expect(storedNodeCount(MAX)).toBe(137);
    for (let n = 1; n <= MAX; n++) expect(build(n).store.nodes.size).toBe(2 * n - n.toString(2).replace(/0/g, '').length);
  });

  it('every inclusion proof equals PATH and verifies; reads are O(log n) in one query', () => {
    let proofs = 0;
    const bad: string[] = [];
    for (let n = 1; n <= MAX; n++) {
      const d = big.leaves.slice(0, n);
      const root = MTH(d);
      for (let m = 0; m < n; m++) {
        big.store.reads = 0;
        big.store.lastRead = 0;
        const proof = inclusionProofSync(m, n, big.store);
        if (big.store.reads !== (n === 1 ? 0 : 1)) bad.push(`${m}/${n}: ${big.store.reads} reads`); // a one-leaf tree has the empty proof
        if (big.store.lastRead > 2 * Math.ceil(Math.log2(n)) + 1) bad.push(`${m}/${n}: read ${big.store.lastRead} nodes`);
        if (hex(proof) !== hex(PATH(m, d))) bad.push(`${m}/${n}: proof differs from PATH`);
        verifyInclusion(m, n, refLeaf(d[m]), proof, root);
        proofs++;
      }
    }
    expect(bad).toEqual([]);
    expect(proofs).toBe((MAX * (MAX + 1)) / 2);
  });

  it('every consistency proof (0 < m <= n) equals PROOF and verifies', () => {
    let pairs = 0;
    const bad: string[] = [];
    for (let n = 1; n <= MAX; n++) {
      const d = big.leaves.slice(0, n);
      for (let m = 1; m <= n; m++) {
        big.store.lastRead = 0;
        const proof = consistencyProofSync(m, n, big.store);
        if (big.store.lastRead > 2 * Math.ceil(Math.log2(n)) + 2) bad.push(`${m}->${n}: read ${big.store.lastRead} nodes`);
        if (hex(proof) !== hex(PROOF(m, d))) bad.push(`${m}->${n}: proof differs from PROOF`);
        verifyConsistency(m, n, proof, big.roots[m], big.roots[n]);
        pairs++;
      }
    }
    expect(bad).toEqual([]);
    expect(pairs).toBe((MAX * (MAX + 1)) / 2);
  });

  it('async readers give the same proofs and roots', async () => {
    const asyncReader = { readHashes: async (ids: readonly NodeId[]) => big.store.readHashes(ids) };
    expect(await treeHash(45, asyncReader)).toEqual(big.roots[45]);
    expect(await inclusionProof(17, 45, asyncReader)).toEqual(PATH(17, big.leaves.slice(0, 45)));
    expect(await consistencyProof(13, 45, asyncReader)).toEqual(PROOF(13, big.leaves.slice(0, 45)));
  });
});

describe('larger trees: random pairs', () => {
  const N = 1500;
  const t = build(N);
  let seed = 42;
  const rnd = (k: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % k;
  };
  it('random inclusion and consistency proofs equal the reference', () => {
    for (let i = 0; i < 40; i++) {
      const n = 1 + rnd(N);
      const m = 1 + rnd(n);
      const d = t.leaves.slice(0, n);
      expect(inclusionProofSync(m - 1, n, t.store)).toEqual(PATH(m - 1, d));
      const cp = consistencyProofSync(m, n, t.store);
      expect(cp).toEqual(PROOF(m, d));
      verifyConsistency(m, n, cp, t.roots[m], t.roots[n]);
    }
  });
  it('plans for a huge tree stay small and use only complete subtrees inside the tree', () => {
    const size = 2 ** 52 + 12345;
    const inc = inclusionProofPlan(2 ** 51 + 7, size);
    const con = consistencyProofPlan(2 ** 40 + 3, size);
    for (const plan of [inc, con]) {
      expect(plan.nodes.length).toBeLessThanOrEqual(2 * 53);
      for (const id of plan.nodes) expect((id.index + 1) * 2 ** id.level).toBeLessThanOrEqual(size);
    }
    expect(inc.parts.length).toBeLessThanOrEqual(53);
  });
});

describe('tampered proofs fail with the right code', () => {
  const n = 37;
  const d = big.leaves.slice(0, n);
  const root = big.roots[n];

  it('inclusion: each node flipped, truncated, extended, wrong index, wrong leaf, wrong root, bad sizes', () => {
    for (let m = 0; m < n; m++) {
      const proof = inclusionProofSync(m, n, big.store);
      const lh = refLeaf(d[m]);
      for (let j = 0; j < proof.length; j++) {
        const bad = proof.map((p) => Buffer.from(p));
        bad[j][31] ^= 0x80;
        expect(codeOf(() => verifyInclusion(m, n, lh, bad, root))).toBe('root_mismatch');
      }
      expect(codeOf(() => verifyInclusion(m, n, lh, proof.slice(0, -1), root))).toBe('proof_wrong_length');
      expect(codeOf(() => verifyInclusion(m, n, lh, [...proof, root], root))).toBe('proof_wrong_length');
      expect(codeOf(() => verifyInclusion(m, n, lh, [root, ...proof], root))).toBe('proof_wrong_length');
      const other = (m + 1) % n;
      const c = codeOf(() => verifyInclusion(other, n, lh, proof, root));
      expect(['root_mismatch', 'proof_wrong_length']).toContain(c);
      expect(codeOf(() => verifyInclusion(m, n, refLeaf(Buffer.from('x')), proof, root))).toBe('root_mismatch');
      expect(codeOf(() => verifyInclusion(m, n, lh, proof, big.roots[n - 1]))).toBe('root_mismatch');
    }
    const p = inclusionProofSync(3, n, big.store);
    const lh = refLeaf(d[3]);
    expect(codeOf(() => verifyInclusion(n, n, lh, p, root))).toBe('index_out_of_range');
    expect(codeOf(() => verifyInclusion(-1, n, lh, p, root))).toBe('index_out_of_range');
    expect(codeOf(() => verifyInclusion(1.5, n, lh, p, root))).toBe('index_out_of_range');
    expect(codeOf(() => verifyInclusion(0, 0, lh, [], root))).toBe('index_out_of_range');
    expect(codeOf(() => verifyInclusion(3, 2 ** 53, lh, p, root))).toBe('size_invalid');
    expect(codeOf(() => verifyInclusion(3, n, lh.subarray(0, 31), p, root))).toBe('hash_wrong_length');
    expect(codeOf(() => verifyInclusion(3, n, lh, [...p.slice(0, -1), Buffer.alloc(33)], root))).toBe('hash_wrong_length');
    expect(codeOf(() => verifyInclusion(3, n, lh, 'nope' as unknown as Buffer[], root))).toBe('proof_malformed');
    expect(codeOf(() => verifyInclusion(3, n, lh, [null] as unknown as Buffer[], root))).toBe('proof_malformed');
    expect(codeOf(() => verifyInclusion(3, n, lh, p, null as unknown as Buffer))).toBe('root_mismatch');
    expect(rootFromInclusionProof(3, n, lh, p)).toEqual(root);
  });

  it('root_mismatch carries expected and calculated', () => {
    const p = inclusionProofSync(5, n, big.store);
    try {
      verifyInclusion(5, n, refLeaf(d[5]), p, big.roots[3]);
      throw new Error('verified');
    } catch (e) {
      expect(isTlogError(e, 'root_mismatch')).toBe(true);
      expect((e as { details: Record<string, unknown> }).details).toEqual({ which: 'tree', expected: big.roots[3].toString('base64'), calculated: root.toString('base64') });
    }
  });

  it('consistency: each node flipped, truncated, extended, swapped roots, wrong sizes', () => {
    for (let m = 1; m < n; m++) {
      const proof = consistencyProofSync(m, n, big.store);
      const r1 = big.roots[m];
      for (let j = 0; j < proof.length; j++) {
        const bad = proof.map((p) => Buffer.from(p));
        bad[j][0] ^= 1;
        expect(codeOf(() => verifyConsistency(m, n, bad, r1, root))).toBe('root_mismatch');
      }
      expect(codeOf(() => verifyConsistency(m, n, proof.slice(0, -1), r1, root))).toBe('proof_wrong_length');
      expect(codeOf(() => verifyConsistency(m, n, [...proof, root], r1, root))).toBe('proof_wrong_length');
      expect(codeOf(() => verifyConsistency(m, n, proof, root, r1))).toBe('root_mismatch');
      expect(codeOf(() => verifyConsistency(m, n, proof, r1, big.roots[n - 1]))).toBe('root_mismatch');
      expect(codeOf(() => verifyConsistency(n, m, proof, root, r1))).toBe('sizes_out_of_order');
    }
    expect(codeOf(() => verifyConsistency(0, n, [], EMPTY_ROOT, root))).toBe('consistency_from_empty_tree');
    expect(codeOf(() => verifyConsistency(n, n, [root], root, root))).toBe('proof_wrong_length');
    expect(codeOf(() => verifyConsistency(n, n, [], root, big.roots[3]))).toBe('root_mismatch');
    expect(codeOf(() => verifyConsistency(0, 0, [], EMPTY_ROOT, EMPTY_ROOT))).toBe('ok');
    expect(codeOf(() => verifyConsistency(0, 0, [], root, root))).toBe('root_mismatch');
    expect(codeOf(() => verifyConsistency(5, 9, [], big.roots[5], big.roots[9]))).toBe('proof_wrong_length');
    expect(codeOf(() => verifyConsistency(-1, 9, [], big.roots[5], big.roots[9]))).toBe('size_invalid');
  });

  it('proof plans refuse bad sizes and indexes; a broken reader is reader_invalid', () => {
    expect(codeOf(() => inclusionProofPlan(5, 5))).toBe('index_out_of_range');
    expect(codeOf(() => consistencyProofPlan(0, 5))).toBe('consistency_from_empty_tree');
    expect(codeOf(() => consistencyProofPlan(6, 5))).toBe('sizes_out_of_order');
    const plan = inclusionProofPlan(2, 9);
    expect(codeOf(() => assembleHashes(plan, []))).toBe('reader_invalid');
    expect(codeOf(() => assembleHashes(plan, plan.nodes.map(() => Buffer.alloc(31))))).toBe('reader_invalid');
  });
});

describe('integrator', () => {
  const N = 1000;
  const leaves = Array.from({ length: N }, (_, i) => data(i));
  const hashes = leaves.map(leafHash);

  const snapshot = (store: MemStore): string[] => [...store.nodes.entries()].map(([k, v]) => `${k}=${v.toString('hex')}`).sort();

  it('random batch sizes give the same stored nodes and roots as one batch; resuming from the right edge needs no other reads', () => {
    const one = new MemStore();
    const all = TreeIntegrator.empty().appendLeafHashes(hashes);
    for (const x of all.nodes.toArray()) one.put(x.level, x.index, x.hash);
    expect(all.root).toEqual(MTH(leaves));
    expect(all.nodes.count).toBe(2 * N - 6); // 1000 = 0b1111101000

    let seed = 7;
    const batched = new MemStore();
    let t = TreeIntegrator.empty();
    let at = 0;
    let restarts = 0;
    while (at < N) {
      seed = (seed * 48271) % 2147483647;
      const k = Math.min(N - at, seed % 37);
      if (seed % 5 === 0) {
        // a restart: resume from the stored right edge (one read)
        batched.reads = 0;
        t = TreeIntegrator.resume(at, batched.readHashes(rightEdge(at)));
        restarts++;
      }
      const r = k % 2 === 0 ? t.appendLeafHashes(hashes.slice(at, at + k)) : t.appendLeaves(leaves.slice(at, at + k));
      for (const x of r.nodes.toArray()) batched.put(x.level, x.index, x.hash);
      at += k;
      expect(r.size).toBe(at);
      expect(r.root).toEqual(MTH(leaves.slice(0, at)));
    }
    expect(restarts).toBeGreaterThan(3);
    expect(snapshot(batched)).toEqual(snapshot(one));
    expect(batched.nodes.size).toBe(storedNodeCount(N));
  });

  it('integrate() is the pure one-shot form; bad input changes nothing', () => {
    const t = TreeIntegrator.empty();
    t.appendLeafHashes(hashes.slice(0, 11));
    const edge = t.edgeHashes();
    expect(edge.length).toBe(rightEdge(11).length);
    const r = integrate(11, edge, hashes.slice(11, 20));
    expect(r.root).toEqual(MTH(leaves.slice(0, 20)));
    expect(r.nodes.count).toBe(storedNodeCount(20) - storedNodeCount(11));
    expect(codeOf(() => integrate(11, edge.slice(1), hashes.slice(11, 20)))).toBe('reader_invalid');
    expect(codeOf(() => t.appendLeafHashes([hashes[11], Buffer.alloc(3)]))).toBe('hash_wrong_length');
    expect(t.size).toBe(11);
    expect(t.root()).toEqual(MTH(leaves.slice(0, 11)));
    expect(TreeIntegrator.empty().root()).toEqual(EMPTY_ROOT);
  });
});
