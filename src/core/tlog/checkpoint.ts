/**
 * Checkpoints (c2sp.org/tlog-checkpoint, "Note text"): the text of a signed
 * note made of an origin line, the tree size in decimal (no leading zeros),
 * the base64 RFC 6962 root hash, and optional non-empty extension lines,
 * each line ending in a newline.
 */
import { decodeStrictBase64 } from '../aer1/base64';
import { TlogError } from './errors';
import { HASH_SIZE } from './merkle';
import { NoteVerifier } from './keys';
import { checkNoteText, verifyNote, VerifiedNote } from './note';

/** A checkpoint body. */
export interface Checkpoint {
  /** The log identity, e.g. `example.com/log42`. */
  readonly origin: string;
  /** Number of leaves. */
  readonly size: number;
  /** The 32-byte RFC 6962 root of the first `size` leaves. */
  readonly rootHash: Buffer;
  /** Opaque extension lines (not recommended; each non-empty). */
  readonly extensions: readonly string[];
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * Parse a checkpoint note text (the text of a signed note, ending in a
 * newline, without the signatures). Strict: at least three lines, no empty
 * line, size decimal without leading zeros and at most 2^53 - 1, root strict
 * base64 of 32 bytes. Throws a TlogError: checkpoint_malformed,
 * checkpoint_origin_invalid, checkpoint_size_invalid,
 * checkpoint_root_invalid, checkpoint_extension_invalid.
 */
export function parseCheckpoint(text: string): Checkpoint {
  if (typeof text !== 'string') throw new TlogError('checkpoint_malformed', 'a checkpoint is text', {});
  try {
    checkNoteText(text);
  } catch (e) {
    throw new TlogError('checkpoint_malformed', `not a note text: ${(e as Error).message}`, {});
  }
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new TlogError('checkpoint_malformed', 'a checkpoint has at least three lines', { lines: lines.length });
  const [origin, sizeLine, rootLine, ...extensions] = lines;
  if (origin.length === 0) throw new TlogError('checkpoint_origin_invalid', 'the origin line is empty', {});
  if (!DECIMAL.test(sizeLine)) throw new TlogError('checkpoint_size_invalid', 'the size line is not a decimal without leading zeros', { size: sizeLine.slice(0, 40) });
  const size = Number(sizeLine);
  if (!Number.isSafeInteger(size)) throw new TlogError('checkpoint_size_invalid', 'the tree size is larger than 2^53 - 1', { size: sizeLine.slice(0, 40) });
  const rootHash = decodeStrictBase64(rootLine);
  if (rootHash === null || rootHash.length !== HASH_SIZE) throw new TlogError('checkpoint_root_invalid', 'the root line is not base64 of 32 bytes', {});
  extensions.forEach((e, i) => {
    if (e.length === 0) throw new TlogError('checkpoint_extension_invalid', `extension line ${i + 1} is empty`, { line: 4 + i });
  });
  return { origin, size, rootHash, extensions };
}

/**
 * The note text of a checkpoint: `<origin>\n<size>\n<base64 root>\n` then
 * each extension line and a newline. Refuses values that would not parse back.
 */
export function checkpointNoteText(cp: Checkpoint): string {
  if (typeof cp.origin !== 'string' || cp.origin.length === 0 || cp.origin.includes('\n')) throw new TlogError('checkpoint_origin_invalid', 'the origin is a non-empty line', {});
  if (!Number.isSafeInteger(cp.size) || cp.size < 0) throw new TlogError('checkpoint_size_invalid', 'the size is a non-negative safe integer', { size: String(cp.size) });
  if (!(cp.rootHash instanceof Uint8Array) || cp.rootHash.length !== HASH_SIZE) throw new TlogError('checkpoint_root_invalid', 'the root hash is 32 bytes', {});
  const ext = cp.extensions ?? [];
  for (const e of ext) if (typeof e !== 'string' || e.length === 0 || e.includes('\n')) throw new TlogError('checkpoint_extension_invalid', 'extension lines are non-empty single lines', {});
  const text = `${cp.origin}\n${cp.size}\n${Buffer.from(cp.rootHash).toString('base64')}\n${ext.map((e) => e + '\n').join('')}`;
  parseCheckpoint(text); // control characters and the like are refused here too
  return text;
}

/** A checkpoint whose note verified. */
export interface VerifiedCheckpoint {
  readonly checkpoint: Checkpoint;
  readonly note: VerifiedNote;
}

/**
 * Verify a signed checkpoint: the note verifies with `logVerifiers` (see
 * verifyNote; pass the log's own keys only, so that the log's signature is
 * required: other lines, such as witness cosignatures, are then ignored and
 * checked with verifyCosignatures), its text parses as a checkpoint, and,
 * when `origin` is given, the origin line equals it
 * (checkpoint_origin_mismatch otherwise).
 */
export function verifyCheckpoint(note: string | Uint8Array, logVerifiers: readonly NoteVerifier[], origin?: string): VerifiedCheckpoint {
  const verified = verifyNote(note, logVerifiers);
  const checkpoint = parseCheckpoint(verified.text);
  if (origin !== undefined && checkpoint.origin !== origin) {
    throw new TlogError('checkpoint_origin_mismatch', 'the checkpoint origin is not the expected log', { expected: origin.slice(0, 200), actual: checkpoint.origin.slice(0, 200) });
  }
  return { checkpoint, note: verified };
}
