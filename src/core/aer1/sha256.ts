import { hash } from 'node:crypto';

/**
 * SHA-256 (FIPS 180-4). The one-shot `crypto.hash` (Node >= 20.12) avoids a
 * Hash object per call, which cost about two thirds of the time of hashing
 * small inputs such as chain entries (see bench/PROFILE.md).
 */

/** SHA-256 of `data` (a string is hashed as its UTF-8 bytes), as 64 lowercase hex digits. */
export function sha256Hex(data: Uint8Array | string): string {
  return hash('sha256', data, 'hex');
}

/** SHA-256 of `data` as a 32-byte buffer. */
export function sha256(data: Uint8Array | string): Buffer {
  return hash('sha256', data, 'buffer');
}
