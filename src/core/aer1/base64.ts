/**
 * Strict base64 (S4, S7.1; spec README reading 1).
 *
 * RFC 4648 section 4 standard alphabet only, length a multiple of 4, `=`
 * padding only at the end (at most two), no white space, no base64url
 * characters, and canonical: the unused pad bits are zero, so re-encoding
 * the decoded bytes gives back the same string. Anything else is rejected,
 * never repaired.
 */

import { sha256Hex } from './sha256';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Value of each UTF-16 code unit as a base64 digit; -1 for everything outside the standard alphabet (including `=`). */
const VALUE = new Int8Array(65536).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;

/**
 * The alphabet and padding shape: standard characters, then at most two `=`.
 * One compiled regex scans faster than a loop over long strings.
 */
const SHAPE = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Strings up to this length are validated and decoded in one pass in
 * JavaScript; longer ones are checked by {@link SHAPE} and decoded by Node,
 * which is faster from about 600 characters (measured: bench/RESULTS.md).
 */
const ONE_PASS_MAX = 512;

/** Number of `=` at the end of `s` (0, 1 or 2 when `s` is well-formed). */
function padding(s: string): number {
  const n = s.length;
  if (n === 0 || s.charCodeAt(n - 1) !== 61 /* = */) return 0;
  return s.charCodeAt(n - 2) === 61 ? 2 : 1;
}

/** The number of bytes strict base64 `s` decodes to (assuming it is strict). */
function decodedLength(s: string): number {
  return (s.length / 4) * 3 - padding(s);
}

/**
 * Validate and decode `s` in one pass into `out` from offset 0. Returns the
 * byte count, or -1 when `s` is not strict base64 (bytes written to `out`
 * are then meaningless). Precondition: `s.length % 4 === 0` and
 * `out.length >= decodedLength(s)`.
 */
function decodeOnePass(s: string, out: Uint8Array): number {
  const n = s.length;
  if (n === 0) return 0;
  const pad = padding(s);
  const full = pad === 0 ? n : n - 4; // characters in complete, unpadded quanta
  let o = 0;
  let bad = 0; // any -1 digit makes it negative
  for (let i = 0; i < full; i += 4) {
    const a = VALUE[s.charCodeAt(i)];
    const b = VALUE[s.charCodeAt(i + 1)];
    const c = VALUE[s.charCodeAt(i + 2)];
    const d = VALUE[s.charCodeAt(i + 3)];
    bad |= a | b | c | d;
    out[o] = (a << 2) | (b >> 4);
    out[o + 1] = ((b & 0x0f) << 4) | (c >> 2);
    out[o + 2] = ((c & 0x03) << 6) | d;
    o += 3;
  }
  if (pad > 0) {
    const a = VALUE[s.charCodeAt(full)];
    const b = VALUE[s.charCodeAt(full + 1)];
    bad |= a | b;
    out[o++] = (a << 2) | (b >> 4);
    if (pad === 2) {
      if ((b & 0x0f) !== 0) return -1; // canonical: unused bits are zero
    } else {
      const c = VALUE[s.charCodeAt(full + 2)];
      bad |= c;
      if ((c & 0x03) !== 0) return -1;
      out[o++] = ((b & 0x0f) << 4) | (c >> 2);
    }
  }
  return bad < 0 ? -1 : o;
}

/** True when `s` is strict, canonical base64 as defined above. The empty string is valid (zero bytes). */
export function isStrictBase64(s: string): boolean {
  const n = s.length;
  if (n % 4 !== 0 || !SHAPE.test(s)) return false;
  const pad = padding(s);
  if (pad === 0) return true;
  // Padded: the last data character carries pad bits that must be zero.
  const last = VALUE[s.charCodeAt(n - pad - 1)];
  return (last & (pad === 2 ? 0x0f : 0x03)) === 0;
}

/**
 * Decode strict base64. Returns `null` when `s` is not strict base64
 * (or not a string); never a partially decoded or repaired value.
 */
export function decodeStrictBase64(s: unknown): Buffer | null {
  if (typeof s !== 'string' || s.length % 4 !== 0) return null;
  if (s.length <= ONE_PASS_MAX) {
    const out = Buffer.allocUnsafe(decodedLength(s));
    return decodeOnePass(s, out) < 0 ? null : out;
  }
  if (!isStrictBase64(s)) return null;
  // Validated above, so Node's decoder sees only canonical input and cannot
  // silently skip or repair anything.
  return Buffer.from(s, 'base64');
}

/** Decoding room for {@link sha256HexOfStrictBase64}: canonical bytes up to 48 KiB decode without allocating. */
const SCRATCH = Buffer.allocUnsafe(48 * 1024);
/** Views of the first `len` bytes of SCRATCH, kept for lengths up to 4 KiB (typical canonical bytes). */
const VIEWS: (Uint8Array | undefined)[] = [];
const MAX_KEPT_VIEW = 4096;

/**
 * SHA-256 (hex) of the bytes that strict base64 `s` encodes, or null when
 * `s` is not strict base64 (or not a string). Same result as
 * `sha256Hex(decodeStrictBase64(s))`; decodes into a reused buffer instead
 * of allocating one per call (the verifier's per-entry hot path).
 */
export function sha256HexOfStrictBase64(s: unknown): string | null {
  if (typeof s !== 'string' || s.length % 4 !== 0) return null;
  const len = decodedLength(s);
  if (len > SCRATCH.length) {
    const bytes = decodeStrictBase64(s);
    return bytes === null ? null : sha256Hex(bytes);
  }
  if (s.length <= ONE_PASS_MAX) {
    if (decodeOnePass(s, SCRATCH) < 0) return null;
  } else {
    if (!isStrictBase64(s)) return null;
    SCRATCH.write(s, 0, len, 'base64');
  }
  let view = VIEWS[len];
  if (view === undefined) {
    view = new Uint8Array(SCRATCH.buffer, SCRATCH.byteOffset, len);
    if (len <= MAX_KEPT_VIEW) VIEWS[len] = view;
  }
  return sha256Hex(view);
}
