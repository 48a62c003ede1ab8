/**
 * The closed code lists of the core (src/core/errors.ts, src/core/aer1/reasons.ts)
 * and `withReasons()`, which puts `reasons: [code]` first in an error's details.
 */
import { ConflictError, HTTP_ERROR_CODES, LEDGER_ERROR_CODES, LedgerError } from '../../src/core/errors';
import { isReasonCode, REASON_CODES } from '../../src/core/aer1';

describe('withReasons', () => {
  test('puts reasons: [code] before the other details, in answer order', () => {
    const e = new ConflictError('timeline_exists', 'm', { job_id: 'j' }).withReasons();
    expect(JSON.stringify({ error: e.code, message: e.message, ...e.details })).toBe('{"error":"timeline_exists","message":"m","reasons":["timeline_exists"],"job_id":"j"}');
  });

  test('keeps reasons the details already carry', () => {
    const e = new LedgerError(422, 'invalid_plan', 'm', { reasons: ['a', 'b'] }).withReasons();
    expect(e.details).toEqual({ reasons: ['a', 'b'] });
  });
});

describe('closed code lists', () => {
  test('no code is listed twice and service and HTTP codes are disjoint', () => {
    expect(new Set(LEDGER_ERROR_CODES).size).toBe(LEDGER_ERROR_CODES.length);
    expect(new Set(REASON_CODES).size).toBe(REASON_CODES.length);
    expect(HTTP_ERROR_CODES.filter((c) => (LEDGER_ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  test('field reason codes name a snake_case member', () => {
    expect(isReasonCode('missing_field:job_id')).toBe(true);
    expect(isReasonCode('invalid_field:Job')).toBe(false);
    expect(isReasonCode('link_mismatch')).toBe(true);
    expect(isReasonCode('timeline_not_valid')).toBe(false);
  });
});
