/**
 * Who must have signed and cosigned a checkpoint (the log's key, witness
 * keys and their quorum), and the quorum check over a signed note
 * (c2sp.org/tlog-cosignature). Shared by the proof check and the pack check.
 */
import { Cosignature, verifyCosignatures } from './cosignature';
import { NoteVerifier } from './keys';
import { isTlogError, TlogErrorCode } from './errors';
import type { LogCheck } from './log-proof';

/** Who must have signed and cosigned. */
export interface TrustPolicy {
  /** The log's key (type 0x01); its name is the log origin. */
  log: NoteVerifier;
  /** Witness keys (type 0x04). */
  witnesses: readonly NoteVerifier[];
  /** Valid cosignatures needed (0 without witnesses). */
  quorum: number;
  /** PEM of the TSA chain, to check a carried RFC 3161 token. */
  tsaCertsPem?: string;
  /** Keys trusted for endpoint commitments (`--trusted-key`, the server's TRUSTED_COMMITMENT_KEYS), to judge attested ones. */
  commitmentKeys?: readonly NoteVerifier[];
}

/** The code and words of a thrown failure. */
export function failure(e: unknown): { code: TlogErrorCode | 'error'; message: string } {
  if (isTlogError(e)) return { code: e.code, message: e.message };
  return { code: 'error', message: e instanceof Error ? e.message : String(e) };
}

/** Cosignatures by `witnesses` on `note` against the quorum (a check, and the valid ones). */
export function quorumCheck(note: string, policy: TrustPolicy): { check: LogCheck; valid: Cosignature[] } {
  const n = policy.witnesses.length;
  try {
    const { cosignatures } = verifyCosignatures(note, policy.witnesses);
    const names = cosignatures.map((c) => `${c.name} at ${new Date(c.timestamp * 1000).toISOString()}`).join(', ');
    const ok = cosignatures.length >= policy.quorum;
    return {
      check: { name: 'cosignatures', ok, ...(ok ? {} : { code: 'quorum_not_met' }), detail: `${cosignatures.length} of ${n} witness${n === 1 ? '' : 'es'} cosigned, ${policy.quorum} needed${names ? `: ${names}` : ''}` },
      valid: cosignatures,
    };
  } catch (e) {
    const f = failure(e);
    return { check: { name: 'cosignatures', ok: false, code: f.code, detail: f.message }, valid: [] };
  }
}
