/**
 * Note keys (c2sp.org/signed-note, "Signatures" and "Verifier keys";
 * c2sp.org/tlog-cosignature, "Format"): key names, key IDs, verifier keys
 * (vkeys), signer keys, and the two signature types this project uses:
 *
 * - 0x01, Ed25519 over the note text (a log signing its checkpoints);
 * - 0x04, timestamped Ed25519 cosignatures (a witness): the signature is
 *   u64 big-endian timestamp || Ed25519 over
 *   `cosignature/v1\ntime <timestamp>\n<checkpoint note text>`.
 *
 * Signer key format (ours, following Go's golang.org/x/mod/sumdb/note):
 * `PRIVATE+KEY+<name>+<hex key ID>+<base64(type || 32-byte Ed25519 seed)>`,
 * with the same name, key ID and type as the vkey it pairs with. It is a
 * secret: store it like a password.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, hash, KeyObject, sign, verify } from 'node:crypto';
import { decodeStrictBase64 } from '../aer1/base64';
import { TlogError } from './errors';

/** Signature type 0x01: Ed25519 over the note text. */
export const SIG_ED25519 = 0x01;
/** Signature type 0x04: timestamped Ed25519 checkpoint cosignature (tlog-cosignature). */
export const SIG_COSIGNATURE_V1 = 0x04;

export type SignatureType = typeof SIG_ED25519 | typeof SIG_COSIGNATURE_V1;

/** The largest cosignature timestamp we accept or produce (the spec allows up to 2^63 - 1; we keep JS-safe integers). */
export const MAX_TIMESTAMP = Number.MAX_SAFE_INTEGER;

const SIGNER_PREFIX = 'PRIVATE+KEY+';
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A valid key name: non-empty, no Unicode white space, no `+`
 * (signed-note, "Format"). Names are also free of control characters, as
 * every note is.
 */
export function isValidKeyName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && !/[\p{White_Space}+\p{Cc}]/u.test(name) && !/\p{Cs}/u.test(name);
}

/** Key ID = SHA-256(name || 0x0A || type || public key)[:4] as a uint32 (signed-note, "Signatures"). */
export function computeKeyId(name: string, type: number, publicKey: Uint8Array): number {
  const digest = hash('sha256', Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, type]), publicKey]), 'buffer');
  return digest.readUInt32BE(0);
}

/** A key ID as 8 lowercase hex digits. */
export function keyIdHex(id: number): string {
  return id.toString(16).padStart(8, '0');
}

/**
 * The message a type 0x04 cosignature signs (tlog-cosignature, "Ed25519
 * signed message"): `cosignature/v1\ntime <t>\n` followed by the whole
 * checkpoint note text (with its final newline, without signature lines).
 */
export function cosignatureMessage(checkpointText: string | Uint8Array, timestamp: number): Buffer {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TlogError('cosignature_timestamp_invalid', 'a cosignature timestamp is a non-negative integer of POSIX seconds', { timestamp: String(timestamp) });
  }
  const text = typeof checkpointText === 'string' ? Buffer.from(checkpointText, 'utf8') : checkpointText;
  return Buffer.concat([Buffer.from(`cosignature/v1\ntime ${timestamp}\n`, 'utf8'), text]);
}

/** The outcome of checking one signature with a known key. */
export interface SignatureCheck {
  readonly ok: boolean;
  /** The cosignature timestamp (type 0x04 only). */
  readonly timestamp?: number;
}

/** A trusted public key that verifies note signatures. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  readonly type: SignatureType;
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Buffer;
  /** `<name>+<hex key ID>+<base64(type || public key)>`. */
  readonly vkey: string;
  /** Check `signature` (the bytes after the 4-byte key ID) over the note text. Never throws. */
  verify(text: Uint8Array, signature: Uint8Array): SignatureCheck;
}

/** A private key that signs notes. */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  readonly type: SignatureType;
  readonly publicKey: Buffer;
  readonly privateKey: KeyObject;
  /** The verifier key string that pairs with this signer. */
  readonly vkey: string;
  /**
   * The signature bytes (without the key ID) over note `text`. Type 0x04
   * needs `timestamp` (POSIX seconds; the core never reads the clock).
   */
  sign(text: Uint8Array, timestamp?: number): Buffer;
}

function ed25519PublicKeyObject(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
}

