/**
 * The S8.1 Merkle root over ordered step receipt identifiers.
 *
 * Leaves are SHA-256 over the UTF-8 bytes of each receipt_id string (never
 * its output hash); adjacent digests are paired in order and SHA-256 is
 * taken over the 64-byte concatenation; on a level with an odd count the
 * last digest is duplicated (not promoted); the root is lowercase hex. With
 * one step the leaf digest is the root.
 */
import { sha256 } from './sha256';

/** The documented construction, for pages and verify output (S8.1 requires it be stated). */
export const MERKLE_CONSTRUCTION =
  'AER-1 S8.1: leaf = SHA-256(UTF-8 bytes of the step receipt_id string), in step order; ' +
  'node = SHA-256(left || right) over the two 32-byte digests; an odd level duplicates its last digest; ' +
  'root = lowercase hex of the final digest.';

/**
 * Merkle root of `receiptIds` in order, as 64 lowercase hex digits.
 * Returns null for an empty list (a workflow has at least one step).
 * Works in one buffer of 32 bytes per leaf, so a million leaves need about 32 MB.
 */
export function merkleRoot(receiptIds: Iterable<string>): string | null {
  const ids = Array.isArray(receiptIds) ? (receiptIds as string[]) : [...receiptIds];
  let n = ids.length;
  if (n === 0) return null;
  const buf = Buffer.allocUnsafe(n * 32);
  for (let i = 0; i < n; i++) sha256(ids[i]).copy(buf, i * 32);
  while (n > 1) {
    const next = Math.ceil(n / 2);
    for (let i = 0; i < next; i++) {
      // The pair (left || right) lies contiguous in the buffer; the odd last digest pairs with a copy of itself.
      const pair = 2 * i + 1 < n ? buf.subarray(64 * i, 64 * i + 64) : Buffer.concat([buf.subarray(64 * i, 64 * i + 32), buf.subarray(64 * i, 64 * i + 32)]);
      // Writing node i never overwrites an input still needed: i*32 <= 2i*32.
      sha256(pair).copy(buf, i * 32);
    }
    n = next;
  }
  return buf.subarray(0, 32).toString('hex');
}
