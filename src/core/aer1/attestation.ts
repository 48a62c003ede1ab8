/**
 * Who stands behind an endpoint commitment (issue 15; rev 09: "publication
 * is not independent observation"). A commitment is one of:
 *
 * - `ledger_issued`: the ledger's own commitment, issued when a timeline
 *   closes, a signed note by the log key;
 * - `attested_by`: posted with a signed note by a key the operator trusts
 *   for commitments (`TRUSTED_COMMITMENT_KEYS`), or given offline with
 *   `--trusted-key`;
 * - `self_asserted`: anything else. Witness metadata inside it (`witness`,
 *   `retrieved_from`, `retrieved_at`) is the poster's claim, never a fact.
 *
 * The commitment note (C2SP signed-note): its text is the commitment's
 * exact JSON text followed by one newline (`<json>\n`), then the blank line
 * and the signature lines. The commitment bytes are therefore exactly the
 * note text without its final newline: `aer1 verify --commitment` reads the
 * same file. A ledger-issued commitment's text is the canonical JSON of the
 * four members (sorted by name, no white space, S7.1 string escaping):
 * `{"entry_count":N,"final_entry_digest":"…","job_id":"…","published_at":"…"}`.
 *
 * Pure: no I/O. The ledger and the CLI call the same functions.
 */
import { NoteVerifier, parseNote, parseVerifierKey, SIG_ED25519, TlogError, verifyNote } from '../tlog';
import { writeJsonString } from './canonical-json';

/** The attestation of a commitment (see the module comment). */
export type AttestationKind = 'ledger_issued' | 'attested_by' | 'self_asserted';

/** What a ledger records beside a signed commitment: the note exactly as verified, and the keys whose signatures verified. */
export interface StoredAttestation {
  /** `ledger`: issued by this ledger with its log key; `witness`: posted with a trusted key's signature. */
  issued_by: 'ledger' | 'witness';
  /** The whole signed note (text, blank line, signature lines). */
  note: string;
  /** The keys whose signatures verified when it was recorded (vkeys). */
  keys: { name: string; vkey: string }[];
}

/** An attestation as judged now. */
export interface Attestation {
  kind: AttestationKind;
  /** `attested_by`: the trusted key names whose signatures verify; `ledger_issued`: the log's key name; else empty. */
  by: string[];
  /** One sentence: who stands behind the commitment. */
  detail: string;
  /** Why a stored signature no longer counts (the commitment is then `self_asserted`), else null. */
  problem: string | null;
}

/** What attestations are judged against: the log's vkey (null: this deployment has no log key) and the trusted commitment keys. */
export interface CommitmentTrust {
  log_vkey: string | null;
  trusted: readonly NoteVerifier[];
}

/** No key trusted: every commitment is self-asserted (offline without `--trusted-key`/`--log-vkey`). */
export const NO_TRUST: CommitmentTrust = Object.freeze({ log_vkey: null, trusted: [] });

/** The note text of a commitment: its exact JSON text and one newline. */
export function commitmentNoteText(commitmentText: string): string {
  return `${commitmentText}\n`;
}

/** The canonical JSON text of a ledger-issued commitment (members sorted, no white space). */
export function ledgerCommitmentText(c: { job_id: string; final_entry_digest: string; entry_count: number; published_at: string }): string {
  return `{"entry_count":${c.entry_count},"final_entry_digest":${writeJsonString(c.final_entry_digest)},"job_id":${writeJsonString(c.job_id)},"published_at":${writeJsonString(c.published_at)}}`;
}

/** The commitment text a note carries: its text without the final newline (throws TlogError when `note` is not a signed note). */
export function commitmentTextOfNote(note: string | Uint8Array): string {
  return parseNote(note).text.slice(0, -1);
}

/**
 * Parse trusted commitment keys: vkeys separated by commas or newlines, or
 * a JSON array of vkeys. Empty or absent: none. Throws an Error naming the
 * bad entry (a key name or type is never guessed).
 */
