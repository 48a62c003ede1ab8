/** Request and answer schemas of verification batches (shapes of VerificationBatchesService). */
import { pageOf } from '../../common/common.schemas';
import { arrayOf, nullable, obj, ref, Schema } from '../../common/openapi';

const counts = obj({ valid: { type: 'integer' }, invalid: { type: 'integer' }, historical: { type: 'integer' }, incomplete: { type: 'integer' }, not_found: { type: 'integer' } }, 'per outcome; they add up to `done`; only `valid` is clean');

export const BATCH_SCHEMAS: Record<string, Schema> = {
  BatchRequest: {
    description: '`{targets: [{kind, id}]}`, `{scope: "all"}` or `{scope: {since_position: N}}`.',
    oneOf: [
      { type: 'object', required: ['targets'], properties: { targets: arrayOf(obj({ kind: { type: 'string', enum: ['receipt', 'job', 'workflow'] }, id: { type: 'string' } })) } },
      { type: 'object', required: ['scope'], properties: { scope: { oneOf: [{ type: 'string', enum: ['all'] }, obj({ since_position: { type: 'integer', minimum: 0 } })] } } },
    ],
  },
  BatchQueued: obj({ batch_id: { type: 'string', format: 'uuid' }, total: { type: 'integer' }, status_url: { type: 'string', format: 'uri' } }, 'A batch queued.'),
  BatchResult: obj({ kind: { type: 'string', enum: ['receipt', 'job', 'workflow'] }, id: { type: 'string' }, verdict: ref('Verdict'), reasons: ref('ReasonCodes'), verified_at: { type: 'string', format: 'date-time' } }),
  Batch: obj(
    {
      batch_id: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['queued', 'running', 'completed'] },
      scope: {},
      total: { type: 'integer' },
      done: { type: 'integer' },
      invalid: { type: 'integer', deprecated: true, description: 'deprecated: read `counts`' },
      counts,
      offset: { type: 'integer' },
      limit: { type: 'integer' },
      results: arrayOf(ref('BatchResult')),
      created_at: { type: 'string', format: 'date-time' },
      completed_at: nullable({ type: 'string', format: 'date-time' }),
      requested_by: ref('RecordedBy'),
    },
    'Status and a page of results of a batch.',
  ),
  BatchSummary: obj(
    {
      batch_id: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['queued', 'running', 'completed'] },
      scope: {},
      total: { type: 'integer' },
      done: { type: 'integer' },
      created_at: { type: 'string', format: 'date-time' },
      completed_at: nullable({ type: 'string', format: 'date-time' }),
      position: { type: 'integer' },
      status_url: { type: 'string', format: 'uri' },
    },
    'A verification batch in a list.',
  ),
  BatchPage: pageOf('BatchSummary', 'A page of verification batches in ledger order.'),
};
