/**
 * What is timestamped and how it is asked for: the checkpoint digest, the
 * TimeStampReq (RFC 3161 2.4.1), the served TimeStampResp around a stored
 * token (RFC 3161 3.4), and the trust list's certificates.
 */
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { cryptoEngine, OID_SHA256 } from './engine';
import { TsaTrustError } from './reasons';

/**
 * SHA-256 digest a checkpoint is timestamped over: the checkpoint body, i.e. the note text up to but
 * excluding the blank line that precedes its signatures (C2SP signed-note): origin, tree size and root
 * hash lines, each with its final newline (plus any further body lines, as written). Given a whole
 * signed note, the text is cut at its first "\n\n" and the part kept ends in "\n"; given only the body,
 * it must already end in "\n".
 * @throws TypeError when the body is empty, starts with a blank line or does not end in "\n" (not a checkpoint body).
 */
export function checkpointTimestampDigest(noteText: string): Buffer {
  const cut = noteText.indexOf('\n\n');
  const body = cut === -1 ? noteText : noteText.slice(0, cut + 1);
  if (body.length === 0 || body.startsWith('\n') || !body.endsWith('\n')) throw new TypeError('checkpoint body must be non-empty, start with a line and end in a newline');
  return createHash('sha256').update(body, 'utf8').digest();
}

export function nonceToBigInt(nonce: bigint | Buffer): bigint {
  const value = typeof nonce === 'bigint' ? nonce : nonce.length === 0 ? 0n : BigInt('0x' + nonce.toString('hex'));
  if (value <= 0n) throw new RangeError('nonce must be a positive integer');
  return value;
}

export function requireSha256(digest: Buffer, what: string): void {
  if (!Buffer.isBuffer(digest) || digest.length !== 32) throw new TypeError(`${what} must be a 32-byte SHA-256 digest`);
}

/**
 * DER TimeStampReq (RFC 3161 2.4.1) for a SHA-256 `digest`: version 1, messageImprint sha256 (with NULL
 * parameters), `nonce` when given (a bigint, or unsigned big-endian bytes; must be positive), `certReq`
 * true unless set false (then the token carries no certificate and the trust list must hold the TSA's).
 * @throws TypeError for a digest that is not 32 bytes; RangeError for a non-positive nonce.
 */
export function buildTimeStampRequest(digest: Buffer, opts: { nonce?: bigint | Buffer; certReq?: boolean } = {}): Buffer {
  requireSha256(digest, 'digest');
  cryptoEngine();
  const req = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID_SHA256, algorithmParams: new asn1js.Null() }),
      hashedMessage: new asn1js.OctetString({ valueHex: new Uint8Array(digest) }),
    }),
    certReq: opts.certReq ?? true,
    ...(opts.nonce !== undefined ? { nonce: asn1js.Integer.fromBigInt(nonceToBigInt(opts.nonce)) } : {}),
  });
  return Buffer.from(req.toSchema().toBER(false));
}

/**
 * Parses PEM text into certificates (every `-----BEGIN CERTIFICATE-----` block).
 * @throws TsaTrustError when there is no block or a block is not an X.509 certificate (for start-up checks of TSA_CERTS).
 */
export function parseCertificatesPem(pem: string): pkijs.Certificate[] {
  cryptoEngine();
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) throw new TsaTrustError('no PEM CERTIFICATE block');
  return blocks.map((m, i) => {
    const der = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
    try {
      return pkijs.Certificate.fromBER(new Uint8Array(der));
    } catch (e) {
      throw new TsaTrustError(`PEM certificate ${i + 1} is not an X.509 certificate: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
}

/**
 * A granted TimeStampResp (RFC 3161 2.4.2: PKIStatusInfo { granted }, then the token) around a stored
 * TimeStampToken, for serving as `application/timestamp-reply` (RFC 3161 3.4); `openssl ts -reply -in`
 * and `openssl ts -verify -in` read it, and `verifyTimeStampResponse` takes it back. The token bytes
 * are carried unchanged (they are the last bytes of the answer).
 * @throws TypeError when `token` is not exactly one ASN.1 SEQUENCE.
 */
export function timeStampReplyFromToken(token: Buffer): Buffer {
  const parsed = asn1js.fromBER(new Uint8Array(token));
  if (parsed.offset !== token.length || parsed.result.error || !(parsed.result instanceof asn1js.Sequence)) throw new TypeError('token is not one ASN.1 SEQUENCE');
  const status = new asn1js.Sequence({ value: [new asn1js.Integer({ value: pkijs.PKIStatus.granted })] });
  const reply = Buffer.from(new asn1js.Sequence({ value: [status, parsed.result] }).toBER(false));
  if (!reply.subarray(reply.length - token.length).equals(token)) throw new TypeError('token does not re-encode to the same bytes');
  return reply;
}
