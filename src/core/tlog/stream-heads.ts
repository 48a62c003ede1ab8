/**
 * Stream-heads statements (issue 30, "Signed stream heads"): a C2SP signed
 * note (c2sp.org/signed-note) signed with the log's key, saying which event
 * was the newest of each named stream as of one checkpoint. Its text:
 *
 * ```
 * <origin>
 * aer1-stream-heads/1
 * <checkpoint size>
 * <base64 checkpoint root>
 * <stream id> <head position> <head event hash>     one line per stream,
 * <stream id> 0                                      0 and no hash: no event yet
 * ```
 *
 * Line 2 is not a decimal, so no checkpoint parser (c2sp.org/tlog-checkpoint:
 * line 2 is the tree size) accepts a statement, and this parser accepts no
 * checkpoint. The head event hash is the event's `event_hash`: lowercase hex
 * SHA-256 of its leaf bytes. The position is the ledger position (leaf
 * index + 1), at most the size.
 *
 * Stream ids are written percent-encoded over their UTF-8 bytes: bytes
 * U+0021..U+007E other than `%` stand for themselves; every other byte
 * (controls, space, `%`, DEL and every byte of a non-ASCII character) is
 * `%` and two UPPERCASE hex digits. So a line is ASCII, holds exactly one or
 * two spaces, and each id has exactly one spelling: the parser refuses
 * lowercase hex, an escape of a byte that stands for itself, bytes that are
 * not UTF-8, an empty id and ids over {@link MAX_STREAM_ID_BYTES} bytes.
 * Lines are sorted by the encoded id in byte (ASCII) order, each id once;
 * at most {@link MAX_STREAM_HEADS} lines, and at least one.
 */
import { decodeStrictBase64 } from '../aer1/base64';
import { TlogError } from './errors';
import { NoteSigner, NoteVerifier } from './keys';
import { HASH_SIZE } from './merkle';
import { checkNoteText, MAX_NOTE_BYTES, signNote, verifyNote, VerifiedNote } from './note';

/** Line 2 of every statement. */
export const STREAM_HEADS_FORMAT = 'aer1-stream-heads/1';
/** Streams one statement names at most (a larger subject takes several statements). */
export const MAX_STREAM_HEADS = 5000;
/** The longest stream id, in UTF-8 bytes (identifiers are at most 200 code points, 800 bytes, plus a prefix). */
export const MAX_STREAM_ID_BYTES = 1024;
/** Note text a statement may take: the note limit less room for 16 signature lines. */
export const MAX_STREAM_HEADS_TEXT_BYTES = MAX_NOTE_BYTES - 16 * 200;

/** One stream's head: `position` 0 and `eventHash` null when it has no event as of the size. */
export interface StreamHead {
  readonly streamId: string;
  readonly position: number;
  /** Lowercase hex SHA-256 of the head's leaf (its `event_hash`); null with position 0. */
  readonly eventHash: string | null;
}

/** A statement's content. */
export interface StreamHeads {
  readonly origin: string;
  /** The checkpoint size the heads are as of. */
  readonly size: number;
  /** The 32-byte root of that checkpoint. */
  readonly rootHash: Buffer;
  /** Sorted by encoded stream id (see the module comment). */
  readonly heads: readonly StreamHead[];
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const HEX64 = /^[0-9a-f]{64}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function raw(b: number): boolean {
  return b >= 0x21 && b <= 0x7e && b !== 0x25;
}

/** The encoded form of a stream id (see the module comment). Throws `heads_stream_id_invalid` for an empty, too long or not well-formed id. */
export function encodeStreamId(id: string): string {
  if (typeof id !== 'string' || id.length === 0) throw new TlogError('heads_stream_id_invalid', 'a stream id is a non-empty string', {});
  if (/\p{Cs}/u.test(id)) throw new TlogError('heads_stream_id_invalid', 'a stream id holds a lone surrogate (not UTF-8)', {});
  const bytes = Buffer.from(id, 'utf8');
  if (bytes.length > MAX_STREAM_ID_BYTES) throw new TlogError('heads_stream_id_invalid', `a stream id is at most ${MAX_STREAM_ID_BYTES} UTF-8 bytes`, { bytes: bytes.length });
  let out = '';
  for (const b of bytes) out += raw(b) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  return out;
}

/** The stream id an encoded form stands for; throws `heads_stream_id_invalid` unless `s` is the one canonical encoding of a UTF-8 id. */
export function decodeStreamId(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new TlogError('heads_stream_id_invalid', 'a % in a stream id is followed by two uppercase hex digits', { at: i });
      const b = parseInt(hex, 16);
      if (raw(b)) throw new TlogError('heads_stream_id_invalid', `%${hex} escapes a character that is written as itself`, { at: i });
      bytes.push(b);
      i += 2;
    } else if (c <= 0x7f && raw(c)) bytes.push(c);
    else throw new TlogError('heads_stream_id_invalid', 'a stream id is written in printable ASCII (other bytes are %XX)', { at: i });
  }
  if (bytes.length === 0) throw new TlogError('heads_stream_id_invalid', 'a stream id is non-empty', {});
  if (bytes.length > MAX_STREAM_ID_BYTES) throw new TlogError('heads_stream_id_invalid', `a stream id is at most ${MAX_STREAM_ID_BYTES} UTF-8 bytes`, { bytes: bytes.length });
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw new TlogError('heads_stream_id_invalid', 'a stream id is not UTF-8', {});
  }
}

