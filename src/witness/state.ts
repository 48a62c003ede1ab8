/**
 * The witness's durable memory: per log origin, the latest checkpoint it
 * cosigned (c2sp.org/tlog-witness: "the witness MUST persist the new
 * checkpoint before responding"). One file per origin in the state
 * directory, named `<lowercase hex SHA-256 of the origin>.json`:
 *
 *     {"format":"aer1-witness-state/v1","origin":"...","size":N,
 *      "root_hash":"<base64>","note":"<the checkpoint note: log signature(s) and this witness's cosignature>"}
 *
 * A replacement is atomic and durable: written to a fresh temp file in the
 * same directory, fsynced, renamed over the old file, then the directory is
 * fsynced. After a crash (SIGKILL, power loss) the file is either the old
 * record or the new one, never a torn mix, and a record that was answered
 * with a cosignature is on disk. A file that does not parse stops the
 * witness at start ({@link WitnessStateError}): it never silently forgets
 * a size it cosigned.
 *
 * One process per directory: {@link WitnessStateStore.open} takes a `LOCK`
 * file holding its pid (a stale lock, whose process is gone, is taken over).
 */
import { writeFileDurably } from '../common/durable-file';
import { closeSync, fsyncSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { hash } from 'node:crypto';
import { decodeStrictBase64 } from '../core/aer1/base64';
import { HASH_SIZE, originHash, parseCheckpoint, parseNote } from '../core/tlog';


/** The format tag of a state file. */
export const WITNESS_STATE_FORMAT = 'aer1-witness-state/v1';

/** The latest cosigned checkpoint of one origin. */
export interface StoredCheckpoint {
  readonly origin: string;
  /** Tree size of the latest cosigned checkpoint. */
  readonly size: number;
  /** Its 32-byte root hash. */
  readonly rootHash: Buffer;
  /** The checkpoint note as served at `/<origin hash>/checkpoint`: the log's signature(s) and this witness's cosignature. */
  readonly note: string;
}

/** The state directory cannot be used (locked, unreadable, or holding a record that does not parse). */
export class WitnessStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WitnessStateError';
  }
}

const FILE_RE = /^[0-9a-f]{64}\.json$/;
const LOCK = 'LOCK';

/** Evidence files kept at most (a log that keeps misbehaving cannot fill the disk). */
export const MAX_EVIDENCE_FILES = 1000;

function serialize(r: StoredCheckpoint): string {
  return JSON.stringify({ format: WITNESS_STATE_FORMAT, origin: r.origin, size: r.size, root_hash: r.rootHash.toString('base64'), note: r.note }) + '\n';
}

/**
 * Parse a state file; checks that its fields agree with each other and with
 * the note it holds and, when given, with the file name. Throws
 * WitnessStateError.
 */
export function parseStateFile(text: string, fileName?: string): StoredCheckpoint {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (_) {
    throw new WitnessStateError('not JSON');
  }
  const o = v as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || o.format !== WITNESS_STATE_FORMAT) throw new WitnessStateError(`not a ${WITNESS_STATE_FORMAT} record`);
  const { origin, size, root_hash: root, note } = o;
  if (typeof origin !== 'string' || typeof note !== 'string' || typeof root !== 'string') throw new WitnessStateError('origin, root_hash and note are strings');
  if (!Number.isSafeInteger(size) || (size as number) < 0) throw new WitnessStateError('size is a non-negative integer');
  const rootHash = decodeStrictBase64(root);
  if (rootHash === null || rootHash.length !== HASH_SIZE) throw new WitnessStateError('root_hash is base64 of 32 bytes');
  let cp;
  try {
    cp = parseCheckpoint(parseNote(note).text);
  } catch (e) {
    throw new WitnessStateError(`the stored note is not a checkpoint: ${(e as Error).message}`);
  }
  if (cp.origin !== origin || cp.size !== size || !cp.rootHash.equals(rootHash)) throw new WitnessStateError('the stored note does not match origin, size and root_hash');
  if (fileName !== undefined && fileName !== `${originHash(origin)}.json`) throw new WitnessStateError('the file name is not the SHA-256 of the origin');
  return { origin, size: size as number, rootHash, note };
}

/** Directories locked by this process (by real path). */
const OPEN_HERE = new Set<string>();

