/**
 * RFC 3161 time-stamp tokens for checkpoints: request building, the
 * checkpoint digest, and verification with a closed set of reason codes
 * (`TsaReason`). Pure: pkijs/asn1js and node:crypto only, no I/O (the HTTP
 * client is src/timestamp/tsa-client.ts).
 */
export { MAX_TIMESTAMP_RESPONSE_BYTES, TSA_REASONS, TsaTrustError } from './reasons';
export type { TsaReason, TimestampVerified, TimestampRefused, TimestampVerification, TsaTrust } from './reasons';
export { checkpointTimestampDigest, buildTimeStampRequest, parseCertificatesPem, timeStampReplyFromToken } from './request';
export { verifyTimeStampResponse } from './verify';
