/**
 * The closed set of outcomes of RFC 3161 verification: reason codes, the
 * verified and refused results, the trust list type.
 */

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

/** A refusal raised inside the verifier; `verifyTimeStampResponse` turns it into `{ok: false, code, message}`. */
export class Refusal extends Error {
  constructor(
    readonly code: TsaReason,
    message: string,
  ) {
    super(message);
  }
}

/** Stop verification with a fixed reason code. */
export function refuse(code: TsaReason, message: string): never {
  throw new Refusal(code, message);
}

/** Configured trust PEM that holds no usable certificate (start-up checks of TSA_CERTS; a `tsa_trust_invalid` verdict when verifying). */
export class TsaTrustError extends Error {
  readonly code = 'tsa_trust_invalid' satisfies TsaReason;
}