function isAlive(pid: number, dir: string): boolean {
  // Our own pid: held by this process only if we opened it; otherwise a stale file (a restarted container reuses pids).
  if (pid === process.pid) return OPEN_HERE.has(dir);
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The per-origin records of one state directory, in memory after
 * {@link open}, written through on every {@link put}. Callers serialize
 * check-and-put per origin with {@link withOriginLock}.
 */
export class WitnessStateStore {
  private readonly records = new Map<string, StoredCheckpoint>();
  private readonly locks = new Map<string, Promise<void>>();
  private lockHeld = false;
  private readonly realDir: string;

  private constructor(readonly dir: string) {
    this.realDir = realpathSync(dir);
  }

  /**
   * Open (creating it, mode 0700, when missing) the state directory: take
   * its lock, remove temp files a crash left, load every record. Throws
   * WitnessStateError when another live process holds the lock or a record
   * does not parse.
   */
  static async open(dir: string): Promise<WitnessStateStore> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const store = new WitnessStateStore(dir);
    store.takeLock();
    try {
      for (const name of (await readdir(dir)).sort()) {
        if (name.includes('.tmp-')) {
          await unlink(join(dir, name)).catch(() => undefined);
          continue;
        }
        if (!FILE_RE.test(name)) continue;
        let rec: StoredCheckpoint;
        try {
          rec = parseStateFile(await readFile(join(dir, name), 'utf8'), name);
        } catch (e) {
          throw new WitnessStateError(`state file ${name} is unusable (${(e as Error).message}); refusing to start rather than forget a cosigned size`);
        }
        store.records.set(rec.origin, rec);
      }
    } catch (e) {
      store.close();
      throw e;
    }
    return store;
  }

  private takeLock(): void {
    const path = join(this.dir, LOCK);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        try {
          writeSync(fd, `${process.pid}\n`);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        this.lockHeld = true;
        OPEN_HERE.add(this.realDir);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new WitnessStateError(`cannot lock the state directory: ${(e as Error).message}`);
      }
      let pid = NaN;
      try {
        pid = Number(readFileSync(path, 'utf8').trim());
      } catch (_) {
        // unreadable: treated as stale below only if it vanished
      }
      if (Number.isSafeInteger(pid) && pid > 0 && isAlive(pid, this.realDir)) throw new WitnessStateError(`the state directory is in use by process ${pid} (${path})`);
      try {
        // Stale lock (its process is gone, e.g. after SIGKILL): take it over.
        unlinkSync(path);
      } catch (_) {
        // someone else removed it; retry
      }
    }
    throw new WitnessStateError(`cannot lock the state directory (${path})`);
  }

  /** Release the directory lock (idempotent). */
  close(): void {
    if (!this.lockHeld) return;
    this.lockHeld = false;
    OPEN_HERE.delete(this.realDir);
    try {
      unlinkSync(join(this.dir, LOCK));
    } catch (_) {
      // already gone
    }
  }

  /** The latest cosigned checkpoint for `origin`, or null when none was cosigned. */
  get(origin: string): StoredCheckpoint | null {
    return this.records.get(origin) ?? null;
  }

  /** Every origin with a record. */
  origins(): string[] {
    return [...this.records.keys()];
  }

  /**
   * Replace the record of `rec.origin` durably (temp file, fsync, rename,
   * directory fsync), then in memory. Resolves only once the record is on
   * disk; on any error the in-memory record is unchanged and the error
   * propagates (the caller must then not answer with a cosignature).
   */
  async put(rec: StoredCheckpoint): Promise<void> {
    const final = join(this.dir, `${originHash(rec.origin)}.json`);
    await writeFileDurably(final, serialize(rec));
    this.records.set(rec.origin, { ...rec, rootHash: Buffer.from(rec.rootHash) });
  }

  /**
   * Keep a refused, log-signed request as evidence of log misbehaviour, in
   * `<dir>/evidence/<origin hash>-<SHA-256 of the body>.txt` (same body,
   * same file; at most {@link MAX_EVIDENCE_FILES} files; not fsynced).
   * Resolves to the file name, or null when the cap is reached.
   */
  async saveEvidence(origin: string, body: Uint8Array): Promise<string | null> {
    const dir = join(this.dir, 'evidence');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const name = `${originHash(origin)}-${hash('sha256', body, 'hex')}.txt`;
    const existing = await readdir(dir);
    if (existing.includes(name)) return name;
    if (existing.length >= MAX_EVIDENCE_FILES) return null;
    const fh = await open(join(dir, name), 'wx', 0o600).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'EEXIST') return null;
      throw e;
    });
    if (fh === null) return name;
    try {
      await fh.writeFile(body);
    } finally {
      await fh.close();
    }
    return name;
  }

  /**
   * Run `fn` while holding the lock of `origin`: calls for one origin run
   * one after another (in arrival order), so a check and the put that
   * follows it are atomic with respect to other requests for that origin.
   */
  async withOriginLock<T>(origin: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(origin) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.locks.set(origin, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(origin) === tail) this.locks.delete(origin);
    }
  }
}
