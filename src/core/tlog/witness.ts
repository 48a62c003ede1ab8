/**
 * The pure part of the witness protocol (c2sp.org/tlog-witness,
 * "add-checkpoint"): the request body, the witness's decision, and the
 * response bodies. No HTTP and no storage here: the service reads the
 * witness's latest cosigned checkpoint for the origin, calls
 * {@link checkAddCheckpoint}, and on `ok` persists the new state
 * atomically with the check (compare-and-set on the old size) BEFORE it
 * answers with the cosignature lines.
 *
 * Request body:
 *
 *     old <size>\n
 *     <base64 consistency proof hash>\n   (0 to 63 lines)
 *     \n
 *     <checkpoint signed note>
 */
import { hash } from 'node:crypto';
import { decodeStrictBase64 } from '../aer1/base64';
import { Checkpoint, parseCheckpoint } from './checkpoint';
import { TlogError } from './errors';
import { NoteVerifier } from './keys';
import { EMPTY_ROOT, HASH_SIZE, verifyConsistency } from './merkle';
import { parseNote, VerifiedNote, verifyNote } from './note';

/** Consistency proof lines a client may send. */
export const MAX_WITNESS_PROOF_LINES = 63;

/** A parsed add-checkpoint request. */
export interface AddCheckpointRequest {
  readonly oldSize: number;
  readonly proof: readonly Buffer[];
  /** The checkpoint signed note, verbatim. */
  readonly checkpoint: string;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function bad(message: string, details: Record<string, unknown> = {}): TlogError {
  return new TlogError('witness_request_malformed', message, details);
}

/** Format an add-checkpoint request body. */
export function formatAddCheckpointRequest(req: AddCheckpointRequest): string {
  if (!Number.isSafeInteger(req.oldSize) || req.oldSize < 0) throw bad('old size is a non-negative safe integer');
  if (req.proof.length > MAX_WITNESS_PROOF_LINES || req.proof.some((h) => !(h instanceof Uint8Array) || h.length !== HASH_SIZE)) throw bad('proof hashes are 32 bytes, at most 63');
  return `old ${req.oldSize}\n${req.proof.map((h) => Buffer.from(h).toString('base64') + '\n').join('')}\n${req.checkpoint}`;
}

/**
 * Parse an add-checkpoint request body (string or UTF-8 bytes). Throws
 * witness_request_malformed (answer 400) on any deviation: the `old` line
 * (decimal, no leading zeros), more than 63 proof lines, a proof line that
 * is not base64 of 32 bytes, no empty line, no checkpoint.
 */
export function parseAddCheckpointRequest(body: string | Uint8Array): AddCheckpointRequest {
  let s: string;
  if (typeof body === 'string') s = body;
  else if (body instanceof Uint8Array) {
    try {
      s = utf8.decode(body);
    } catch (_) {
      throw bad('the body is not valid UTF-8');
    }
  } else throw bad('the body is text');
  const end = s.indexOf('\n\n');
  if (end < 0) throw bad('no empty line before the checkpoint');
  const lines = s.slice(0, end).split('\n');
  const m = /^old (.*)$/.exec(lines[0]);
  if (!m || !DECIMAL.test(m[1]) || !Number.isSafeInteger(Number(m[1]))) throw bad('the first line is not old <decimal size>', { line: 1 });
  const proofLines = lines.slice(1);
  if (proofLines.length > MAX_WITNESS_PROOF_LINES) throw bad(`more than ${MAX_WITNESS_PROOF_LINES} consistency proof lines`, { count: proofLines.length });
  const proof = proofLines.map((l, i) => {
    const h = decodeStrictBase64(l);
    if (h === null || h.length !== HASH_SIZE) throw bad('a proof line is not base64 of a 32-byte hash', { line: i + 2 });
    return h;
  });
  const checkpoint = s.slice(end + 2);
  if (checkpoint.length === 0) throw bad('no checkpoint after the empty line');
  return { oldSize: Number(m[1]), proof, checkpoint };
}

/**
 * The origin line of the request's checkpoint, read before any
 * verification so the witness can look up the log's keys and its state
 * (throws witness_request_malformed when the checkpoint is not a note
 * holding a checkpoint).
 */
export function requestOrigin(req: AddCheckpointRequest): string {
  try {
    return parseCheckpoint(parseNote(req.checkpoint).text).origin;
  } catch (e) {
    throw bad(`the checkpoint is malformed: ${(e as Error).message}`, { cause: e instanceof TlogError ? e.code : 'unknown' });
  }
}

/** The witness's record for one origin: its latest cosigned checkpoint. */
export interface WitnessState {
  readonly size: number;
  readonly rootHash: Uint8Array;
}

/** The witness's answer to add-checkpoint. */
export type AddCheckpointDecision =
  | { readonly ok: true; readonly checkpoint: Checkpoint; readonly text: string; readonly note: VerifiedNote }
  | {
      readonly ok: false;
      /** The HTTP status the spec requires. */
      readonly status: 400 | 403 | 404 | 409 | 422;
      /** A fixed reason code (the TlogError code that caused it, or one of the witness_* codes below). */
      readonly code: string;
      readonly message: string;
      /** For 409: the size of the latest cosigned checkpoint (the body is `${size}\n`, text/x.tlog.size). */
      readonly size?: number;
    };

/**
 * Decide an add-checkpoint request, in the order the spec gives:
 * unknown origin (`logKeys` null or empty) 404 witness_unknown_origin;
 * malformed checkpoint 400; no trusted log signature or a bad one 403;
 * old size above the checkpoint size 400 witness_old_size_too_large; old size
 * not the witness's latest size (0 when `latest` is null) 409 with `size`;
 * a size-0 checkpoint without the empty-tree root 422; a non-empty proof
 * from size 0, different roots at equal sizes, or a consistency proof that
 * does not verify 422. `ok` means: cosign `text` (then persist, then answer).
 */
export function checkAddCheckpoint(req: AddCheckpointRequest, logKeys: readonly NoteVerifier[] | null, latest: WitnessState | null): AddCheckpointDecision {
  const fail = (status: 400 | 403 | 404 | 409 | 422, code: string, message: string, size?: number): AddCheckpointDecision =>
    size === undefined ? { ok: false, status, code, message } : { ok: false, status, code, message, size };
  let origin: string;
  try {
    origin = requestOrigin(req);
  } catch (e) {
    return fail(400, 'witness_request_malformed', (e as Error).message);
  }
  if (!logKeys || logKeys.length === 0) return fail(404, 'witness_unknown_origin', `unknown log origin ${origin.slice(0, 200)}`);
  let note: VerifiedNote;
  try {
    note = verifyNote(req.checkpoint, logKeys);
  } catch (e) {
    if (e instanceof TlogError) return fail(403, e.code, e.message);
    throw e;
  }
  const checkpoint = parseCheckpoint(note.text);
  if (req.oldSize > checkpoint.size) return fail(400, 'witness_old_size_too_large', `old size ${req.oldSize} is above the checkpoint size ${checkpoint.size}`);
  const current = latest ? latest.size : 0;
  if (req.oldSize !== current) return fail(409, 'witness_old_size_mismatch', `the latest cosigned size is ${current}`, current);
  if (checkpoint.size === 0 && !checkpoint.rootHash.equals(EMPTY_ROOT)) return fail(422, 'root_mismatch', 'a checkpoint of size 0 must have the empty-tree root');
  if (req.oldSize === 0) {
    if (req.proof.length !== 0) return fail(422, 'proof_wrong_length', 'the consistency proof from size 0 must be empty');
  } else {
    try {
      verifyConsistency(req.oldSize, checkpoint.size, req.proof, (latest as WitnessState).rootHash, checkpoint.rootHash);
    } catch (e) {
      if (e instanceof TlogError) return fail(422, e.code, e.message);
      throw e;
    }
  }
  return { ok: true, checkpoint, text: note.text, note };
}

/** The 409 body: the latest cosigned size in decimal and a newline (Content-Type text/x.tlog.size). */
export function formatSizeBody(size: number): string {
  return `${size}\n`;
}

/** Parse a 409 body (client side); throws witness_request_malformed. */
export function parseSizeBody(body: string): number {
  const m = /^(0|[1-9][0-9]*)\n$/.exec(body);
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw bad('a size body is a decimal and a newline');
  return Number(m[1]);
}

/** The 200 body: signature lines, each ending in a newline. */
export function formatCosignatureBody(lines: readonly string[]): string {
  return lines.map((l) => l + '\n').join('');
}

/** The monitoring path element for an origin: lowercase hex SHA-256 of the origin. */
export function originHash(origin: string): string {
  return hash('sha256', origin, 'hex');
}
