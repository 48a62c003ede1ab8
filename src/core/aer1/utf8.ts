/**
 * Strict UTF-8 (S4; spec README reading 2), per RFC 3629 / Unicode Table 3-7.
 *
 * Rejects overlong forms, surrogate code points (ED A0..BF xx), code points
 * above U+10FFFF, stray continuation bytes and truncated sequences. A BOM and
 * U+0000 are valid UTF-8.
 */
import { isAscii } from 'node:buffer';

/**
 * True when `b` is strict UTF-8. ASCII (every byte below 0x80), by far the
 * most common input, is recognised by Node's native `isAscii` scan; any other
 * input is checked byte by byte below.
 */
export function isStrictUtf8(b: Uint8Array): boolean {
  if (isAscii(b)) return true;
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c === 0xe0) { need = 2; lo = 0xa0; }
    else if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) need = 2;
    else if (c === 0xed) { need = 2; hi = 0x9f; }
    else if (c === 0xf0) { need = 3; lo = 0x90; }
    else if (c >= 0xf1 && c <= 0xf3) need = 3;
    else if (c === 0xf4) { need = 3; hi = 0x8f; }
    else return false;
    if (i + need >= n) return false; // truncated sequence
    // The second byte has the tightened range; the rest are plain continuations.
    const b1 = b[i + 1];
    if (b1 < lo || b1 > hi) return false;
    for (let k = 2; k <= need; k++) {
      const bk = b[i + k];
      if (bk < 0x80 || bk > 0xbf) return false;
    }
    i += need + 1;
  }
  return true;
}