/**
 * The note text of a statement. Heads may come in any order (they are
 * sorted here); throws a TlogError (`heads_origin_invalid`,
 * `heads_size_invalid`, `heads_root_invalid`, `heads_stream_id_invalid`,
 * `heads_position_invalid`, `heads_hash_invalid`, `heads_duplicate_stream`,
 * `heads_too_many`, `heads_malformed`) for what {@link parseStreamHeads} would refuse.
 */
export function formatStreamHeads(s: StreamHeads): string {
  if (typeof s.origin !== 'string' || s.origin.length === 0 || /[\n]/.test(s.origin)) throw new TlogError('heads_origin_invalid', 'the origin is a non-empty line', {});
  if (!Number.isSafeInteger(s.size) || s.size < 0) throw new TlogError('heads_size_invalid', 'the size is a non-negative safe integer', { size: String(s.size) });
  if (!(s.rootHash instanceof Uint8Array) || s.rootHash.length !== HASH_SIZE) throw new TlogError('heads_root_invalid', 'the root is 32 bytes', {});
  if (!Array.isArray(s.heads) || s.heads.length === 0) throw new TlogError('heads_malformed', 'a statement names at least one stream', {});
  if (s.heads.length > MAX_STREAM_HEADS) throw new TlogError('heads_too_many', `a statement names at most ${MAX_STREAM_HEADS} streams`, { count: s.heads.length });
  const lines = s.heads.map((h) => [encodeStreamId(h.streamId), headFields(h, s.size)] as const);
  lines.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (let i = 1; i < lines.length; i++) if (lines[i][0] === lines[i - 1][0]) throw new TlogError('heads_duplicate_stream', 'a stream is named twice', { stream: lines[i][0].slice(0, 200) });
  const text = `${s.origin}\n${STREAM_HEADS_FORMAT}\n${s.size}\n${Buffer.from(s.rootHash).toString('base64')}\n${lines.map(([id, f]) => `${id} ${f}\n`).join('')}`;
  if (Buffer.byteLength(text, 'utf8') > MAX_STREAM_HEADS_TEXT_BYTES) throw new TlogError('heads_too_many', `the statement is larger than ${MAX_STREAM_HEADS_TEXT_BYTES} bytes: split its streams over several statements`, {});
  parseStreamHeads(text); // controls in the origin and the like are refused here too
  return text;
}

function headFields(h: StreamHead, size: number): string {
  if (!Number.isSafeInteger(h.position) || h.position < 0 || h.position > size) throw new TlogError('heads_position_invalid', 'a head position is 0..size', { position: String(h.position), size });
  if (h.position === 0) {
    if (h.eventHash !== null) throw new TlogError('heads_hash_invalid', 'a stream with no event (position 0) has no hash', {});
    return '0';
  }
  if (typeof h.eventHash !== 'string' || !HEX64.test(h.eventHash)) throw new TlogError('heads_hash_invalid', 'a head event hash is 64 lowercase hex digits', { position: h.position });
  return `${h.position} ${h.eventHash}`;
}

/**
 * Parse a statement's note text (without signatures; see
 * {@link verifyStreamHeads} for a signed note). Strict: the exact layout of
 * the module comment, nothing else. Throws a TlogError: `heads_malformed`
 * (not a note text, too few lines, an empty line), `heads_not_a_statement`
 * (line 2 is not `aer1-stream-heads/1`: a checkpoint, say),
 * `heads_origin_invalid`, `heads_size_invalid`, `heads_root_invalid`,
 * `heads_line_malformed`, `heads_stream_id_invalid`,
 * `heads_position_invalid`, `heads_hash_invalid`, `heads_not_sorted`,
 * `heads_duplicate_stream`, `heads_too_many`.
 */
