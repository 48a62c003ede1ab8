/**
 * Proof files (c2sp.org/tlog-proof): a self-contained, offline-verifiable
 * proof that an entry is in a log.
 *
 *     c2sp.org/tlog-proof@v1
 *     extra <base64>            (optional, unauthenticated)
 *     index <decimal>
 *     <base64 hash>             (zero or more: the RFC 6962 inclusion proof)
 *     <empty line>
 *     <the checkpoint signed note, verbatim>
 *
 * Files SHOULD use the extension `.tlog-proof`.
 */
import { decodeStrictBase64 } from '../aer1/base64';
import { Checkpoint, verifyCheckpoint } from './checkpoint';
import { Cosignature, verifyCosignatures } from './cosignature';
import { TlogError } from './errors';
import { NoteVerifier } from './keys';
import { HASH_SIZE, verifyInclusion } from './merkle';
import { MAX_NOTE_BYTES, VerifiedNote } from './note';

export const PROOF_FILE_HEADER = 'c2sp.org/tlog-proof@v1';
/** Inclusion proof lines accepted (a tree below 2^63 leaves needs at most 63). */
export const MAX_PROOF_LINES = 63;

/** The parts of a proof file. */
export interface ProofFile {
  /** Opaque extra data (null when the line is absent). Not authenticated. */
  readonly extra: Buffer | null;
  /** Zero-based entry index. */
  readonly index: number;
  /** Inclusion proof hashes, from the leaf's sibling up. */
  readonly proof: readonly Buffer[];
  /** The checkpoint signed note, verbatim (text, blank line, signature lines). */
  readonly checkpoint: string;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function bad(message: string, details: Record<string, unknown> = {}): TlogError {
  return new TlogError('proof_file_malformed', message, details);
}

/**
 * Parse a proof file (string or UTF-8 bytes). Strict: the header line, an
 * optional `extra` line with non-empty strict base64, `index` without
 * leading zeros (at most 2^53 - 1), each proof line strict base64 of 32
 * bytes, then an empty line and the checkpoint note (checked when verified,
 * not here). Throws proof_file_malformed with the line number.
 */
export function parseProofFile(file: string | Uint8Array): ProofFile {
  let s: string;
  if (typeof file === 'string') s = file;
  else if (file instanceof Uint8Array) {
    try {
      s = utf8.decode(file);
    } catch (_) {
      throw bad('the proof file is not valid UTF-8');
    }
  } else throw bad('a proof file is text');
  if (s.length > MAX_NOTE_BYTES + 8192) throw bad('the proof file is too large');
  const end = s.indexOf('\n\n');
  if (end < 0) throw bad('no empty line before the checkpoint');
  const lines = s.slice(0, end).split('\n');
  const checkpoint = s.slice(end + 2);
  let i = 0;
  if (lines[i++] !== PROOF_FILE_HEADER) throw bad(`the first line is not ${PROOF_FILE_HEADER}`, { line: 1 });
  let extra: Buffer | null = null;
  if (lines[i]?.startsWith('extra ')) {
    extra = decodeStrictBase64(lines[i].slice(6));
    if (extra === null || extra.length === 0) throw bad('the extra line is not non-empty base64', { line: i + 1 });
    i++;
  }
  const indexLine = lines[i++];
  if (indexLine === undefined || !indexLine.startsWith('index ') || !DECIMAL.test(indexLine.slice(6))) throw bad('no index line (index <decimal without leading zeros>)', { line: i });
  const index = Number(indexLine.slice(6));
  if (!Number.isSafeInteger(index)) throw bad('the index is larger than 2^53 - 1', { line: i });
  const proofLines = lines.slice(i);
  if (proofLines.length > MAX_PROOF_LINES) throw bad(`more than ${MAX_PROOF_LINES} proof lines`, { count: proofLines.length });
  const proof = proofLines.map((l, j) => {
    const h = decodeStrictBase64(l);
    if (h === null || h.length !== HASH_SIZE) throw bad('a proof line is not base64 of a 32-byte hash', { line: i + j + 1 });
    return h;
  });
  if (checkpoint.length === 0) throw bad('no checkpoint after the empty line');
  return { extra, index, proof, checkpoint };
}

/** Format a proof file (the inverse of {@link parseProofFile}). */
export function formatProofFile(p: ProofFile): string {
  if (!Number.isSafeInteger(p.index) || p.index < 0) throw bad('the index is a non-negative safe integer');
  if (p.proof.length > MAX_PROOF_LINES || p.proof.some((h) => !(h instanceof Uint8Array) || h.length !== HASH_SIZE)) throw bad('proof hashes are 32 bytes, at most 63');
  if (p.extra !== null && p.extra.length === 0) throw bad('empty extra data is written by omitting the line');
  if (typeof p.checkpoint !== 'string' || p.checkpoint.length === 0) throw bad('the checkpoint note is missing');
  const lines = [PROOF_FILE_HEADER];
  if (p.extra !== null) lines.push(`extra ${p.extra.toString('base64')}`);
  lines.push(`index ${p.index}`);
  for (const h of p.proof) lines.push(Buffer.from(h).toString('base64'));
  return `${lines.join('\n')}\n\n${p.checkpoint}`;
}

/** What a verified proof file establishes. */
export interface VerifiedProofFile {
  readonly index: number;
  readonly extra: Buffer | null;
  readonly checkpoint: Checkpoint;
  readonly note: VerifiedNote;
  /** Valid cosignatures by the given witnesses (apply your k-of-n policy to these). */
  readonly cosignatures: readonly Cosignature[];
}

/**
 * Verify a proof file (tlog-proof, "Verifying a tlog proof"): the
 * checkpoint is signed by one of `logVerifiers` (and has `origin`, when
 * given), cosignatures by `witnesses` are checked, and the inclusion proof
 * binds `leafHash` (computed by the application: step 1) at the file's
 * index to the checkpoint root. Throws a TlogError from the step that failed
 * (proof_file_malformed, note_*, checkpoint_*, cosignature_invalid,
 * index_out_of_range, proof_wrong_length, root_mismatch, ...).
 */
export function verifyProofFile(
  file: string | Uint8Array,
  opts: { leafHash: Uint8Array; logVerifiers: readonly NoteVerifier[]; origin?: string; witnesses?: readonly NoteVerifier[] },
): VerifiedProofFile {
  const p = parseProofFile(file);
  const { checkpoint, note } = verifyCheckpoint(p.checkpoint, opts.logVerifiers, opts.origin);
  const cosignatures = opts.witnesses && opts.witnesses.length > 0 ? verifyCosignatures(p.checkpoint, opts.witnesses).cosignatures : [];
  verifyInclusion(p.index, checkpoint.size, opts.leafHash, p.proof, checkpoint.rootHash);
  return { index: p.index, extra: p.extra, checkpoint, note, cosignatures };
}
