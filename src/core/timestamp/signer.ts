/**
 * The TSA's signing certificate: finding it from the signer identifier
 * (RFC 5652 5.3), the ESS binding (RFC 2634, RFC 5816), its
 * extendedKeyUsage (RFC 3161 2.3), its chain to the trust list, its name.
 * Each check refuses with a fixed `TsaReason`.
 */
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { cryptoEngine, ESS_V1_DIGEST, OID_ATTR_SIGNING_CERT, OID_ATTR_SIGNING_CERT_V2, OID_EXT_KEY_USAGE, OID_KP_TIME_STAMPING, OID_SHA256, SIGNER_DIGESTS } from './engine';
import { refuse } from './reasons';

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
export function formatName(name: pkijs.RelativeDistinguishedNames): string {
  return name.typesAndValues
    .map((tv) => {
      const raw: unknown = (tv.value as { valueBlock?: { value?: unknown } }).valueBlock?.value;
      const text = typeof raw === 'string' ? raw : Buffer.from(tv.value.valueBeforeDecodeView).toString('hex');
      return `${DN_NAMES[tv.type] ?? tv.type}=${text.replace(/([,+"\\<>;=])/g, '\\$1')}`;
    })
    .join(', ');
}

/** DER of a certificate. */
export function certDer(cert: pkijs.Certificate): Buffer {
  return Buffer.from(cert.toSchema().toBER(false));
}

/** The certificate named by the SignerInfo's sid (RFC 5652 5.3): issuer+serial, or subjectKeyIdentifier. */
export function findSigner(sid: pkijs.SignerInfo['sid'], candidates: pkijs.Certificate[]): pkijs.Certificate | undefined {
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
export function checkEssBinding(attrs: pkijs.Attribute[], signerDer: Buffer): void {
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
export function checkEku(cert: pkijs.Certificate): void {
  const ekus = (cert.extensions ?? []).filter((x) => x.extnID === OID_EXT_KEY_USAGE);
  if (ekus.length !== 1) refuse('tsa_bad_eku', 'TSA certificate has no extendedKeyUsage extension (RFC 3161 2.3)');
  if (!ekus[0].critical) refuse('tsa_bad_eku', 'TSA certificate extendedKeyUsage is not critical (RFC 3161 2.3)');
  const purposes = ekus[0].parsedValue instanceof pkijs.ExtKeyUsage ? ekus[0].parsedValue.keyPurposes : [];
  if (purposes.length !== 1 || purposes[0] !== OID_KP_TIME_STAMPING) refuse('tsa_bad_eku', 'TSA certificate extendedKeyUsage must be only id-kp-timeStamping (RFC 3161 2.3)');
}

export async function checkChain(signer: pkijs.Certificate, signerDer: Buffer, tokenCerts: pkijs.Certificate[], trusted: pkijs.Certificate[], at: Date): Promise<void> {
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
