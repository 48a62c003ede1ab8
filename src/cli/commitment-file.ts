/**
 * Reading an endpoint commitment file for `aer1 verify --commitment` and
 * `aer1 coverage --commitment`: a JSON commitment (or `{commitment, witness,
 * ...}`), or a signed note whose text is the commitment's JSON text and a
 * newline (the `note` of `GET /api/jobs/{id}/endpoint`, or a commitment a
 * witness signed). A note is checked against `--log-vkey` (then
 * `ledger_issued`) and `--trusted-key` (then `attested_by`); a plain JSON
 * file, or a note no given key signed, is `self_asserted`.
 */
import { Attestation, AttestationError, CommitmentTrust, commitmentTextOfNote, judgeOfflineNote, NO_TRUST, parseTrustedKeys, selfAsserted } from '../core/aer1/attestation';
import { parseVerifierKey, SIG_ED25519 } from '../core/tlog';
import { CliError } from './io';
import { Input, parseJsonBytes } from './input';
import type { CliIo } from './io';
import { refuseErrorAnswer } from './recognise';

/** A commitment file as read: the parsed document, the commitment's exact bytes, and who stands behind it. */
export interface CommitmentFile {
  value: unknown;
  /** The commitment JSON's bytes (for a note: its text without the final newline). */
  bytes: Buffer;
  attestation: Attestation;
}

/** The trust of `--log-vkey` and `--trusted-key` (throws CliError for a key that is not a type 0x01 vkey). */
export function trustFromOptions(logVkey: string | undefined, trustedKeys: string[] | undefined): CommitmentTrust {
  if (logVkey === undefined && (trustedKeys ?? []).length === 0) return NO_TRUST;
  if (logVkey !== undefined) {
    let v;
    try {
      v = parseVerifierKey(logVkey);
    } catch (e) {
      throw new CliError(`--log-vkey is not a verifier key <name>+<hex id>+<base64> (${(e as Error).message})`);
    }
    if (v.type !== SIG_ED25519) throw new CliError('--log-vkey must be the log\'s Ed25519 key (type 0x01), not a witness cosigning key');
  }
  let trusted;
  try {
    trusted = parseTrustedKeys(JSON.stringify(trustedKeys ?? []));
  } catch (e) {
    throw new CliError((e as Error).message.replace('TRUSTED_COMMITMENT_KEYS', '--trusted-key'));
  }
  return { log_vkey: logVkey ?? null, trusted };
}

/** Read one commitment file (see the module comment). CliError (exit 2) for unreadable input, a note whose text is not JSON, or a given key's failing signature. */
export async function readCommitmentFile(file: string, io: CliIo, trust: CommitmentTrust): Promise<CommitmentFile> {
  const input = Input.open(file, io);
  let all: Buffer;
  try {
    if ((await input.peek()) === null) throw new CliError(`${input.name} is empty (no bytes, or only white space)`);
    all = await input.readAll();
  } finally {
    input.close();
  }
  const direct = parseJsonBytes(all);
  if (direct.ok) {
    refuseErrorAnswer(direct.value, input.name, 'an endpoint commitment');
    return { value: direct.value, bytes: all, attestation: selfAsserted(null) };
  }
  const text = all.toString('utf8');
  if (!text.includes('\n\n\u2014 ')) throw new CliError(direct.why === 'not_json' ? `${input.name} is neither JSON nor a signed note: ${direct.detail}` : `${input.name} is ${direct.detail}`);
  let attestation: Attestation;
  let commitmentText: string;
  try {
    attestation = judgeOfflineNote(text, trust);
    commitmentText = commitmentTextOfNote(text);
  } catch (e) {
    if (e instanceof AttestationError) throw new CliError(`${input.name}: ${e.message}`);
    throw new CliError(`${input.name} is not a signed note: ${(e as Error).message}`);
  }
  const bytes = Buffer.from(commitmentText, 'utf8');
  const inner = parseJsonBytes(bytes);
  if (!inner.ok) throw new CliError(`${input.name} is a signed note whose text is not a JSON commitment: ${inner.detail}`);
  return { value: inner.value, bytes, attestation };
}
