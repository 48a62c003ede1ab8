/** Object identifiers of RFC 3161 / RFC 5652 / RFC 5816, and pkijs' crypto engine on Node's WebCrypto. */
import { webcrypto } from 'node:crypto';
import * as pkijs from 'pkijs';

export const OID_SHA256 = '2.16.840.1.101.3.4.2.1';
export const OID_SIGNED_DATA = '1.2.840.113549.1.7.2';
export const OID_TST_INFO = '1.2.840.113549.1.9.16.1.4';
export const OID_ATTR_CONTENT_TYPE = '1.2.840.113549.1.9.3';
export const OID_ATTR_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
export const OID_ATTR_SIGNING_CERT = '1.2.840.113549.1.9.16.2.12'; // ESS SigningCertificate (SHA-1 ESSCertID), RFC 2634
export const OID_ATTR_SIGNING_CERT_V2 = '1.2.840.113549.1.9.16.2.47'; // ESS SigningCertificateV2, RFC 5035 / RFC 5816
export const OID_EXT_KEY_USAGE = '2.5.29.37';
export const OID_KP_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

/** Digest algorithms accepted for the CMS signer (OID -> Node hash name, WebCrypto name). */
export const SIGNER_DIGESTS: Record<string, { node: string; webcrypto: string }> = {
  [OID_SHA256]: { node: 'sha256', webcrypto: 'SHA-256' },
  '2.16.840.1.101.3.4.2.2': { node: 'sha384', webcrypto: 'SHA-384' },
  '2.16.840.1.101.3.4.2.3': { node: 'sha512', webcrypto: 'SHA-512' },
};
export const ESS_V1_DIGEST = '1.3.14.3.2.26'; // SHA-1, fixed by RFC 2634 for ESSCertID

let engine: pkijs.CryptoEngine | undefined;
/** pkijs' crypto engine on Node's WebCrypto; also installed as pkijs' global engine when none is set. */
export function cryptoEngine(): pkijs.CryptoEngine {
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
