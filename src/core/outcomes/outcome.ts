/**
 * Outcome reports (issue 18): the owning system's own observation of an
 * effect of a recorded call, `{outcome_id, job_id, receipt_id, effect,
 * result, observed_at, system, canonical_bytes, output_hash}`, with the
 * commitment discipline of a receipt (S4): `canonical_bytes` strict base64
 * (RFC 4648, padded, canonical), `output_hash` = `sha256:` + hex SHA-256 of
 * the decoded bytes, checked on the bytes as received and never re-serialized.
 *
 * Pure: the server (before anything is written), the outcome verifier
 * endpoint and `aer1 coverage --outcomes` call the same function.
 */
import { decodeStrictBase64 } from '../aer1/base64';
import { isOutputHash, isUuid } from '../aer1/identifiers';
import { Check, describe, Findings, has, isObject, JsonObject } from '../aer1/result';
import type { ReasonCode } from '../aer1/reasons';
import { isRfc3339 } from '../aer1/rfc3339';
import { sha256Hex } from '../aer1/sha256';
import { identifierProblem } from '../text';

/** What the owning system observed: the effect happened, failed, was reversed, or is unknown to it. */
export const OUTCOME_RESULTS = ['confirmed', 'failed', 'reversed', 'not_found'] as const;
export type OutcomeResult = (typeof OUTCOME_RESULTS)[number];

/** The members of an outcome report, all required. */
export const OUTCOME_MEMBERS = ['outcome_id', 'job_id', 'receipt_id', 'effect', 'result', 'observed_at', 'system', 'canonical_bytes', 'output_hash'] as const;

/** The fields of an outcome report that verifies. Ids as given (compare them lowercased). */
export interface OutcomeFields {
  outcome_id: string;
  job_id: string;
  receipt_id: string;
  effect: string;
  result: OutcomeResult;
  observed_at: string;
  system: string;
  output_hash: string;
}

/** The result of verifying one outcome report. */
export interface OutcomeVerification {
  kind: 'outcome';
  verdict: 'valid' | 'invalid';
  reasons: ReasonCode[];
  checks: Check[];
  /** Set when the verdict is valid. */
  fields: OutcomeFields | null;
  computed: { output_hash: string | null; canonical_byte_length: number | null };
  limits: string[];
}

export const OUTCOME_LIMITS = [
  'A passing output commitment confirms only that the canonical bytes match output_hash: the observation is what the reporting system states, shown as stated (S13).',
  'An outcome is the word of the system named in `system`; the ledger accepts it only from a key that speaks for that system, and never upgrades the provenance of the call it answers (S5).',
];

function nameOk(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && identifierProblem('name', v) === null;
}

/**
 * Verify an outcome report (parsed JSON). Never throws: malformed input
 * yields `invalid` with reason codes (`not_object`, `missing_field:<m>`,
 * `invalid_field:<m>`, `invalid_id`, `invalid_timestamp`, `invalid_base64`,
 * `invalid_output_hash_format`, `output_hash_mismatch`).
 */
export function verifyOutcome(input: unknown): OutcomeVerification {
  const f = new Findings();
  const out: OutcomeVerification = { kind: 'outcome', verdict: 'invalid', reasons: [], checks: f.checks, fields: null, computed: { output_hash: null, canonical_byte_length: null }, limits: [...OUTCOME_LIMITS] };
  if (!f.check('object', isObject(input), isObject(input) ? undefined : 'an outcome report is a JSON object', 'not_object')) return finish(out, f);
  const o = input as JsonObject;
  const unknown = Object.keys(o).filter((k) => !(OUTCOME_MEMBERS as readonly string[]).includes(k));
  f.check('members', unknown.length === 0, unknown.length ? `unknown members: ${unknown.map((k) => describe(k)).join(', ')}` : undefined, 'invalid_field:unknown_member');
  const present = (name: string): boolean => f.check(`${name}.present`, has(o, name), has(o, name) ? undefined : `required member ${name} is absent`, `missing_field:${name}`);

  if (present('outcome_id')) f.check('outcome_id', isUuid(o.outcome_id), isUuid(o.outcome_id) ? undefined : `not a UUID: ${describe(o.outcome_id)}`, 'invalid_id');
  if (present('receipt_id')) f.check('receipt_id', isUuid(o.receipt_id), isUuid(o.receipt_id) ? undefined : `not a UUID: ${describe(o.receipt_id)}`, 'invalid_field:receipt_id');
  for (const name of ['job_id', 'effect', 'system'] as const) {
    if (present(name)) f.check(name, nameOk(o[name]), nameOk(o[name]) ? undefined : `${name} must be 1 to 200 characters without control, invisible or bidi characters or surrounding white space (NFC), got ${describe(o[name])}`, `invalid_field:${name}`);
  }
  if (present('result')) {
    const ok = (OUTCOME_RESULTS as readonly unknown[]).includes(o.result);
    f.check('result', ok, ok ? undefined : `result must be one of ${OUTCOME_RESULTS.join(', ')}, got ${describe(o.result)}`, 'invalid_field:result');
  }
  if (present('observed_at')) f.check('observed_at', isRfc3339(o.observed_at), isRfc3339(o.observed_at) ? undefined : `not an RFC 3339 date-time with a real date: ${describe(o.observed_at)}`, 'invalid_timestamp');

  // The commitment (S4 discipline): strict base64, SHA-256 of the decoded bytes.
  if (present('canonical_bytes')) {
    const bytes = decodeStrictBase64(o.canonical_bytes);
    f.check('canonical_bytes.base64', bytes !== null, bytes ? `${bytes.length} bytes` : 'not strict base64 (RFC 4648, padded, canonical, no white space)', 'invalid_base64');
    if (bytes) {
      out.computed.canonical_byte_length = bytes.length;
      out.computed.output_hash = 'sha256:' + sha256Hex(bytes);
    }
  }
  if (present('output_hash')) {
    const fmt = isOutputHash(o.output_hash);
    f.check('output_hash.format', fmt, fmt ? undefined : `not "sha256:" plus 64 lowercase hex: ${describe(o.output_hash)}`, 'invalid_output_hash_format');
    if (fmt && out.computed.output_hash) {
      const ok = o.output_hash === out.computed.output_hash;
      f.check('output_commitment', ok, ok ? `recomputed ${out.computed.output_hash}` : `declared ${o.output_hash as string}, recomputed ${out.computed.output_hash}`, 'output_hash_mismatch');
    } else f.check('output_commitment', null, 'not confirmed: the canonical bytes or the declared hash are unusable (S4)');
  }
  finish(out, f);
  if (out.verdict === 'valid') {
    out.fields = {
      outcome_id: o.outcome_id as string,
      job_id: o.job_id as string,
      receipt_id: o.receipt_id as string,
      effect: o.effect as string,
      result: o.result as OutcomeResult,
      observed_at: o.observed_at as string,
      system: o.system as string,
      output_hash: o.output_hash as string,
    };
  }
  return out;
}

function finish(out: OutcomeVerification, f: Findings): OutcomeVerification {
  out.reasons = f.reasons;
  out.verdict = f.reasons.length === 0 ? 'valid' : 'invalid';
  return out;
}
