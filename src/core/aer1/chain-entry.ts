/**
 * Entry checks (S7.1, S7.2): the members of one timeline entry, each failure
 * recorded on the run's findings (and on the entry's outcome when entries
 * are collected). Links between entries are checked by the verifier.
 */
import { sha256HexOfStrictBase64 } from './base64';
import { describe, has, isNonEmptyString, JsonObject } from './result';
import type { ReasonCode } from './reasons';
import type { RunFindings } from './chain-state';

/** What one entry recomputes to; null members could not be computed. */
export interface EntryOutcome {
  /** 0-based position in the timeline. */
  index: number;
  seq: number | null;
  /** The -07 entry digest (S7.1), when every bound member is well-formed. */
  entry_digest: string | null;
  /** Bare hex SHA-256 of the decoded canonical bytes (also the -06 digest). */
  output_hash: string | null;
  /** Reason codes found on this entry alone (member and format checks). */
  reasons: ReasonCode[];
}

/** The members of the entry being checked, as the checks found them (one object per verifier, reused for every entry). */
export interface EntryMembers {
  seq: number | null;
  close: boolean;
  /** Bare hex SHA-256 of the decoded canonical bytes; null when they are absent or not strict base64. */
  bytesHash: string | null;
  /** Every member the digest binds is present and well-formed. */
  wellFormed: boolean;
}

const REQUIRED_STRINGS = ['job_id', 'id', 'tool', 'provenance_class'] as const;

/** Every member name an entry may carry (S7.1, S7.2). */
const ENTRY_MEMBERS = ['seq', 'job_id', 'id', 'tool', 'provenance_class', 'prev_digest', 'canonical_bytes', 'close'];

/** Object.prototype defines none of the entry's member names (a verifier checks it once, when made). */
export function prototypeIsPlain(): boolean {
  return ENTRY_MEMBERS.every((k) => !(k in Object.prototype));
}

/** A reason code for the timeline and, when collecting, for the entry. */
export function reasonFor(run: RunFindings, code: ReasonCode, outcome: EntryOutcome | null): void {
  if (outcome && !outcome.reasons.includes(code)) outcome.reasons.push(code);
  run.findings.reason(code);
}

/**
 * The common case: every member present with the right type and strict
 * base64 bytes. Sets `into` and returns true; returns false, having
 * recorded nothing, when any member needs the full check
 * ({@link checkMembers}). `plainPrototype`: {@link prototypeIsPlain}.
 */
export function wellFormedMembers(e: JsonObject, into: EntryMembers, plainPrototype: boolean): boolean {
  const seq = e.seq;
  const close = e.close;
  if (
    typeof seq !== 'number' || !Number.isSafeInteger(seq) ||
    !isNonEmptyString(e.job_id) || !isNonEmptyString(e.id) || !isNonEmptyString(e.tool) || !isNonEmptyString(e.provenance_class) ||
    typeof e.prev_digest !== 'string' ||
    !(typeof close === 'boolean' || (close === undefined && !has(e, 'close'))) ||
    // Own members only, as the full check requires (never one inherited from a prototype).
    // A JSON.parse() object has Object.prototype, which defines none of these names.
    (!(Object.getPrototypeOf(e) === Object.prototype && plainPrototype) &&
      (!has(e, 'seq') || !has(e, 'job_id') || !has(e, 'id') || !has(e, 'tool') || !has(e, 'provenance_class') || !has(e, 'prev_digest') || !has(e, 'canonical_bytes')))
  ) {
    return false;
  }
  const bytesHash = sha256HexOfStrictBase64(e.canonical_bytes);
  if (bytesHash === null) return false;
  into.seq = seq;
  into.close = close === true;
  into.bytesHash = bytesHash;
  into.wellFormed = true;
  return true;
}

/** Every member check (S7.1, S7.2) of the entry at `index`, each failure recorded on `run`; sets `into`. */
export function checkMembers(e: JsonObject, index: number, run: RunFindings, outcome: EntryOutcome | null, into: EntryMembers): void {
  const where = `entry ${index + 1}`;
  const failures = run.failures;
  let wellFormed = true;

  // seq: a JSON number with an integer value; 1 and 1.0 are the same (S7.1).
  let seq: number | null = null;
  if (!has(e, 'seq')) {
    failures.members.add(`${where} lacks seq`);
    reasonFor(run, 'missing_field:seq', outcome);
    wellFormed = false;
  } else if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq)) {
    failures.seq.add(`${where} (${describe(e.seq)})`);
    reasonFor(run, 'invalid_seq', outcome);
    wellFormed = false;
  } else {
    seq = e.seq;
  }

  for (const name of REQUIRED_STRINGS) {
    if (!has(e, name)) {
      failures.members.add(`${where} lacks ${name}`);
      reasonFor(run, `missing_field:${name}`, outcome);
      wellFormed = false;
    } else if (!isNonEmptyString(e[name])) {
      failures.members.add(`${where} ${name} ${describe(e[name])}`);
      reasonFor(run, `invalid_field:${name}`, outcome);
      wellFormed = false;
    }
  }
  if (!has(e, 'prev_digest')) {
    failures.members.add(`${where} lacks prev_digest`);
    reasonFor(run, 'missing_field:prev_digest', outcome);
    wellFormed = false;
  } else if (typeof e.prev_digest !== 'string') {
    failures.members.add(`${where} prev_digest ${describe(e.prev_digest)}`);
    reasonFor(run, 'invalid_field:prev_digest', outcome);
    wellFormed = false;
  }

  let close = false;
  if (has(e, 'close')) {
    if (typeof e.close !== 'boolean') {
      failures.close.add(`${where} (${describe(e.close)})`);
      reasonFor(run, 'invalid_close', outcome);
      wellFormed = false;
    } else close = e.close;
  }

  let bytesHash: string | null = null;
  if (!has(e, 'canonical_bytes')) {
    failures.members.add(`${where} lacks canonical_bytes`);
    reasonFor(run, 'missing_field:canonical_bytes', outcome);
    wellFormed = false;
  } else {
    bytesHash = sha256HexOfStrictBase64(e.canonical_bytes);
    if (bytesHash === null) {
      // S7.1: fail closed, never skip or repair.
      failures.base64.add(where);
      reasonFor(run, 'invalid_base64', outcome);
      wellFormed = false;
    }
  }
  into.seq = seq;
  into.close = close;
  into.bytesHash = bytesHash;
  into.wellFormed = wellFormed;
}
