/**
 * The signer's memory outside the database: the newest checkpoint this log
 * key has signed, kept in a small file beside the key (issue 26). A database
 * restored from an older backup, or rebuilt, forgets the checkpoints it
 * stored; this file does not, so the signer can refuse to sign a tree that
 * is not an extension of what the key has already signed (two inconsistent
 * checkpoints under one key are a provable fork).
 *
 *     {"format":"aer1-log-signer-state/v1","origin":"...","size":N,
 *      "root_hash":"<base64>","note":"<the signed checkpoint note>"}
 *
 * Where: `LEDGER_CHECKPOINT_STATE_FILE`, else beside the key file: the key's
 * path with `.key` replaced by `.checkpoint` (`ledger.log-signing.checkpoint`
 * beside `ledger.log-signing.key`), or `.checkpoint` appended when the key's
 * name does not end in `.key`. An in-memory (ephemeral) key has no file unless
 * LEDGER_CHECKPOINT_STATE_FILE is set: its state lives as long as the process,
 * as do the key and the database.
 *
 * A write is atomic and durable (fresh temp file in the same directory,
 * fsync, rename over the old file, directory fsync), like the witness's
 * state (src/witness/state.ts): after SIGKILL or power loss the file is the
 * old record or the new one. The signer writes it before the checkpoint is
 * stored or served. Several processes may share one file (one key file
 * shared by replicas on one machine): a write never replaces a larger size
 * it has just read; two writes racing can at worst leave the smaller of two
 * consistent checkpoints, never a false or inconsistent one.
 */
import { writeFileDurably } from '../common/durable-file';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { decodeStrictBase64 } from '../core/aer1/base64';
import { HASH_SIZE, parseVerifierKey, verifyCheckpoint } from '../core/tlog';


/** The format tag of a signer state file. */
export const SIGNER_STATE_FORMAT = 'aer1-log-signer-state/v1';

/** The newest checkpoint a log key signed, as kept in its state file. */
export interface SignedState {
  origin: string;
  size: number;
  /** base64 of the 32-byte RFC 6962 root. */
  root: string;
  /** The signed checkpoint note, verbatim. */
  note: string;
}

/** A state file that cannot be used: it exists and does not parse, or is not a checkpoint of this log's key. */
export class CheckpointStateError extends Error {}

/** The default state file of a key file: `.key` replaced by `.checkpoint`, else `.checkpoint` appended; same folder. */
export function defaultCheckpointStatePath(keyFile: string): string {
  const name = basename(keyFile);
  return join(dirname(keyFile), name.endsWith('.key') ? `${name.slice(0, -'.key'.length)}.checkpoint` : `${name}.checkpoint`);
}

/**
 * Parse a state file's text and check it is a checkpoint of `origin` signed
 * by `vkey` whose fields agree with its note. Throws CheckpointStateError.
 */
export function parseSignerState(text: string, origin: string, vkey: string): SignedState {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (_) {
    throw new CheckpointStateError('not JSON');
  }
  const o = v as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || o.format !== SIGNER_STATE_FORMAT) throw new CheckpointStateError(`not a ${SIGNER_STATE_FORMAT} record`);
  if (typeof o.origin !== 'string' || typeof o.root_hash !== 'string' || typeof o.note !== 'string') throw new CheckpointStateError('origin, root_hash and note are strings');
  if (!Number.isSafeInteger(o.size) || (o.size as number) < 0) throw new CheckpointStateError('size is a non-negative integer');
  const root = decodeStrictBase64(o.root_hash);
  if (root === null || root.length !== HASH_SIZE) throw new CheckpointStateError('root_hash is base64 of 32 bytes');
  if (o.origin !== origin) throw new CheckpointStateError(`it is for origin ${o.origin}, not this log's ${origin}`);
  let cp;
  try {
    cp = verifyCheckpoint(o.note, [parseVerifierKey(vkey)], origin).checkpoint;
  } catch (e) {
    throw new CheckpointStateError(`its note is not a checkpoint signed by this log's key (${(e as Error).message})`);
  }
  if (cp.size !== o.size || !cp.rootHash.equals(root)) throw new CheckpointStateError('its size and root_hash differ from its note');
  return { origin, size: o.size as number, root: o.root_hash, note: o.note };
}

/** Where the signer keeps its last signed checkpoint: a file, or (an ephemeral key) memory. */
export interface CheckpointStateStore {
  /** The file, or null for memory only. */
  readonly path: string | null;
  /** The state now (re-read from the file on every call: another process may have advanced it); null when none. Throws CheckpointStateError. */
  read(): SignedState | null;
  /** Replace the state durably unless the current one is larger. Resolves once on disk. */
  write(s: SignedState): Promise<void>;
}

/** State in memory only (an ephemeral key: the key, the database and this state end together). */
export class MemoryCheckpointState implements CheckpointStateStore {
  readonly path = null;
  private s: SignedState | null = null;
  read(): SignedState | null {
    return this.s;
  }
  async write(s: SignedState): Promise<void> {
    if (!this.s || s.size > this.s.size) this.s = { ...s };
  }
}

/** State in a file (see the module comment). */
export class FileCheckpointState implements CheckpointStateStore {
  constructor(
    readonly path: string,
    private readonly origin: string,
    private readonly vkey: string,
  ) {}

  read(): SignedState | null {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new CheckpointStateError(`cannot read ${this.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    try {
      return parseSignerState(text, this.origin, this.vkey);
    } catch (e) {
      throw new CheckpointStateError(`${this.path} is unusable: ${(e as Error).message}`);
    }
  }

  async write(s: SignedState): Promise<void> {
    const now = this.read();
    if (now && now.size > s.size) return;
    await writeFileDurably(this.path, JSON.stringify({ format: SIGNER_STATE_FORMAT, origin: s.origin, size: s.size, root_hash: s.root, note: s.note }) + '\n');
  }
}
