/** Request and answer schemas of the outcome endpoints (issue 18; shapes of OutcomesService and the controller). */
import { arrayOf, nullable, obj, ref, Schema } from '../../common/openapi';

const recordedBy = nullable(obj({ key_id: { type: 'string' }, name: { type: 'string' } }, 'the key that reported it'));

export const OUTCOME_SCHEMAS: Record<string, Schema> = {
  OutcomeReport: {
    type: 'object',
    description: 'The owning system\'s own observation of an effect of a recorded call. Stored byte for byte as sent; `output_hash` must be `sha256:` + hex SHA-256 of the strict-base64 `canonical_bytes`.',
    additionalProperties: false,
    required: ['outcome_id', 'job_id', 'receipt_id', 'effect', 'result', 'observed_at', 'system', 'canonical_bytes', 'output_hash'],
    properties: {
      outcome_id: { type: 'string', format: 'uuid' },
      job_id: { type: 'string' },
      receipt_id: { type: 'string', format: 'uuid', description: 'the recorded call (receipt) this outcome answers' },
      effect: { type: 'string', description: 'e.g. `payment.settled`' },
      result: { type: 'string', enum: ['confirmed', 'failed', 'reversed', 'not_found'] },
      observed_at: { type: 'string', format: 'date-time', description: 'RFC 3339' },
      system: { type: 'string', description: 'the system that owns the effect; the key must speak for it' },
      canonical_bytes: { type: 'string', description: 'strict base64 of the system\'s observation' },
      output_hash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
    },
  },
  OutcomeRecorded: obj(
    {
      outcome: { type: 'string', enum: ['created', 'existing'], description: '`created` (201) or `existing` (200: the same bytes were recorded before)' },
      outcome_id: { type: 'string', format: 'uuid' },
      receipt_id: { type: 'string', format: 'uuid' },
      system: { type: 'string' },
      effect: { type: 'string' },
      result: { type: 'string', enum: ['confirmed', 'failed', 'reversed', 'not_found'] },
      url: { type: 'string', format: 'uri', description: 'the public outcome page' },
      verify_url: { type: 'string', format: 'uri', description: 'the machine verifier' },
      position: { type: 'integer', description: 'ledger position of the OutcomeReported event' },
    },
    'A recorded outcome report.',
  ),
  OutcomeVerification: obj(
    {
      outcome_id: { type: 'string', format: 'uuid' },
      verdict: { type: 'string', enum: ['valid', 'invalid'] },
      reasons: ref('ReasonCodes'),
      output_commitment: obj({
        matches: nullable({ type: 'boolean' }),
        declared: nullable({ type: 'string' }),
        computed: nullable({ type: 'string' }),
      }),
      receipt_id: { type: 'string' },
      job_id: { type: 'string' },
      system: { type: 'string' },
      effect: { type: 'string' },
      result: { type: 'string', description: 'what the system observed, as it states it (not this ledger\'s result: that is `verdict`)' },
      observed_at: { type: 'string' },
      superseded_by: nullable({ type: 'string', description: 'a later outcome of the same receipt, system and effect (the latest wins)' }),
      reported_by: recordedBy,
      checks: arrayOf(obj({ name: { type: 'string' }, ok: nullable({ type: 'boolean' }), detail: { type: 'string' } }, undefined, ['detail'])),
      limits: arrayOf({ type: 'string' }),
      receipt_url: { type: 'string', format: 'uri' },
      url: { type: 'string', format: 'uri' },
    },
    'The stored outcome report re-verified now.',
  ),
};
