/**
 * The SHA-256 floor: the cheapest way this Node offers to hash one small
 * input. `crypto.hash` (Node >= 20.12) is a one-shot call that creates no
 * Hash object; the digest is returned as a hex string, which allocates no
 * Buffer (a Buffer result costs an ArrayBuffer backing store per digest,
 * about 1.5 us here, several times the hash itself). Older Nodes fall back
 * to createHash.
 */
import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string | Uint8Array, outputEncoding?: string) => string | Buffer;
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export const FLOOR_PRIMITIVE = oneShot ? "crypto.hash, hex digest" : "createHash, hex digest (no crypto.hash in this Node)";

/** SHA-256 as lowercase hex, by the floor primitive. */
export const floorHex: (data: string | Uint8Array) => string = oneShot
  ? (data) => oneShot('sha256', data, 'hex') as string
  : (data) => crypto.createHash('sha256').update(data).digest('hex');

/** SHA-256 as a new Buffer by the floor primitive: the floor plus a Buffer allocation per digest. */
export const floorBuffer: (data: string | Uint8Array) => Buffer = oneShot
  ? (data) => oneShot('sha256', data, 'buffer') as Buffer
  : (data) => crypto.createHash('sha256').update(data).digest();

/** SHA-256 hex through createHash (a Hash object per call). */
export function createHashHex(data: string | Uint8Array): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** SHA-256 as a Buffer through createHash. */
export function createHashRaw(data: string | Uint8Array): Buffer {
  return crypto.createHash('sha256').update(data).digest();
}
