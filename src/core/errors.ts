/**
 * Typed errors. Services throw these; one exception filter maps them to HTTP
 * status codes, so services never throw HttpException.
 */

/**
 * Every `error` code the API answers with: those the services throw (below)
 * and those the HTTP layer writes itself ({@link HTTP_ERROR_CODES}). Closed:
 * a new code must be added here before anything can throw it.
 */
export const LEDGER_ERROR_CODES = [
  'already_superseded',
  'attestation_key_untrusted',
  'attestation_signature_invalid',
  'canonical_bytes_withheld',
  'checkpoint_not_found',
  'commitment_too_large',
  'content_erased',
  'correction_same_id',
  'duplicate_member',
  'duplicate_step_receipt_id',
  'empty_body',
  'expected_version_conflict',
  'forbidden_role',
  'genesis_prev_digest',
  'invalid_attestation',
  'invalid_authorization',
  'invalid_body',
  'invalid_commitment',
  'invalid_key',
  'invalid_key_options',
  'invalid_name',
  'invalid_plan',
  'invalid_query',
  'invalid_request',
  'invalid_role',
  'invalid_scope',
  'invalid_targets',
  'invalid_utf8',
  'invalid_version',
  'invalid_webhook_url',
  'job_id_mismatch',
  'key_revoked',
  'leaf_index_out_of_range',
  'tile_path_invalid',
  'link_mismatch',
  'log_unavailable',
  'loopback_verify_url',
  'malformed_array',
  'malformed_json',
  'missing_key',
  'no_checkpoint',
  'no_entries',
  'no_plan',
  'not_found',
  'not_object',
  'not_owner',
  'not_plan_owner',
  'otlp_attribute_type',
  'otlp_decode_failed',
  'outcome_id_conflict',
  'plan_erased',
  'plan_exists',
  'plan_version_conflict',
  'position_beyond_head',
  'projection_mismatch',
  'provenance_not_permitted',
  'queue_unavailable',
  'quota_exceeded',
  'receipt_id_conflict',
  'receipt_not_in_job',
  'erasure_target_not_found',
  'timeline_head_erased',
  'not_erasable',
  'already_erased',
  'invalid_erasure',
  'receipt_not_recorded',
  'reserved_tool',
  'seq_not_contiguous',
  'server_busy',
  'bandwidth_exceeded',
  'step_receipt_missing',
  'stream_head_unbacked',
  'stream_limit_key',
  'stream_limit_server',
  'system_not_permitted',
  'timeline_closed',
  'timeline_exists',
  'timeline_imported',
  'timeline_not_closed',
  'timeline_not_valid',
  'timestamp_not_found',
  'too_deep',
  'too_many_spans',
  'too_many_commitments',
  'too_many_targets',
  'tree_mismatch',
  'tree_size_beyond_checkpoint',
  'tile_not_found',
  'leaf_not_found',
  'unknown_webhook_event',
  'unsupported_character',
  'unsupported_media_type',
  'url_has_userinfo',
  'value_too_large',
  'verification_failed',
  'webhook_address_refused',
  'webhook_limit_key',
  'webhook_limit_owner',
  'workflow_id_conflict',
  'wrapped_workflow',
] as const;

/** Codes of errors the HTTP layer answers without a LedgerError (body parser, routing, rate limit, query hardening, unknown errors). */
export const HTTP_ERROR_CODES = [
  'body_too_large',
  'request_aborted',
  'unsupported_encoding',
  'invalid_content_encoding',
  'bad_request',
  'rate_limited',
  'method_not_allowed',
  'internal_error',
  'database_unavailable',
  'repeated_parameter',
] as const;

/** A code a service throws (the `error` member of its answer). */
export type LedgerErrorCode = (typeof LEDGER_ERROR_CODES)[number];

/** Every `error` code of an API answer. */
export type ApiErrorCode = LedgerErrorCode | (typeof HTTP_ERROR_CODES)[number];

/** Base class: `code` is a stable reason code, `status` the HTTP status it maps to. */
export class LedgerError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 503,
    readonly code: LedgerErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  /**
   * Put `reasons: [code]` first in the details (unless they carry their own
   * `reasons`): the answer form of errors whose code is also an AER-1 or
   * service reason, so the throw does not repeat its code. Returns `this`, to
   * be thrown.
   */
  withReasons(): this {
    if (!('reasons' in this.details)) (this as { details: Record<string, unknown> }).details = { reasons: [this.code], ...this.details };
    return this;
  }
}

/** 400: the request is not well-formed (not JSON, not UTF-8, wrong shape). */
export class BadInputError extends LedgerError {
  constructor(code: LedgerErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(400, code, message, details);
  }
}

/** 404: no such record. */
export class NotFoundError extends LedgerError {
  /** `what` in words ("coverage report"); the detail member is its snake_case form (`coverage_report`). */
  constructor(what: string, id: string) {
    super(404, 'not_found', `no ${what} ${id.slice(0, 200)}`, { [what.replace(/\s+/g, '_')]: id.slice(0, 200) });
  }
}

/** 409: the write conflicts with what the ledger holds. */
export class ConflictError extends LedgerError {
  constructor(code: LedgerErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(409, code, message, details);
  }
}

/** 409: an append named a stream version that is no longer current (Emmett's ExpectedVersionConflictError). */
export class ExpectedVersionConflictError extends ConflictError {
  constructor(streamId: string, expected: number, actual: number) {
    super('expected_version_conflict', `stream ${streamId} is at version ${actual}, expected ${expected}`, {
      stream_id: streamId,
      expected,
      actual,
    });
  }
}

/**
 * 409: a read-model row differs from the ledger event it was built from (an
 * edit behind the append-only triggers, or a projection bug). The record is
 * not served: what the page or verifier would show is not what the ledger
 * holds. `table` and `position` name the row; `column` what differs.
 */
export class ProjectionMismatchError extends LedgerError {
  constructor(readonly table: string, readonly position: number | null, detail: string, extra: Record<string, unknown> = {}) {
    super(
      409,
      'projection_mismatch',
      `the ${table} row${position === null ? '' : ` of ledger position ${position}`} does not match the ledger: ${detail}. The record is not served; run GET /api/ledger/verify for the full audit`,
      { table, position, ...extra },
    );
  }
}

/** 422: well-formed input that does not verify; `reasons` are AER-1 reason codes. */
export class VerificationFailedError extends LedgerError {
  constructor(message: string, readonly reasons: string[], details: Record<string, unknown> = {}) {
    super(422, 'verification_failed', message, { reasons, ...details });
  }
}

/** 422: input that verifies as AER-1 but breaks a rule of the service (plan validation, etc.). */
export class UnprocessableError extends LedgerError {
  constructor(code: LedgerErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(422, code, message, details);
  }
}

/** 503: a dependency (database, queue) is unavailable. */
export class UnavailableError extends LedgerError {
  constructor(code: LedgerErrorCode, message: string) {
    super(503, code, message);
  }
}