function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' }) as { crv?: string; x?: string };
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new TlogError('key_invalid', 'not an Ed25519 key', {});
  return Buffer.from(jwk.x, 'base64url');
}

function checkType(type: number): SignatureType {
  if (type !== SIG_ED25519 && type !== SIG_COSIGNATURE_V1) throw new TlogError('key_type_unsupported', `signature type 0x${type.toString(16).padStart(2, '0')} is not supported (0x01 and 0x04 are)`, { type });
  return type;
}

/** Format a vkey. */
export function formatVerifierKey(name: string, type: SignatureType, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new TlogError('note_key_name_invalid', 'key names are non-empty, without spaces or +', { name });
  return `${name}+${keyIdHex(computeKeyId(name, type, publicKey))}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`;
}

/** A verifier from its parts (the key ID is computed as the spec recommends). */
export function newVerifier(name: string, type: SignatureType, publicKey: Uint8Array): NoteVerifier {
  checkType(type);
  if (!isValidKeyName(name)) throw new TlogError('note_key_name_invalid', 'key names are non-empty, without spaces or +', { name });
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new TlogError('key_invalid', 'an Ed25519 public key is 32 bytes', {});
  let keyObject: KeyObject;
  try {
    keyObject = ed25519PublicKeyObject(publicKey);
  } catch (_) {
    throw new TlogError('key_invalid', 'not a usable Ed25519 public key', {});
  }
  const pub = Buffer.from(publicKey);
  const keyId = computeKeyId(name, type, pub);
  const vkey = formatVerifierKey(name, type, pub);
  const check = (message: Uint8Array, sig: Uint8Array): boolean => {
    try {
      return verify(null, message, keyObject, sig);
    } catch (_) {
      return false;
    }
  };
  return {
    name,
    keyId,
    type,
    publicKey: pub,
    vkey,
    verify(text: Uint8Array, signature: Uint8Array): SignatureCheck {
      if (!(signature instanceof Uint8Array)) return { ok: false };
      if (type === SIG_ED25519) return { ok: signature.length === 64 && check(text, signature) };
      if (signature.length !== 8 + 64) return { ok: false };
      const ts = Buffer.from(signature.buffer, signature.byteOffset, 8).readBigUInt64BE(0);
      if (ts > BigInt(MAX_TIMESTAMP)) return { ok: false };
      const timestamp = Number(ts);
      return { ok: check(cosignatureMessage(text, timestamp), signature.subarray(8)), timestamp };
    },
  };
}

/** `<name>+<id>+<base64>` split at its first two `+` (base64 may itself contain `+`). */
function splitKey(s: string): [string, string, string] | null {
  const a = s.indexOf('+');
  const b = a < 0 ? -1 : s.indexOf('+', a + 1);
  return b < 0 ? null : [s.slice(0, a), s.slice(a + 1, b), s.slice(b + 1)];
}

/**
 * Parse a vkey `<name>+<hex key ID>+<base64(type || public key)>`. The key
 * ID must be 8 lowercase hex digits equal to the computed one (Go's note
 * does the same). Throws key_invalid, key_id_mismatch,
 * key_type_unsupported or note_key_name_invalid.
 */
export function parseVerifierKey(vkey: string): NoteVerifier {
  if (typeof vkey !== 'string') throw new TlogError('key_invalid', 'a verifier key is a string', {});
  const parts = splitKey(vkey);
  if (parts === null) throw new TlogError('key_invalid', 'a verifier key is <name>+<hex key ID>+<base64 key>', {});
  const [name, idHex, b64] = parts;
  if (!isValidKeyName(name)) throw new TlogError('note_key_name_invalid', 'key names are non-empty, without spaces or +', { name: String(name).slice(0, 200) });
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new TlogError('key_invalid', 'the key ID is 8 lowercase hex digits', { name });
  const bytes = decodeStrictBase64(b64);
  if (bytes === null || bytes.length < 1) throw new TlogError('key_invalid', 'the key material is not strict base64', { name });
  const type = checkType(bytes[0]);
  if (bytes.length !== 33) throw new TlogError('key_invalid', 'an Ed25519 verifier key holds 1 + 32 bytes', { name, actual: bytes.length });
  const v = newVerifier(name, type, bytes.subarray(1));
  if (keyIdHex(v.keyId) !== idHex) throw new TlogError('key_id_mismatch', 'the key ID does not match the name and key', { name, expected: keyIdHex(v.keyId), actual: idHex });
  return v;
}

