/**
 * Typed errors. Services throw these; one exception filter maps them to HTTP
 * status codes, so services never throw HttpException.
 */

/** Base class: `code` is a stable reason code, `status` the HTTP status it maps to. */
export class LedgerError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 503,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the request is not well-formed (not JSON, not UTF-8, wrong shape). */
export class BadInputError extends LedgerError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
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
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
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

/** 422: well-formed input that does not verify; `reasons` are AER-1 reason codes. */
export class VerificationFailedError extends LedgerError {
  constructor(message: string, readonly reasons: string[], details: Record<string, unknown> = {}) {
    super(422, 'verification_failed', message, { reasons, ...details });
  }
}

/** 422: input that verifies as AER-1 but breaks a rule of the service (plan validation, etc.). */
export class UnprocessableError extends LedgerError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(422, code, message, details);
  }
}

/** 503: a dependency (database, queue) is unavailable. */
export class UnavailableError extends LedgerError {
  constructor(code: string, message: string) {
    super(503, code, message);
  }
}