export function parseTrustedKeys(value: string | undefined | null): NoteVerifier[] {
  const s = (value ?? '').trim();
  if (s === '') return [];
  let list: unknown[];
  if (s.startsWith('[')) {
    try {
      list = JSON.parse(s) as unknown[];
    } catch (_) {
      throw new Error('TRUSTED_COMMITMENT_KEYS starts with [ but is not a JSON array of vkey strings');
    }
    if (!Array.isArray(list)) throw new Error('TRUSTED_COMMITMENT_KEYS is not a JSON array');
  } else {
    list = s.split(/[,\n]/).map((x) => x.trim()).filter((x) => x !== '');
  }
  const out: NoteVerifier[] = [];
  list.forEach((k, i) => {
    if (typeof k !== 'string') throw new Error(`TRUSTED_COMMITMENT_KEYS entry ${i + 1} is not a string`);
    let v: NoteVerifier;
    try {
      v = parseVerifierKey(k.trim());
    } catch (e) {
      throw new Error(`TRUSTED_COMMITMENT_KEYS entry ${i + 1} is not a verifier key <name>+<hex id>+<base64> (${(e as Error).message})`);
    }
    if (v.type !== SIG_ED25519) throw new Error(`TRUSTED_COMMITMENT_KEYS entry ${i + 1} (${v.name}) is a type 0x04 cosigning key: a commitment is signed as a plain Ed25519 note (type 0x01)`);
    out.push(v);
  });
  const names = out.map((v) => `${v.name}+${v.keyId}`);
  if (new Set(names).size !== names.length) throw new Error('TRUSTED_COMMITMENT_KEYS names one key twice');
  return out;
}

