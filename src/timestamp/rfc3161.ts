/**
 * RFC 3161 time-stamp tokens for checkpoints (AER-1 S10 allows external timestamp anchors).
 *
 * Pure: bytes in, a result out. No network, no filesystem (the HTTP client is `tsa-client.ts`).
 * ASN.1 and CMS structures are parsed with pkijs/asn1js; hashes and signatures use Node's crypto
 * (WebCrypto through pkijs' CryptoEngine). Attacker-controlled DER never throws: every failure is a
 * `TimestampRefused` with a fixed reason code (see `TSA_REASONS`).
 */
import { createHash, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

const OID_SHA256 = '2.16.840.1.101.3.4.2.1';
const OID_SIGNED_DATA = '1.2.840.113549.1.7.2';
const OID_TST_INFO = '1.2.840.113549.1.9.16.1.4';
const OID_ATTR_CONTENT_TYPE = '1.2.840.113549.1.9.3';
const OID_ATTR_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
const OID_ATTR_SIGNING_CERT = '1.2.840.113549.1.9.16.2.12'; // ESS SigningCertificate (SHA-1 ESSCertID), RFC 2634
const OID_ATTR_SIGNING_CERT_V2 = '1.2.840.113549.1.9.16.2.47'; // ESS SigningCertificateV2, RFC 5035 / RFC 5816
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_KP_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

/** Digest algorithms accepted for the CMS signer (OID -> Node hash name, WebCrypto name). */
const SIGNER_DIGESTS: Record<string, { node: string; webcrypto: string }> = {
  [OID_SHA256]: { node: 'sha256', webcrypto: 'SHA-256' },
  '2.16.840.1.101.3.4.2.2': { node: 'sha384', webcrypto: 'SHA-384' },
  '2.16.840.1.101.3.4.2.3': { node: 'sha512', webcrypto: 'SHA-512' },
};
const ESS_V1_DIGEST = '1.3.14.3.2.26'; // SHA-1, fixed by RFC 2634 for ESSCertID

/** Largest TimeStampResp / token accepted, in bytes (a token with a short chain is a few KiB). */
export const MAX_TIMESTAMP_RESPONSE_BYTES = 64 * 1024;

/**
 * Fixed reason codes of a refused token.
 * - `tsa_malformed`: not a TimeStampResp / TimeStampToken (bad DER, trailing bytes, wrong content types,
 *   not exactly one signer, TSTInfo version not 1, over `MAX_TIMESTAMP_RESPONSE_BYTES`, empty).
 * - `tsa_status_not_granted`: PKIStatus is neither granted (0) nor grantedWithMods (1) (RFC 3161 2.4.2).
 * - `tsa_imprint_mismatch`: messageImprint is not SHA-256 of the expected bytes (RFC 3161 2.4.2).
 * - `tsa_nonce_mismatch`: a nonce was sent and the token does not carry the same one (RFC 3161 2.4.2).
 * - `tsa_signature_invalid`: the CMS signature, content-type or message-digest attribute does not verify (RFC 5652 5.4-5.6).
 * - `tsa_signing_cert_mismatch`: no ESS SigningCertificate(V2) attribute naming the signer certificate (RFC 3161 2.4.1, RFC 5816).
 * - `tsa_signer_missing`: no certificate matching the signer identifier, in the token or the trust list.
 * - `tsa_untrusted_chain`: the signer certificate does not chain to a configured certificate at genTime.
 * - `tsa_bad_eku`: the signer certificate lacks one critical extendedKeyUsage of only id-kp-timeStamping (RFC 3161 2.3).
 * - `tsa_cert_not_valid`: genTime is outside the signer certificate's validity.
 * - `tsa_trust_invalid`: the configured trust PEM holds no usable certificate.
 */
export const TSA_REASONS = [
  'tsa_malformed',
  'tsa_status_not_granted',
  'tsa_imprint_mismatch',
  'tsa_nonce_mismatch',
  'tsa_signature_invalid',
  'tsa_signing_cert_mismatch',
  'tsa_signer_missing',
  'tsa_untrusted_chain',
  'tsa_bad_eku',
  'tsa_cert_not_valid',
  'tsa_trust_invalid',
] as const;
export type TsaReason = (typeof TSA_REASONS)[number];

/** A token that verified. */
export interface TimestampVerified {
  ok: true;
  /** TSTInfo genTime as RFC 3339 UTC with milliseconds (`2026-12-01T01:04:46.000Z`). */
  genTime: string;
  /** Subject DN of the TSA's signing certificate, attributes in certificate order (`CN=Test TSA, O=Example`). */
  tsaName: string;
  /** TSTInfo serialNumber, decimal. */
  serialNumber: string;
  /** TSTInfo policy OID (dotted). */
  policy: string;
  /** TSTInfo nonce, decimal, when present. */
  nonce?: string;
  /** TSTInfo accuracy, when present (RFC 3161 2.4.2). */
  accuracy?: { seconds: number; millis: number; micros: number };
  /** DER of the TimeStampToken (CMS ContentInfo), exactly as received: what to store and serve. */
  token: Buffer;
  /** DER of the TSA's signing certificate. */
  signerCertificate: Buffer;
}

/** A token that was refused; `message` says what failed, in words. */
export interface TimestampRefused {
  ok: false;
  code: TsaReason;
  message: string;
}

export type TimestampVerification = TimestampVerified | TimestampRefused;

/** The certificates a token must chain to: PEM text with one or more `CERTIFICATE` blocks (CA, intermediates, or the TSA certificate itself). */
export interface TsaTrust {
  certsPem: string;
}

let engine: pkijs.CryptoEngine | undefined;
/** pkijs' crypto engine on Node's WebCrypto; also installed as pkijs' global engine when none is set. */
function cryptoEngine(): pkijs.CryptoEngine {
  if (!engine) {
    engine = new pkijs.CryptoEngine({ name: 'node-webcrypto', crypto: webcrypto as unknown as pkijs.CryptoEngineParameters['crypto'] });
    let current: unknown;
    try {
      current = pkijs.getEngine().crypto;
    } catch {
      current = undefined;
    }
    if (!current) pkijs.setEngine('node-webcrypto', engine);
  }
  return engine;
}

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

function nonceToBigInt(nonce: bigint | Buffer): bigint {
  const value = typeof nonce === 'bigint' ? nonce : nonce.length === 0 ? 0n : BigInt('0x' + nonce.toString('hex'));
  if (value <= 0n) throw new RangeError('nonce must be a positive integer');
  return value;
}

function requireSha256(digest: Buffer, what: string): void {
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
 * @throws Error when there is no block or a block is not an X.509 certificate (for start-up checks of TSA_CERTS).
 */
export function parseCertificatesPem(pem: string): pkijs.Certificate[] {
  cryptoEngine();
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) throw new Error('no PEM CERTIFICATE block');
  return blocks.map((m, i) => {
    const der = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
    try {
      return pkijs.Certificate.fromBER(new Uint8Array(der));
    } catch (e) {
      throw new Error(`PEM certificate ${i + 1} is not an X.509 certificate: ${e instanceof Error ? e.message : String(e)}`);
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

class Refusal extends Error {
  constructor(
    readonly code: TsaReason,
    message: string,
  ) {
    super(message);
  }
}

function refuse(code: TsaReason, message: string): never {
  throw new Refusal(code, message);
}

/** Decodes one whole DER element; trailing bytes or a decoding error are `tsa_malformed`. */
function decodeWhole(bytes: Uint8Array, what: string): asn1js.AsnType {
  const parsed = asn1js.fromBER(bytes);
  if (parsed.offset === -1 || parsed.result.error) refuse('tsa_malformed', `${what} is not DER: ${parsed.result.error || 'undecodable'}`);
  if (parsed.offset !== bytes.byteLength) refuse('tsa_malformed', `${what} has ${bytes.byteLength - parsed.offset} trailing bytes`);
  return parsed.result;
}

/** The token element, from a TimeStampResp (status checked) or a bare TimeStampToken ContentInfo. */
function extractToken(root: asn1js.AsnType): asn1js.Sequence {
  if (!(root instanceof asn1js.Sequence) || root.valueBlock.value.length === 0) refuse('tsa_malformed', 'not a TimeStampResp or TimeStampToken');
  const first = root.valueBlock.value[0];
  if (first instanceof asn1js.ObjectIdentifier) return root; // ContentInfo
  if (!(first instanceof asn1js.Sequence)) refuse('tsa_malformed', 'not a TimeStampResp or TimeStampToken');
  let resp: pkijs.TimeStampResp;
  try {
    resp = new pkijs.TimeStampResp({ schema: root });
  } catch (e) {
    refuse('tsa_malformed', `not a TimeStampResp: ${e instanceof Error ? e.message : String(e)}`);
  }
  const status = resp.status.status;
  if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
    const text = (resp.status.statusStrings ?? []).map((s) => s.valueBlock.value).join('; ');
    refuse('tsa_status_not_granted', `TSA answered PKIStatus ${status}${text ? ` (${text})` : ''}`);
  }
  const token = root.valueBlock.value[1];
  if (!(token instanceof asn1js.Sequence)) refuse('tsa_malformed', 'TimeStampResp granted without a timeStampToken');
  return token;
}

const DN_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '1.2.840.113549.1.9.1': 'emailAddress',
};

/** Readable DN, attributes in certificate order, RFC 4514 special characters escaped. */
function formatName(name: pkijs.RelativeDistinguishedNames): string {
  return name.typesAndValues
    .map((tv) => {
      const raw: unknown = (tv.value as { valueBlock?: { value?: unknown } }).valueBlock?.value;
      const text = typeof raw === 'string' ? raw : Buffer.from(tv.value.valueBeforeDecodeView).toString('hex');
      return `${DN_NAMES[tv.type] ?? tv.type}=${text.replace(/([,+"\\<>;=])/g, '\\$1')}`;
    })
    .join(', ');
}

function certDer(cert: pkijs.Certificate): Buffer {
  return Buffer.from(cert.toSchema().toBER(false));
}

/** The certificate named by the SignerInfo's sid (RFC 5652 5.3): issuer+serial, or subjectKeyIdentifier. */
function findSigner(sid: pkijs.SignerInfo['sid'], candidates: pkijs.Certificate[]): pkijs.Certificate | undefined {
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    return candidates.find((c) => c.issuer.isEqual(sid.issuer) && c.serialNumber.isEqual(sid.serialNumber));
  }
  const block = sid as asn1js.Constructed | asn1js.Primitive;
  const keyId = Buffer.from(
    block.idBlock.isConstructed
      ? ((block as asn1js.Constructed).valueBlock.value[0] as asn1js.OctetString).valueBlock.valueHexView
      : (block as asn1js.Primitive).valueBlock.valueHexView,
  );
  return candidates.find((c) => {
    const ski = c.extensions?.find((x) => x.extnID === '2.5.29.14');
    const value = ski?.parsedValue instanceof asn1js.OctetString ? Buffer.from(ski.parsedValue.valueBlock.valueHexView) : undefined;
    return value !== undefined && value.equals(keyId);
  });
}

/** RFC 3161 2.4.1 / RFC 5816: a SigningCertificate(V2) signed attribute whose first ESSCertID is the signer's certificate. */
function checkEssBinding(attrs: pkijs.Attribute[], signerDer: Buffer): void {
  const ess = attrs.filter((a) => a.type === OID_ATTR_SIGNING_CERT || a.type === OID_ATTR_SIGNING_CERT_V2);
  if (ess.length !== 1 || ess[0].values.length !== 1) refuse('tsa_signing_cert_mismatch', 'token needs exactly one ESS signing-certificate attribute');
  const v2 = ess[0].type === OID_ATTR_SIGNING_CERT_V2;
  const signingCert: unknown = ess[0].values[0];
  const certs = signingCert instanceof asn1js.Sequence ? signingCert.valueBlock.value[0] : undefined;
  const first = certs instanceof asn1js.Sequence ? certs.valueBlock.value[0] : undefined;
  if (!(first instanceof asn1js.Sequence)) refuse('tsa_signing_cert_mismatch', 'ESS signing-certificate attribute is malformed');
  const parts = first.valueBlock.value;
  let digestOid = v2 ? OID_SHA256 : ESS_V1_DIGEST; // ESSCertIDv2.hashAlgorithm DEFAULT sha256
  let hashAt = 0;
  if (v2 && parts[0] instanceof asn1js.Sequence) {
    digestOid = new pkijs.AlgorithmIdentifier({ schema: parts[0] }).algorithmId;
    hashAt = 1;
  }
  const certHash = parts[hashAt];
  if (!(certHash instanceof asn1js.OctetString)) refuse('tsa_signing_cert_mismatch', 'ESS certHash is missing');
  const nodeName = digestOid === ESS_V1_DIGEST ? 'sha1' : SIGNER_DIGESTS[digestOid]?.node;
  if (!nodeName) refuse('tsa_signing_cert_mismatch', `ESS certHash algorithm ${digestOid} is not supported`);
  const expected = createHash(nodeName).update(signerDer).digest();
  if (!expected.equals(Buffer.from(certHash.valueBlock.valueHexView))) refuse('tsa_signing_cert_mismatch', 'ESS certHash does not name the signer certificate');
}

/** RFC 3161 2.3: exactly one extendedKeyUsage extension, critical, with only id-kp-timeStamping. */
function checkEku(cert: pkijs.Certificate): void {
  const ekus = (cert.extensions ?? []).filter((x) => x.extnID === OID_EXT_KEY_USAGE);
  if (ekus.length !== 1) refuse('tsa_bad_eku', 'TSA certificate has no extendedKeyUsage extension (RFC 3161 2.3)');
  if (!ekus[0].critical) refuse('tsa_bad_eku', 'TSA certificate extendedKeyUsage is not critical (RFC 3161 2.3)');
  const purposes = ekus[0].parsedValue instanceof pkijs.ExtKeyUsage ? ekus[0].parsedValue.keyPurposes : [];
  if (purposes.length !== 1 || purposes[0] !== OID_KP_TIME_STAMPING) refuse('tsa_bad_eku', 'TSA certificate extendedKeyUsage must be only id-kp-timeStamping (RFC 3161 2.3)');
}

async function checkChain(signer: pkijs.Certificate, signerDer: Buffer, tokenCerts: pkijs.Certificate[], trusted: pkijs.Certificate[], at: Date): Promise<void> {
  if (trusted.some((t) => certDer(t).equals(signerDer))) return; // the TSA certificate itself is configured
  const isCa = (c: pkijs.Certificate) => (c.extensions ?? []).some((x) => x.extnID === '2.5.29.19' && x.parsedValue instanceof pkijs.BasicConstraints && x.parsedValue.cA === true);
  const intermediates = tokenCerts.filter((c) => c !== signer && isCa(c));
  const chain = new pkijs.CertificateChainValidationEngine({ trustedCerts: trusted, certs: [...intermediates, signer], checkDate: at });
  let result: { result: boolean; resultMessage?: string };
  try {
    result = await chain.verify({}, cryptoEngine());
  } catch (e) {
    const m = e instanceof Error ? e.message : (e as { resultMessage?: string })?.resultMessage;
    refuse('tsa_untrusted_chain', `TSA certificate does not chain to the configured certificates: ${m ?? 'no path'}`);
  }
  if (!result.result) refuse('tsa_untrusted_chain', `TSA certificate does not chain to the configured certificates: ${result.resultMessage ?? 'no path'}`);
}

async function verifyToken(tokenBlock: asn1js.Sequence, expectedDigest: Buffer, trusted: pkijs.Certificate[], nonce: bigint | undefined): Promise<TimestampVerified> {
  const crypto = cryptoEngine();
  let signed: pkijs.SignedData;
  try {
    const info = new pkijs.ContentInfo({ schema: tokenBlock });
    if (info.contentType !== OID_SIGNED_DATA) refuse('tsa_malformed', `token content type ${info.contentType} is not signedData`);
    signed = new pkijs.SignedData({ schema: info.content });
  } catch (e) {
    if (e instanceof Refusal) throw e;
    refuse('tsa_malformed', `token is not CMS SignedData: ${e instanceof Error ? e.message : String(e)}`);
  }
  // RFC 3161 2.4.2: the token is signed by the TSA alone, over a TSTInfo.
  if (signed.signerInfos.length !== 1) refuse('tsa_malformed', `token has ${signed.signerInfos.length} signers, expected 1`);
  const eContent = signed.encapContentInfo.eContent;
  if (signed.encapContentInfo.eContentType !== OID_TST_INFO || !eContent || eContent.idBlock.isConstructed) refuse('tsa_malformed', 'token content is not a TSTInfo');
  const tstBytes = new Uint8Array(eContent.valueBlock.valueHexView);
  let tst: pkijs.TSTInfo;
  try {
    tst = new pkijs.TSTInfo({ schema: decodeWhole(tstBytes, 'TSTInfo') });
  } catch (e) {
    if (e instanceof Refusal) throw e;
    refuse('tsa_malformed', `TSTInfo: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (tst.version !== 1) refuse('tsa_malformed', `TSTInfo version ${tst.version}, expected 1`);
  const genTime = tst.genTime;
  if (!(genTime instanceof Date) || Number.isNaN(genTime.getTime())) refuse('tsa_malformed', 'TSTInfo genTime is not a time');

  // RFC 3161 2.4.2: messageImprint is the hash the requester sent.
  const imprint = tst.messageImprint;
  if (imprint.hashAlgorithm.algorithmId !== OID_SHA256) refuse('tsa_imprint_mismatch', `messageImprint algorithm ${imprint.hashAlgorithm.algorithmId} is not sha256`);
  if (!Buffer.from(imprint.hashedMessage.valueBlock.valueHexView).equals(expectedDigest)) refuse('tsa_imprint_mismatch', 'messageImprint is not the expected digest');
  if (nonce !== undefined) {
    if (!tst.nonce) refuse('tsa_nonce_mismatch', 'token carries no nonce, one was sent');
    if (tst.nonce.toBigInt() !== nonce) refuse('tsa_nonce_mismatch', 'token nonce differs from the one sent');
  }

  // The signer (RFC 5652 5.3) and its signature over the signed attributes (RFC 5652 5.4, 5.6).
  const signerInfo = signed.signerInfos[0];
  const tokenCerts = (signed.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  const signer = findSigner(signerInfo.sid, tokenCerts) ?? findSigner(signerInfo.sid, trusted);
  if (!signer) refuse('tsa_signer_missing', 'no certificate matches the token signer (request with certReq, or configure the TSA certificate)');
  const digestAlg = SIGNER_DIGESTS[signerInfo.digestAlgorithm.algorithmId];
  if (!digestAlg) refuse('tsa_signature_invalid', `signer digest algorithm ${signerInfo.digestAlgorithm.algorithmId} is not supported`);
  const attrs = signerInfo.signedAttrs?.attributes;
  if (!signerInfo.signedAttrs || !attrs) refuse('tsa_signature_invalid', 'token has no signed attributes (RFC 5652 5.3)');
  const contentType = attrs.filter((a) => a.type === OID_ATTR_CONTENT_TYPE);
  const ct: unknown = contentType[0]?.values[0];
  if (contentType.length !== 1 || !(ct instanceof asn1js.ObjectIdentifier) || ct.valueBlock.toString() !== OID_TST_INFO) {
    refuse('tsa_signature_invalid', 'content-type attribute is not id-ct-TSTInfo');
  }
  const messageDigest = attrs.filter((a) => a.type === OID_ATTR_MESSAGE_DIGEST);
  const md: unknown = messageDigest[0]?.values[0];
  const actual = createHash(digestAlg.node).update(tstBytes).digest();
  if (messageDigest.length !== 1 || !(md instanceof asn1js.OctetString) || !actual.equals(Buffer.from(md.valueBlock.valueHexView))) {
    refuse('tsa_signature_invalid', 'message-digest attribute does not match the TSTInfo');
  }
  let good = false;
  try {
    good = await crypto.verifyWithPublicKey(
      signerInfo.signedAttrs.encodedValue,
      signerInfo.signature,
      signer.subjectPublicKeyInfo,
      signerInfo.signatureAlgorithm,
      digestAlg.webcrypto,
    );
  } catch (e) {
    refuse('tsa_signature_invalid', `signature does not verify: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!good) refuse('tsa_signature_invalid', 'signature does not verify');

  const signerDer = certDer(signer);
  checkEssBinding(attrs, signerDer);
  checkEku(signer);
  if (genTime < signer.notBefore.value || genTime > signer.notAfter.value) {
    refuse('tsa_cert_not_valid', `genTime ${genTime.toISOString()} is outside the TSA certificate validity`);
  }
  await checkChain(signer, signerDer, tokenCerts, trusted, genTime);

  const accuracy = tst.accuracy ? { seconds: tst.accuracy.seconds ?? 0, millis: tst.accuracy.millis ?? 0, micros: tst.accuracy.micros ?? 0 } : undefined;
  return {
    ok: true,
    genTime: genTime.toISOString(),
    tsaName: formatName(signer.subject),
    serialNumber: tst.serialNumber.toBigInt().toString(),
    policy: tst.policy,
    ...(tst.nonce ? { nonce: tst.nonce.toBigInt().toString() } : {}),
    ...(accuracy ? { accuracy } : {}),
    token: Buffer.from(tokenBlock.valueBeforeDecodeView),
    signerCertificate: signerDer,
  };
}

/**
 * Verifies an RFC 3161 answer for `expectedDigest` (SHA-256, 32 bytes).
 * `der` is a TimeStampResp (RFC 3161 2.4.2) or a bare TimeStampToken (ContentInfo, e.g. as stored).
 * Checks, in order: DER well-formed; PKIStatus granted or grantedWithMods; one-signer SignedData over a
 * TSTInfo v1; messageImprint sha256 == `expectedDigest`; the nonce when `opts.nonce` is given; the CMS
 * content-type and message-digest attributes and signature (RFC 5652 5.4-5.6); the ESS
 * SigningCertificate(V2) attribute names the signer certificate (RFC 5816); the signer certificate has a
 * single critical extendedKeyUsage of only id-kp-timeStamping (RFC 3161 2.3); genTime within its validity;
 * it chains, at genTime, to one of `trust.certsPem` (or is one of them). No revocation checking.
 * Never throws for bad `der`: returns `{ok: false, code, message}` with a code from `TSA_REASONS`.
 * @throws TypeError only when `expectedDigest` is not 32 bytes, RangeError when `opts.nonce` is not positive (caller bugs).
 */
export async function verifyTimeStampResponse(der: Buffer, expectedDigest: Buffer, trust: TsaTrust, opts: { nonce?: bigint | Buffer } = {}): Promise<TimestampVerification> {
  requireSha256(expectedDigest, 'expectedDigest');
  const nonce = opts.nonce === undefined ? undefined : nonceToBigInt(opts.nonce);
  cryptoEngine();
  let trusted: pkijs.Certificate[];
  try {
    trusted = parseCertificatesPem(trust.certsPem);
  } catch (e) {
    return { ok: false, code: 'tsa_trust_invalid', message: `configured TSA certificates: ${e instanceof Error ? e.message : String(e)}` };
  }
  try {
    if (!Buffer.isBuffer(der) || der.length === 0) refuse('tsa_malformed', 'empty timestamp answer');
    if (der.length > MAX_TIMESTAMP_RESPONSE_BYTES) refuse('tsa_malformed', `timestamp answer over ${MAX_TIMESTAMP_RESPONSE_BYTES} bytes`);
    const token = extractToken(decodeWhole(new Uint8Array(der), 'timestamp answer'));
    return await verifyToken(token, expectedDigest, trusted, nonce);
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, code: e.code, message: e.message };
    return { ok: false, code: 'tsa_malformed', message: `timestamp answer does not parse: ${e instanceof Error ? e.message : String(e)}` };
  }
}
