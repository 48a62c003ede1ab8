/**
 * Signed notes (c2sp.org/signed-note, "Format" and "Signatures"): a text
 * ending in a newline, a blank line, then one or more lines
 * `— <key name> <base64(4-byte key ID || signature)>`.
 *
 * Parsing is strict: valid UTF-8, no control characters except U+000A (so
 * no CR), the signature block separated by the LAST blank line, each
 * signature line exactly `—`, space, a valid name, space, strict base64,
 * newline; at most {@link MAX_NOTE_SIGNATURES} signatures and
 * {@link MAX_NOTE_BYTES} bytes. Verification: signatures from unknown keys
 * (name and key ID not both matching a trusted key) are ignored; a known key
 * whose signature fails rejects the whole note; at least one known key must
 * verify.
 */
import { isValidKeyName, keyIdHex, NoteSigner, NoteVerifier } from './keys';
import { decodeStrictBase64 } from '../aer1/base64';
import { TlogError } from './errors';

/** Signatures accepted in one note (the spec requires at least 16). */
export const MAX_NOTE_SIGNATURES = 100;
/** Largest note accepted, in UTF-8 bytes. */
export const MAX_NOTE_BYTES = 1024 * 1024;

const EM_DASH_SPACE = '\u2014 ';
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** One signature line. */
export interface NoteSignature {
  readonly name: string;
  /** The uint32 key ID (first 4 bytes). */
  readonly keyId: number;
  /** The signature bytes after the key ID. */
  readonly signature: Buffer;
  /** The line as it appeared, without its newline. */
  readonly line: string;
}

/** A parsed (not yet verified) note. */
export interface ParsedNote {
  /** The note text, ending in `\n` (the text that was signed). */
  readonly text: string;
  readonly signatures: readonly NoteSignature[];
}

/** A signature that verified with a trusted key. */
export interface VerifiedSignature extends NoteSignature {
  readonly verifier: NoteVerifier;
  /** The cosignature timestamp (type 0x04). */
  readonly timestamp?: number;
}

/** A verified note: its text may now be used. */
export interface VerifiedNote extends ParsedNote {
  /** Signatures by trusted keys, all valid (at least one). */
  readonly verified: readonly VerifiedSignature[];
  /** Signatures by unknown keys, ignored. */
  readonly unknown: readonly NoteSignature[];
}

function checkCharacters(s: string, what: 'note' | 'text'): void {
  if (/\p{Cs}/u.test(s)) throw new TlogError('note_not_utf8', `the ${what} is not valid Unicode (lone surrogate)`, {});
  // eslint-disable-next-line no-control-regex
  const m = /[\u0000-\u0009\u000b-\u001f]/.exec(s);
  if (m) throw new TlogError('note_control_character', `the ${what} holds control character U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')}`, { position: m.index, char: m[0].charCodeAt(0) });
}

/**
 * Parse a signed note from UTF-8 bytes or a string. Throws a TlogError:
 * note_too_large, note_not_utf8, note_control_character,
 * note_no_signature_block, note_missing_final_newline,
 * note_too_many_signatures, note_signature_line_malformed,
 * note_key_name_invalid.
 */
export function parseNote(note: string | Uint8Array): ParsedNote {
  let s: string;
  if (typeof note === 'string') {
    if (note.length > MAX_NOTE_BYTES || Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES) throw new TlogError('note_too_large', `a note is at most ${MAX_NOTE_BYTES} bytes`, {});
    s = note;
  } else if (note instanceof Uint8Array) {
    if (note.length > MAX_NOTE_BYTES) throw new TlogError('note_too_large', `a note is at most ${MAX_NOTE_BYTES} bytes`, { bytes: note.length });
    try {
      s = utf8.decode(note);
    } catch (_) {
      throw new TlogError('note_not_utf8', 'the note is not valid UTF-8', {});
    }
  } else {
    throw new TlogError('note_signature_line_malformed', 'a note is a string or bytes', {});
  }
  checkCharacters(s, 'note');
  const split = s.lastIndexOf('\n\n');
  if (split < 0) throw new TlogError('note_no_signature_block', 'no blank line separates the text from the signatures', {});
  const text = s.slice(0, split + 1);
  const block = s.slice(split + 2);
  if (block.length === 0) throw new TlogError('note_no_signature_block', 'the note has no signature lines', {});
  if (!block.endsWith('\n')) throw new TlogError('note_missing_final_newline', 'the last signature line does not end in a newline', {});
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES) throw new TlogError('note_too_many_signatures', `a note has at most ${MAX_NOTE_SIGNATURES} signatures`, { count: lines.length });
  const signatures = lines.map((line, i): NoteSignature => {
    if (!line.startsWith(EM_DASH_SPACE)) throw new TlogError('note_signature_line_malformed', `signature line ${i + 1} does not start with an em dash and a space`, { line: i + 1 });
    const rest = line.slice(EM_DASH_SPACE.length);
    const sp = rest.indexOf(' ');
    if (sp < 0) throw new TlogError('note_signature_line_malformed', `signature line ${i + 1} has no signature after the key name`, { line: i + 1 });
    const name = rest.slice(0, sp);
    if (!isValidKeyName(name)) throw new TlogError('note_key_name_invalid', `signature line ${i + 1} has an invalid key name`, { line: i + 1 });
    const bytes = decodeStrictBase64(rest.slice(sp + 1));
    if (bytes === null || bytes.length < 5) throw new TlogError('note_signature_line_malformed', `signature line ${i + 1} is not base64 of a key ID and a signature`, { line: i + 1, name });
    return { name, keyId: bytes.readUInt32BE(0), signature: bytes.subarray(4), line };
  });
  return { text, signatures };
}

