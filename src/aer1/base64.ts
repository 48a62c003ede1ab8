/**
 * Strict base64 (S4, S7.1; spec README reading 1).
 *
 * RFC 4648 section 4 standard alphabet only, length a multiple of 4, `=`
 * padding only at the end (at most two), no white space, no base64url
 * characters, and canonical: the unused pad bits are zero, so re-encoding
 * the decoded bytes gives back the same string. Anything else is rejected,
 * never repaired.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;

/** True when `s` is strict, canonical base64 as defined above. The empty string is valid (zero bytes). */
export function isStrictBase64(s: string): boolean {
  const n = s.length;
  if (n % 4 !== 0) return false;
  let pad = 0;
  if (n > 0 && s.charCodeAt(n - 1) === 61 /* = */) pad = s.charCodeAt(n - 2) === 61 ? 2 : 1;
  const body = n - pad;
  for (let i = 0; i < body; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || VALUE[c] < 0) return false;
  }
  if (pad > 0) {
    // The last data character carries pad bits that must be zero.
    const last = VALUE[s.charCodeAt(body - 1)];
    if (pad === 2 && (last & 0x0f) !== 0) return false;
    if (pad === 1 && (last & 0x03) !== 0) return false;
  }
  return true;
}

/**
 * Decode strict base64. Returns `null` when `s` is not strict base64
 * (or not a string); never a partially decoded or repaired value.
 */
export function decodeStrictBase64(s: unknown): Buffer | null {
  if (typeof s !== 'string' || !isStrictBase64(s)) return null;
  // The input is validated above, so Node's decoder sees only canonical input
  // and cannot silently skip or repair anything.
  return Buffer.from(s, 'base64');
}
