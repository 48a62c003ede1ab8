/**
 * Identifiers, digests and provenance classes (spec README readings 4, 5, 6, 10).
 */

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const OUTPUT_HASH = /^sha256:[0-9a-f]{64}$/;

/** UUID in 8-4-4-4-12 hex form, either case; no braces, no `urn:uuid:` (RFC 9562). */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && UUID.test(s);
}

/** The form in which two ids are compared: ids differing only in case are the same id. */
export function uuidKey(s: string): string {
  return s.toLowerCase();
}

/** 64 lowercase hex digits: an entry digest, Merkle root or workflow output hash. Uppercase is rejected. */
export function isHex64(s: unknown): s is string {
  return typeof s === 'string' && HEX64.test(s);
}

/** A receipt output commitment: `sha256:` plus 64 lowercase hex digits (S2, S3). */
export function isOutputHash(s: unknown): s is string {
  return typeof s === 'string' && OUTPUT_HASH.test(s);
}

/** The 64 zero characters every genesis entry carries as prev_digest (S7.2). */
export const ZERO_DIGEST = '0'.repeat(64);

/** The provenance classes of S5. */
export type ProvenanceKind = 'executed' | 'observed' | 'logged';

/**
 * Classify a provenance class string (S5; reading 5): exactly
 * `OBSERVED VIA GATEWAY`, `LOGGED BY AGENT`, or `EXECUTED BY ` plus a system
 * name that neither starts nor ends with white space. Case-sensitive.
 * Returns null for anything else.
 */
export function provenanceKind(s: unknown): ProvenanceKind | null {
  if (typeof s !== 'string') return null;
  if (s === 'OBSERVED VIA GATEWAY') return 'observed';
  if (s === 'LOGGED BY AGENT') return 'logged';
  if (s.startsWith('EXECUTED BY ')) {
    const system = s.slice('EXECUTED BY '.length);
    if (system.length > 0 && !/^\s/u.test(system) && !/\s$/u.test(system)) return 'executed';
  }
  return null;
}

/** What each provenance class attests, as S5 states it; shown beside every record, never upgraded. */
export const PROVENANCE_MEANING: Record<ProvenanceKind, string> = {
  executed: 'The recording system ran the tool and recorded the returned result.',
  observed: 'The recording system observed the action through an integrated gateway; nothing beyond what the gateway returned.',
  logged: 'An external agent reported the action; the recording system did not run or observe it.',
};