/**
 * Parse and verify a note with trusted keys. Returns the verified note, or
 * throws a TlogError: the {@link parseNote} codes, note_signature_invalid
 * (a trusted key's signature fails; details name and key_id) or
 * note_no_trusted_signature. A repeated (name, key ID) line is checked once
 * (the first), like Go's note.Open.
 */
export function verifyNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): VerifiedNote {
  const parsed = parseNote(note);
  const textBytes = Buffer.from(parsed.text, 'utf8');
  const verified: VerifiedSignature[] = [];
  const unknown: NoteSignature[] = [];
  const seen = new Set<string>();
  for (const sig of parsed.signatures) {
    const key = `${sig.name}+${sig.keyId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const v = verifiers.find((x) => x.name === sig.name && x.keyId === sig.keyId);
    if (!v) {
      unknown.push(sig);
      continue;
    }
    const r = v.verify(textBytes, sig.signature);
    if (!r.ok) throw new TlogError('note_signature_invalid', `the signature by ${sig.name} (key ${keyIdHex(sig.keyId)}) does not verify`, { name: sig.name, key_id: keyIdHex(sig.keyId) });
    verified.push(r.timestamp === undefined ? { ...sig, verifier: v } : { ...sig, verifier: v, timestamp: r.timestamp });
  }
  if (verified.length === 0) throw new TlogError('note_no_trusted_signature', 'no signature by a trusted key', { names: parsed.signatures.map((s) => s.name).slice(0, 16) });
  return { ...parsed, verified, unknown };
}

/** Check that `text` can be a note text: ends in a newline, valid Unicode, no control characters but newline (throws note_text_invalid). */
export function checkNoteText(text: string): void {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new TlogError('note_text_invalid', 'a note text ends in a newline', {});
  try {
    checkCharacters(text, 'text');
  } catch (e) {
    throw new TlogError('note_text_invalid', (e as Error).message, {});
  }
}

/** The signature line `— <name> base64(keyID || signature)` (without newline). */
export function signatureLine(name: string, keyId: number, signature: Uint8Array): string {
  const id = Buffer.alloc(4);
  id.writeUInt32BE(keyId >>> 0);
  return `${EM_DASH_SPACE}${name} ${Buffer.concat([id, signature]).toString('base64')}`;
}

/** Sign `text` with one signer: its signature line. `timestamp` is needed by type 0x04 signers only. */
export function signLine(text: string, signer: NoteSigner, timestamp?: number): string {
  checkNoteText(text);
  return signatureLine(signer.name, signer.keyId, signer.sign(Buffer.from(text, 'utf8'), timestamp));
}

/** A signed note: `text`, a blank line, one signature line per signer (in order). */
export function signNote(text: string, signers: readonly NoteSigner[], timestamp?: number): string {
  checkNoteText(text);
  if (signers.length === 0) throw new TlogError('note_text_invalid', 'a note needs at least one signer', {});
  return `${text}\n${signers.map((s) => signLine(text, s, timestamp) + '\n').join('')}`;
}

/**
 * `note` with more signature lines appended (e.g. witness cosignatures),
 * skipping lines already present. The note is parsed (not verified) first.
 */
export function addSignatureLines(note: string, lines: readonly string[]): string {
  const parsed = parseNote(note);
  const have = new Set(parsed.signatures.map((s) => s.line));
  const add: string[] = [];
  for (const l of lines) {
    if (have.has(l)) continue;
    have.add(l);
    add.push(l);
  }
  const out = note + add.map((l) => l + '\n').join('');
  parseNote(out); // the added lines must be well-formed too
  return out;
}