/** A signer from a node:crypto Ed25519 private KeyObject. */
export function newSigner(name: string, privateKey: KeyObject, type: SignatureType = SIG_ED25519): NoteSigner {
  checkType(type);
  if (!isValidKeyName(name)) throw new TlogError('note_key_name_invalid', 'key names are non-empty, without spaces or +', { name });
  if (!(privateKey instanceof KeyObject) || privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw new TlogError('key_invalid', 'a signer needs an Ed25519 private KeyObject', { name });
  }
  const publicKey = rawPublicKey(createPublicKey(privateKey));
  const keyId = computeKeyId(name, type, publicKey);
  return {
    name,
    keyId,
    type,
    publicKey,
    privateKey,
    vkey: formatVerifierKey(name, type, publicKey),
    sign(text: Uint8Array, timestamp?: number): Buffer {
      if (type === SIG_ED25519) return sign(null, text, privateKey);
      if (timestamp === undefined) throw new TlogError('cosignature_timestamp_invalid', 'a cosignature needs a timestamp', { name });
      const msg = cosignatureMessage(text, timestamp);
      const ts = Buffer.alloc(8);
      ts.writeBigUInt64BE(BigInt(timestamp));
      return Buffer.concat([ts, sign(null, msg, privateKey)]);
    },
  };
}

/** The 32-byte Ed25519 seed of a private KeyObject. */
function seedOf(privateKey: KeyObject): Buffer {
  const jwk = privateKey.export({ format: 'jwk' }) as { d?: string };
  if (typeof jwk.d !== 'string') throw new TlogError('key_invalid', 'not an Ed25519 private key', {});
  return Buffer.from(jwk.d, 'base64url');
}

/** The signer key string of `signer` (see the module comment for the format). */
export function formatSignerKey(signer: NoteSigner): string {
  const material = Buffer.concat([Buffer.from([signer.type]), seedOf(signer.privateKey)]).toString('base64');
  return `${SIGNER_PREFIX}${signer.name}+${keyIdHex(signer.keyId)}+${material}`;
}

/**
 * Parse a signer key `PRIVATE+KEY+<name>+<hex key ID>+<base64(type || seed)>`.
 * Throws key_invalid, key_id_mismatch, key_type_unsupported or
 * note_key_name_invalid. Error details never include key material.
 */
export function parseSignerKey(skey: string): NoteSigner {
  if (typeof skey !== 'string' || !skey.startsWith(SIGNER_PREFIX)) throw new TlogError('key_invalid', 'a signer key starts with PRIVATE+KEY+', {});
  const parts = splitKey(skey.slice(SIGNER_PREFIX.length));
  if (parts === null) throw new TlogError('key_invalid', 'a signer key is PRIVATE+KEY+<name>+<hex key ID>+<base64 key>', {});
  const [name, idHex, b64] = parts;
  if (!isValidKeyName(name)) throw new TlogError('note_key_name_invalid', 'key names are non-empty, without spaces or +', {});
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new TlogError('key_invalid', 'the key ID is 8 lowercase hex digits', { name });
  const bytes = decodeStrictBase64(b64);
  if (bytes === null || bytes.length !== 33) throw new TlogError('key_invalid', 'the key material is base64 of 1 + 32 bytes', { name });
  const type = checkType(bytes[0]);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, bytes.subarray(1)]), format: 'der', type: 'pkcs8' });
  } catch (_) {
    throw new TlogError('key_invalid', 'not a usable Ed25519 seed', { name });
  }
  const signer = newSigner(name, privateKey, type);
  if (keyIdHex(signer.keyId) !== idHex) throw new TlogError('key_id_mismatch', 'the key ID does not match the name and key', { name });
  return signer;
}

/**
 * A fresh Ed25519 key for `name`: the signer key string (secret), the vkey
 * (public) and the signer. Type 0x01 for a log, 0x04 for a witness.
 */
export function generateSignerKey(name: string, type: SignatureType = SIG_ED25519): { signerKey: string; verifierKey: string; signer: NoteSigner } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const signer = newSigner(name, privateKey, type);
  return { signerKey: formatSignerKey(signer), verifierKey: signer.vkey, signer };
}
