import { randomBytes } from 'node:crypto';

/** Salts cut from one `randomBytes` call (1,024 of them). */
const POOL_BYTES = 32 * 1024;

/**
 * The 32-byte salts of format 3 payload commitments (issue 29): cut in turn
 * from one `crypto.randomBytes` call of {@link POOL_BYTES}, refilled with a
 * new buffer when used up (a call for 32 bytes costs about as much as one
 * for 32 KiB: about 3 us against 0.03 us a salt). Each salt is handed out
 * once and its bytes are never written again (a refill is a new buffer), so a
 * salt kept by a caller stays as it was.
 */
export class SaltPool {
  private pool: Buffer = Buffer.alloc(0);
  private at = 0;

  /** The next unused 32 bytes from the CSPRNG. */
  next(): Buffer {
    if (this.at + 32 > this.pool.length) {
      this.pool = randomBytes(POOL_BYTES);
      this.at = 0;
    }
    const salt = this.pool.subarray(this.at, this.at + 32);
    this.at += 32;
    return salt;
  }
}
