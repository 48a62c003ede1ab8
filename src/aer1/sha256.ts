import { createHash } from 'node:crypto';

/** SHA-256 (FIPS 180-4) of `data`, as 64 lowercase hex digits. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of `data` as a 32-byte buffer. */
export function sha256(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(data).digest();
}
