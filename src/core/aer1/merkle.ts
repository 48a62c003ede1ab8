/**
 * The S8.1 Merkle root over ordered step receipt identifiers.
 *
 * Leaves are SHA-256 over the UTF-8 bytes of each receipt_id string (never
 * its output hash); adjacent digests are paired in order and SHA-256 is
 * taken over the 64-byte concatenation; on a level with an odd count the
 * last digest is duplicated (not promoted); the root is lowercase hex. With
 * one step the leaf digest is the root.
 */
import { hash } from 'node:crypto';

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
  // One buffer with a spare slot, so an odd level's last digest can be duplicated in place.
  // Digests come back as 'binary' (latin1) strings, one char per byte, and are written into the buffer:
  // a Buffer per digest would cost several times the hash itself.
  const buf = Buffer.allocUnsafe((n + 1) * 32);
  for (let i = 0; i < n; i++) buf.write(hash('sha256', ids[i], 'binary'), i * 32, 32, 'latin1');
  while (n > 1) {
    if (n % 2 === 1) buf.copy(buf, n * 32, (n - 1) * 32, n * 32); // duplicate the last digest
    const next = Math.ceil(n / 2);
    // Node i = SHA-256(digest 2i || digest 2i+1), the pair contiguous in the buffer. Writing
    // node i never overwrites an input still needed: i*32 <= 2i*32.
    for (let i = 0; i < next; i++) buf.write(hash('sha256', buf.subarray(64 * i, 64 * i + 64), 'binary'), i * 32, 32, 'latin1');
    n = next;
  }
  return buf.toString('hex', 0, 32);
}