/** A refused attestation: `code` is the API error code. */
export class AttestationError extends Error {
  constructor(
    readonly code: 'invalid_attestation' | 'attestation_signature_invalid' | 'attestation_key_untrusted',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Check a commitment note posted by a client: its signatures against the
 * trusted keys (unknown keys ignored, a trusted key's bad signature refuses
 * the note, at least one trusted signature needed). Returns the commitment
 * text and what to store. Throws {@link AttestationError}.
 */
export function verifyCommitmentNote(note: string, trusted: readonly NoteVerifier[]): { text: string; stored: StoredAttestation } {
  let verified;
  try {
    verified = verifyNote(note, trusted);
  } catch (e) {
    if (!(e instanceof TlogError)) throw e;
    if (e.code === 'note_signature_invalid') throw new AttestationError('attestation_signature_invalid', `the attestation's signature does not verify: ${e.message}`);
    if (e.code === 'note_no_trusted_signature') {
      const names = (e.details as { names?: string[] }).names ?? [];
      throw new AttestationError('attestation_key_untrusted', `the attestation is not signed by a key in TRUSTED_COMMITMENT_KEYS (signed by ${names.length ? names.map((n) => JSON.stringify(n)).join(', ') : 'no key'})`);
    }
    throw new AttestationError('invalid_attestation', `the attestation is not a signed note: ${e.message}`);
  }
  return { text: verified.text.slice(0, -1), stored: { issued_by: 'witness', note, keys: verified.verified.map((s) => ({ name: s.name, vkey: s.verifier.vkey })) } };
}

/** A self-asserted attestation naming the key that posted it (null: unknown, e.g. offline). */
export function selfAsserted(postedBy: string | null, problem: string | null = null): Attestation {
  const who = postedBy === null ? 'whoever gave it' : `key ${JSON.stringify(postedBy)}`;
  return { kind: 'self_asserted', by: [], detail: `self-asserted: posted by ${who}, signed by no key trusted here; any witness it names is the poster's claim, not checked`, problem };
}

/**
 * Judge a recorded commitment's attestation now. The stored note must
 * still carry the recorded commitment text, and verify: a ledger-issued one
 * under the log key (the current one when this deployment has one, else the
 * key recorded with it), an attested one under a key that is trusted now
 * (a key removed from the trusted list no longer attests). Anything else is
 * `self_asserted`, with `problem` saying why a stored signature did not count.
 */
export function judgeAttestation(commitmentText: string, stored: StoredAttestation | null | undefined, trust: CommitmentTrust, postedBy: string | null): Attestation {
  if (!stored) return selfAsserted(postedBy);
  let text: string;
  try {
    text = commitmentTextOfNote(stored.note);
  } catch (e) {
    return selfAsserted(postedBy, `the stored note does not parse (${(e as Error).message})`);
  }
  if (text !== commitmentText) return selfAsserted(postedBy, 'the stored note carries another commitment text');
  if (stored.issued_by === 'ledger') {
    let verifiers: NoteVerifier[];
    try {
      verifiers = [parseVerifierKey(trust.log_vkey ?? stored.keys[0]?.vkey ?? '')];
    } catch (_) {
      return selfAsserted(postedBy, 'no log key to check the ledger-issued signature with');
    }
    try {
      verifyNote(stored.note, verifiers);
    } catch (e) {
      return selfAsserted(postedBy, `the ledger-issued signature does not verify under the log key (${(e as Error).message})`);
    }
    return { kind: 'ledger_issued', by: [verifiers[0].name], detail: `issued by this ledger when the timeline closed, signed with its log key ${verifiers[0].name}`, problem: null };
  }
  try {
    const v = verifyNote(stored.note, trust.trusted);
    const names = [...new Set(v.verified.map((s) => s.name))];
    return { kind: 'attested_by', by: names, detail: `attested by ${names.map((n) => JSON.stringify(n)).join(', ')}: a signature by a key trusted for commitments verifies`, problem: null };
  } catch (e) {
    const why = e instanceof TlogError && e.code === 'note_no_trusted_signature' ? 'its signing key is no longer trusted here' : `its signature does not verify (${(e as Error).message})`;
    return selfAsserted(postedBy, `recorded as attested, but ${why}`);
  }
}

/**
 * Judge a commitment given offline (a file): a signed note is checked
 * against `--log-vkey` (ledger_issued) and `--trusted-key` (attested_by);
 * a plain JSON commitment, or a note no given key verifies, is self-asserted.
 * Throws {@link AttestationError} when a given key's signature fails, a
 * TlogError when the note does not parse.
 */
export function judgeOfflineNote(note: string, trust: CommitmentTrust): Attestation {
  parseNote(note); // a malformed note is refused (TlogError), never read as self-asserted
  if (trust.log_vkey !== null) {
    const log = parseVerifierKey(trust.log_vkey);
    try {
      verifyNote(note, [log]);
      return { kind: 'ledger_issued', by: [log.name], detail: `issued by the ledger whose log key is ${log.name}: its signature verifies`, problem: null };
    } catch (e) {
      if (e instanceof TlogError && e.code === 'note_signature_invalid') throw new AttestationError('attestation_signature_invalid', `the log key's signature does not verify: ${e.message}`);
    }
  }
  if (trust.trusted.length > 0) {
    try {
      const v = verifyNote(note, trust.trusted);
      const names = [...new Set(v.verified.map((s) => s.name))];
      return { kind: 'attested_by', by: names, detail: `attested by ${names.map((n) => JSON.stringify(n)).join(', ')}: a signature by a given trusted key verifies`, problem: null };
    } catch (e) {
      if (e instanceof TlogError && e.code === 'note_signature_invalid') throw new AttestationError('attestation_signature_invalid', `a trusted key's signature does not verify: ${e.message}`);
    }
  }
  return selfAsserted(null, 'a signed note, but no signature by a key given with --log-vkey or --trusted-key');
}

/** A short label: `ledger-issued`, `attested by "k"`, `self-asserted`. */
export function attestationLabel(a: Pick<Attestation, 'kind' | 'by'>): string {
  if (a.kind === 'ledger_issued') return 'ledger-issued';
  if (a.kind === 'attested_by') return `attested by ${a.by.map((n) => JSON.stringify(n)).join(', ')}`;
  return 'self-asserted';
}
