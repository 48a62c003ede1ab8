/**
 * RFC 3161 time-stamp tokens for checkpoints (AER-1 S10 allows external timestamp anchors): verification.
 *
 * Pure: bytes in, a result out. No network, no filesystem (the HTTP client is src/timestamp/tsa-client.ts).
 * ASN.1 and CMS structures are parsed with pkijs/asn1js; hashes and signatures use Node's crypto
 * (WebCrypto through pkijs' CryptoEngine). Attacker-controlled DER never throws: every failure is a
 * `TimestampRefused` with a fixed reason code (see `TSA_REASONS`).
 */
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { cryptoEngine, OID_ATTR_CONTENT_TYPE, OID_ATTR_MESSAGE_DIGEST, OID_SHA256, OID_SIGNED_DATA, OID_TST_INFO, SIGNER_DIGESTS } from './engine';
import { MAX_TIMESTAMP_RESPONSE_BYTES, Refusal, refuse, TimestampVerification, TimestampVerified, TsaTrust } from './reasons';
import { nonceToBigInt, parseCertificatesPem, requireSha256 } from './request';
import { certDer, checkChain, checkEku, checkEssBinding, findSigner, formatName } from './signer';

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
