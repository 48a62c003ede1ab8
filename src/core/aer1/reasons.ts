/**
 * The AER-1 verification reason codes (`../shared/vectors/README.md`): the
 * closed list every verifier of the core reports from, so a new code must be
 * added here (and to the vectors' README) before any check can use it.
 */
export const REASON_CODES = [
  'not_object',
  'not_array',
  'invalid_id',
  'unsupported_schema_version',
  'invalid_timestamp',
  'invalid_tool',
  'unknown_provenance_class',
  'invalid_base64',
  'invalid_utf8',
  'invalid_output_hash_format',
  'output_hash_mismatch',
  'invalid_verification_status',
  'invalid_status',
  'canonical_byte_length_mismatch',
  'unsupported_hash_algorithm',
  'empty_timeline',
  'invalid_entry',
  'invalid_seq',
  'invalid_close',
  'genesis_prev_digest',
  'seq_not_contiguous',
  'job_id_mismatch',
  'close_not_last',
  'not_closed',
  'link_mismatch',
  'historical_06_construction',
  'invalid_commitment',
  'commitment_job_id_mismatch',
  'commitment_entry_count_mismatch',
  'commitment_final_digest_mismatch',
  'invalid_type',
  'unsupported_version',
  'receipt_id_equals_workflow_id',
  'empty_steps',
  'invalid_step',
  'invalid_step_timestamp',
  'step_seq_not_contiguous',
  'duplicate_step_receipt_id',
  'merkle_root_mismatch',
  'step_receipt_missing',
  'step_receipt_invalid',
  'step_receipts_unavailable',
] as const;

/**
 * Workflow findings (S8.2 step 5): reported beside the verdict, never a
 * reason code, so the corpus' verdicts and reasons are unchanged.
 */
export const WORKFLOW_FINDING_CODES = ['step_status_mismatch', 'step_receipt_hash_mismatch', 'verify_url_foreign'] as const;

/** A member the schema requires is absent (`missing_field:<name>`) or has the wrong type or form (`invalid_field:<name>`). */
export type FieldReasonCode = `missing_field:${string}` | `invalid_field:${string}`;

/** One AER-1 verification reason code. */
export type ReasonCode = (typeof REASON_CODES)[number] | FieldReasonCode;

const KNOWN: ReadonlySet<string> = new Set(REASON_CODES);

/** True when `r` is one of {@link REASON_CODES} or a field code with a snake_case member name. */
export function isReasonCode(r: string): r is ReasonCode {
  return KNOWN.has(r) || /^(missing_field|invalid_field):[a-z_]+$/.test(r);
}