export function parseStreamHeads(text: string): StreamHeads {
  if (typeof text !== 'string') throw new TlogError('heads_malformed', 'a statement is text', {});
  try {
    checkNoteText(text);
  } catch (e) {
    throw new TlogError('heads_malformed', `not a note text: ${(e as Error).message}`, {});
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_STREAM_HEADS_TEXT_BYTES) throw new TlogError('heads_too_many', `a statement is at most ${MAX_STREAM_HEADS_TEXT_BYTES} bytes`, {});
  const lines = text.slice(0, -1).split('\n');
  if (lines.length >= 2 && lines[1] !== STREAM_HEADS_FORMAT) throw new TlogError('heads_not_a_statement', `line 2 is not ${STREAM_HEADS_FORMAT}`, { line2: lines[1].slice(0, 40) });
  if (lines.length < 5) throw new TlogError('heads_malformed', 'a statement has an origin, its format, a size, a root and at least one stream line', { lines: lines.length });
  const [origin, , sizeLine, rootLine, ...streamLines] = lines;
  if (origin.length === 0) throw new TlogError('heads_origin_invalid', 'the origin line is empty', {});
  if (!DECIMAL.test(sizeLine) || !Number.isSafeInteger(Number(sizeLine))) throw new TlogError('heads_size_invalid', 'the size line is a decimal without leading zeros, at most 2^53 - 1', { size: sizeLine.slice(0, 40) });
  const size = Number(sizeLine);
  const rootHash = decodeStrictBase64(rootLine);
  if (rootHash === null || rootHash.length !== HASH_SIZE) throw new TlogError('heads_root_invalid', 'the root line is not base64 of 32 bytes', {});
  if (streamLines.length > MAX_STREAM_HEADS) throw new TlogError('heads_too_many', `a statement names at most ${MAX_STREAM_HEADS} streams`, { count: streamLines.length });
  const heads: StreamHead[] = [];
  let prev: string | null = null;
  streamLines.forEach((l, i) => {
    const line = 5 + i;
    const f = l.split(' ');
    if (!(f.length === 2 && f[1] === '0') && f.length !== 3) throw new TlogError('heads_line_malformed', `line ${line} is not "<stream id> <position> <hash>" or "<stream id> 0"`, { line });
    const streamId = decodeStreamId(f[0]);
    if (prev !== null && f[0] <= prev) throw new TlogError(f[0] === prev ? 'heads_duplicate_stream' : 'heads_not_sorted', f[0] === prev ? `line ${line} names a stream already named` : `line ${line} is out of order (lines are sorted by encoded stream id)`, { line });
    prev = f[0];
    if (f.length === 2) {
      heads.push({ streamId, position: 0, eventHash: null });
      return;
    }
    if (!DECIMAL.test(f[1]) || f[1] === '0') throw new TlogError('heads_position_invalid', `line ${line}: a head with a hash has a position from 1, without leading zeros`, { line });
    const position = Number(f[1]);
    if (!Number.isSafeInteger(position) || position > size) throw new TlogError('heads_position_invalid', `line ${line}: head position ${f[1].slice(0, 20)} is beyond the size ${size}`, { line, size });
    if (!HEX64.test(f[2])) throw new TlogError('heads_hash_invalid', `line ${line}: the head event hash is not 64 lowercase hex digits`, { line });
    heads.push({ streamId, position, eventHash: f[2] });
  });
  return { origin, size, rootHash, heads };
}

/** A statement whose note verified. */
export interface VerifiedStreamHeads {
  readonly statement: StreamHeads;
  readonly note: VerifiedNote;
}

/**
 * Verify a signed statement: the note verifies with `logVerifiers` (the log's
 * key; see verifyNote: a statement signed by another key only is
 * `note_no_trusted_signature`), its text parses ({@link parseStreamHeads}),
 * and, when `origin` is given, its origin equals it (`heads_origin_mismatch`).
 */
export function verifyStreamHeads(note: string | Uint8Array, logVerifiers: readonly NoteVerifier[], origin?: string): VerifiedStreamHeads {
  const verified = verifyNote(note, logVerifiers);
  const statement = parseStreamHeads(verified.text);
  if (origin !== undefined && statement.origin !== origin) {
    throw new TlogError('heads_origin_mismatch', 'the statement origin is not the expected log', { expected: origin.slice(0, 200), actual: statement.origin.slice(0, 200) });
  }
  return { statement, note: verified };
}

/** The signed note of a statement, signed by `signer` (the log key; its name should be the origin). */
export function signStreamHeads(s: StreamHeads, signer: NoteSigner): string {
  return signNote(formatStreamHeads(s), [signer]);
}
