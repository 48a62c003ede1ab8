/**
 * A deliberately simple RFC 6962 section 2.1 reference: MTH, PATH and
 * PROOF/SUBPROOF written as the RFC's recursive definitions over the whole
 * leaf list. No shared code with src/: the stored-node tree, the service's
 * proofs and the CLI are all checked against it.
 */
import { createHash } from 'node:crypto';

const sha = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
export const refLeaf = (d: Buffer): Buffer => sha(Buffer.from([0]), d);
export const refNode = (l: Buffer, r: Buffer): Buffer => sha(Buffer.from([1]), l, r);
const kOf = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
// Memoized by (first leaf object, length) only to keep the run short; the definition is the RFC's.
const memo = new Map<Buffer, Map<number, Buffer>>();
export function MTH(d: Buffer[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return refLeaf(d[0]);
  const byLen = memo.get(d[0]) ?? new Map<number, Buffer>();
  memo.set(d[0], byLen);
  const hit = byLen.get(d.length);
  if (hit) return hit;
  const k = kOf(d.length);
  const h = refNode(MTH(d.slice(0, k)), MTH(d.slice(k)));
  byLen.set(d.length, h);
  return h;
}
export function PATH(m: number, d: Buffer[]): Buffer[] {
  if (d.length === 1) return [];
  const k = kOf(d.length);
  return m < k ? [...PATH(m, d.slice(0, k)), MTH(d.slice(k))] : [...PATH(m - k, d.slice(k)), MTH(d.slice(0, k))];
}
export function SUBPROOF(m: number, d: Buffer[], b: boolean): Buffer[] {
  const n = d.length;
  if (m === n) return b ? [] : [MTH(d)];
  const k = kOf(n);
  return m <= k ? [...SUBPROOF(m, d.slice(0, k), b), MTH(d.slice(k))] : [...SUBPROOF(m - k, d.slice(k), false), MTH(d.slice(0, k))];
}
export const PROOF = (m: number, d: Buffer[]): Buffer[] => SUBPROOF(m, d, true);
