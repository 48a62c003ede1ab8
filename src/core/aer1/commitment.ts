/**
 * Endpoint commitments (revision 09 article; S7.3; spec README reading 9).
 *
 * A commitment `{job_id, final_entry_digest, entry_count, published_at}`
 * published outside the chain binds the visible timeline only when the
 * timeline verifies under -07 and all three compared members agree: count
 * alone cannot see a substituted last entry, the digest alone cannot see
 * which job it came from.
 */
import { TimelineResult, verifyTimeline } from './chain';
import { isHex64 } from './identifiers';
import { describe, Findings, has, isNonEmptyString, isObject, JsonObject, VerificationResultBase } from './result';
import { isRfc3339 } from './rfc3339';

/** Witness metadata carried through untouched when present. */
export const WITNESS_FIELDS = ['witness', 'retrieved_from', 'retrieved_at'] as const;

/** The result of checking a commitment against a timeline. */
export interface CommitmentResult extends VerificationResultBase {
  kind: 'commitment';
  /** True only when the commitment binds the visible -07 timeline: truncation and last-entry substitution are excluded up to the witness's publication. */
  binding: boolean;
  timeline: TimelineResult;
  /** The commitment as given (all members, untouched). */
  commitment: unknown;
  /** `witness`, `retrieved_from`, `retrieved_at` exactly as given, when present. */
  witness: Record<string, unknown> | null;
  computed: { job_id: string | null; final_entry_digest: string | null; entry_count: number };
}

const COMMITMENT_LIMITS = [
  'A binding commitment shows the visible timeline reaches the endpoint the witness published at published_at; it does not show that every real action was recorded (rev 09).',
  'It is only as independent as its witness: a commitment published by the chain producer alone is one trust domain.',
];

/**
 * Check the syntax of a commitment object (reading 9). Returns the failing
 * member descriptions; empty when well-formed.
 */
export function commitmentFormatProblems(c: unknown): string[] {
  if (!isObject(c)) return ['the commitment is not a JSON object'];
  const problems: string[] = [];
  if (!isNonEmptyString(c.job_id)) problems.push(`job_id must be a non-empty string, got ${describe(c.job_id)}`);
  if (!isHex64(c.final_entry_digest)) problems.push(`final_entry_digest must be 64 lowercase hex, got ${describe(c.final_entry_digest)}`);
  if (!Number.isSafeInteger(c.entry_count) || (c.entry_count as number) < 0) problems.push(`entry_count must be a non-negative JSON integer, got ${describe(c.entry_count)}`);
  if (!isRfc3339(c.published_at)) problems.push(`published_at must be RFC 3339 with a real date, got ${describe(c.published_at)}`);
  return problems;
}

/**
 * Compare a commitment with an already verified timeline. Used by the
 * streaming CLI and the ledger, which verify the timeline themselves.
 */
export function checkCommitment(timeline: TimelineResult, commitment: unknown, envelope?: JsonObject): CommitmentResult {
  const f = new Findings();
  // Issue 29: a timeline with erased entries (verdict incomplete, no reason) cannot be re-checked whole: not evaluated, never binding.
  const erased = timeline.erased !== undefined && timeline.reasons.length === 0 && timeline.verdict !== 'valid';
  const tl = f.check('timeline', erased ? null : timeline.verdict === 'valid', erased ? `not evaluated: ${timeline.erased!.entries} of ${timeline.entry_count} entries erased (issue 29)` : `timeline verdict ${timeline.verdict}${timeline.reasons.length ? ` (${timeline.reasons.join(', ')})` : ''}`);
  if (!tl) for (const r of timeline.reasons) f.reason(r);
  const problems = commitmentFormatProblems(commitment);
  f.check('commitment.format', problems.length === 0, problems.length ? problems.join('; ') : undefined, 'invalid_commitment');
  if (problems.length === 0) {
    const c = commitment as JsonObject;
    const jobOk = c.job_id === timeline.job_id;
    f.check('commitment.job_id', jobOk, jobOk ? `job ${timeline.job_id}` : `commitment names ${describe(c.job_id)}, timeline is ${describe(timeline.job_id)}`, 'commitment_job_id_mismatch');
    const countOk = c.entry_count === timeline.entry_count;
    f.check('commitment.entry_count', countOk, countOk ? `${timeline.entry_count} entries` : `commitment says ${c.entry_count as number}, timeline has ${timeline.entry_count}`, 'commitment_entry_count_mismatch');
    const finalOk = timeline.final_entry_digest !== null && c.final_entry_digest === timeline.final_entry_digest;
    f.check('commitment.final_entry_digest', timeline.final_entry_digest === null ? null : finalOk,
      timeline.final_entry_digest === null ? 'not evaluated: the last entry has no recomputable digest' : finalOk ? `recomputed ${timeline.final_entry_digest}` : `commitment names ${c.final_entry_digest as string}, recomputed ${timeline.final_entry_digest}`,
      'commitment_final_digest_mismatch');
    if (timeline.final_entry_digest === null) f.reason('commitment_final_digest_mismatch');
  }
  let witness: Record<string, unknown> | null = null;
  for (const source of [envelope, isObject(commitment) ? commitment : undefined]) {
    if (!source) continue;
    for (const k of WITNESS_FIELDS) {
      if (has(source, k) && !(witness && has(witness, k))) (witness ??= {})[k] = source[k];
    }
  }
  const verdict = f.verdict();
  return {
    kind: 'commitment',
    verdict,
    reasons: f.reasons,
    checks: f.checks,
    limits: [...COMMITMENT_LIMITS],
    // Only a timeline that verifies whole can be bound (an erased one has no failing reason, and still cannot).
    binding: verdict === 'valid' && timeline.verdict === 'valid',
    timeline,
    commitment,
    witness,
    computed: { job_id: timeline.job_id, final_entry_digest: timeline.final_entry_digest, entry_count: timeline.entry_count },
  };
}

/**
 * Verify `{timeline, commitment}` (the corpus's `commitment` kind). Witness
 * metadata may sit beside the commitment or inside it; it is carried through
 * untouched.
 */
export function verifyCommitment(input: unknown): CommitmentResult {
  if (!isObject(input)) {
    const r = checkCommitment(verifyTimeline([]), undefined);
    return { ...r, reasons: ['not_object'], verdict: 'invalid', checks: [{ name: 'object', ok: false, detail: 'expected {timeline, commitment}' }] };
  }
  if (!has(input, 'timeline') && !has(input, 'commitment') && has(input, 'final_entry_digest')) {
    // A bare commitment: it can only be judged against the timeline it names.
    const r = checkCommitment(verifyTimeline([]), input);
    const detail = 'an endpoint commitment is checked against its timeline: give {"timeline": [...], "commitment": {...}}, or `aer1 verify --kind chain --commitment COMMITMENT TIMELINE`';
    return { ...r, reasons: ['missing_field:timeline'], verdict: 'invalid', binding: false, checks: [{ name: 'timeline.present', ok: false, detail }, ...r.checks.filter((c) => c.name === 'commitment.format')] };
  }
  const timeline = verifyTimeline(input.timeline);
  return checkCommitment(timeline, has(input, 'commitment') ? input.commitment : undefined, input);
}
