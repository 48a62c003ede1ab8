/**
 * Witness cosignatures, Ed25519 type 0x04 (c2sp.org/tlog-cosignature):
 * a note signature line on a checkpoint whose signature is
 * `u64 big-endian timestamp || Ed25519(cosignatureMessage(text, timestamp))`,
 * key ID SHA-256(name || "\n" || 0x04 || public key)[:4]. A v1
 * cosignature states that, at that time, this checkpoint was the largest
 * consistent tree head the witness had seen for the origin.
 *
 * Witness keys use the vkey and signer key formats of keys.ts with type 0x04
 * (`generateSignerKey(name, SIG_COSIGNATURE_V1)`).
 */
import { parseCheckpoint, Checkpoint } from './checkpoint';
import { TlogError } from './errors';
import { computeKeyId, keyIdHex, NoteSigner, NoteVerifier, SIG_COSIGNATURE_V1 } from './keys';
import { NoteSignature, parseNote, signatureLine } from './note';

export { cosignatureMessage } from './keys';

/** Key ID of an Ed25519 cosigner key: SHA-256(name || 0x0A || 0x04 || public key)[:4]. */
export function cosignerKeyId(name: string, publicKey: Uint8Array): number {
  return computeKeyId(name, SIG_COSIGNATURE_V1, publicKey);
}

/**
 * Cosign a checkpoint note text at `timestamp` (POSIX seconds) with a type
 * 0x04 signer: the signature line to append to the checkpoint note (without
 * newline). The text must parse as a checkpoint (checkpoint_* codes).
 */
export function cosignCheckpoint(checkpointText: string, signer: NoteSigner, timestamp: number): string {
  if (signer.type !== SIG_COSIGNATURE_V1) throw new TlogError('key_type_unsupported', 'cosignatures need a type 0x04 key', { name: signer.name, type: signer.type });
  parseCheckpoint(checkpointText);
  return signatureLine(signer.name, signer.keyId, signer.sign(Buffer.from(checkpointText, 'utf8'), timestamp));
}

/** A verified cosignature. */
export interface Cosignature {
  readonly name: string;
  readonly keyId: number;
  /** POSIX seconds, as signed. */
  readonly timestamp: number;
  readonly verifier: NoteVerifier;
  /** The signature line (without newline). */
  readonly line: string;
}

/**
 * Verify one cosignature (a parsed signature line) on `checkpointText` with
 * a type 0x04 witness key. Throws cosignature_malformed (wrong name or key
 * ID for this key, wrong length, timestamp above 2^53 - 1) or
 * cosignature_invalid.
 */
export function verifyCosignature(checkpointText: string, sig: NoteSignature, verifier: NoteVerifier): Cosignature {
  if (verifier.type !== SIG_COSIGNATURE_V1) throw new TlogError('key_type_unsupported', 'cosignatures verify with type 0x04 keys', { name: verifier.name });
  if (sig.name !== verifier.name || sig.keyId !== verifier.keyId) {
    throw new TlogError('cosignature_malformed', 'the line is not by this witness key', { name: sig.name, key_id: keyIdHex(sig.keyId) });
  }
  if (sig.signature.length !== 72) throw new TlogError('cosignature_malformed', 'an Ed25519 cosignature is 8 + 64 bytes', { name: sig.name, actual: sig.signature.length });
  const r = verifier.verify(Buffer.from(checkpointText, 'utf8'), sig.signature);
  if (r.timestamp === undefined) throw new TlogError('cosignature_malformed', 'the cosignature timestamp is out of range', { name: sig.name });
  if (!r.ok) throw new TlogError('cosignature_invalid', `the cosignature by ${sig.name} does not verify`, { name: sig.name, key_id: keyIdHex(sig.keyId), timestamp: r.timestamp });
  return { name: sig.name, keyId: sig.keyId, timestamp: r.timestamp, verifier, line: sig.line };
}

/**
 * The valid cosignatures on a checkpoint note by the given witness keys
 * (type 0x04). Lines by other keys are ignored; a line by a known witness
 * key that fails rejects the note (cosignature_invalid), as signed-note
 * says. The caller applies its policy (e.g. k of n) to the result, and
 * verifies the log's own signature with verifyCheckpoint. The note is only
 * parsed here.
 */
export function verifyCosignatures(note: string | Uint8Array, witnesses: readonly NoteVerifier[]): { checkpoint: Checkpoint; cosignatures: Cosignature[] } {
  const parsed = parseNote(note);
  const checkpoint = parseCheckpoint(parsed.text);
  const out: Cosignature[] = [];
  const seen = new Set<string>();
  for (const sig of parsed.signatures) {
    const w = witnesses.find((x) => x.type === SIG_COSIGNATURE_V1 && x.name === sig.name && x.keyId === sig.keyId);
    if (!w) continue;
    const key = `${sig.name}+${sig.keyId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    try {
      out.push(verifyCosignature(parsed.text, sig, w));
    } catch (e) {
      if (e instanceof TlogError && e.code === 'cosignature_malformed') throw new TlogError('cosignature_invalid', e.message, e.details);
      throw e;
    }
  }
  return { checkpoint, cosignatures: out };
}
