/** Request and answer schemas of the erasure endpoints (issue 29; shapes of ErasureService and the controller). */
import { obj, Schema } from '../../common/openapi';

export const ERASURE_SCHEMAS: Record<string, Schema> = {
  ErasureRequest: {
    type: 'object',
    description: 'What to erase, why and on which basis. At least one target; at most 1000 targets together. `reason` and `legal_basis` are public (shown on the erased records\' pages): never put personal data in them.',
    additionalProperties: false,
    required: ['reason', 'legal_basis'],
    properties: {
      receipt_ids: { type: 'array', items: { type: 'string' }, description: 'receipts to erase' },
      job_ids: { type: 'array', items: { type: 'string' }, description: "jobs: their entries (or import), commitments, the receipts their entries name that the job's own writers recorded, and their outcome reports" },
      positions: { type: 'array', items: { type: 'integer', minimum: 1 }, description: 'events by ledger position (erasable types only)' },
      reason: { type: 'string', maxLength: 2000 },
      legal_basis: { type: 'string', maxLength: 2000, description: 'e.g. `GDPR Art. 17(1)(a)`' },
    },
  },
  ErasureCreated: obj(
    {
      erasure_id: { type: 'string', format: 'uuid' },
      positions: { type: 'array', items: { type: 'integer' }, description: 'the ledger positions whose payloads were erased, in order' },
      erased_at: { type: 'string', format: 'date-time' },
      erasure_position: { type: 'integer', description: 'ledger position of the (first) PayloadsErased event' },
      erasure_positions: { type: 'array', items: { type: 'integer' }, description: 'every PayloadsErased event of this erasure (one per page of positions)' },
      url: { type: 'string', format: 'uri', description: 'GET /api/erasures/{id}' },
      not_erased: obj({ receipt_ids: { type: 'array', items: { type: 'string' } }, reason: { type: 'string' } }, "receipts a named job's entries name but another owner recorded"),
    },
    'An erasure done: the payloads (and salts) of these events are gone for good.',
    ['not_erased'],
  ),
  Erasure: obj(
    {
      erasure_id: { type: 'string', format: 'uuid' },
      erased_at: { type: 'string', format: 'date-time' },
      erased_by: { type: 'string', description: 'the name of the key that erased (on the erased records: `{key_id, name}`)' },
      reason: { type: 'string' },
      legal_basis: { type: 'string' },
      erasure_position: { type: 'integer', description: 'ledger position of the (first) PayloadsErased event' },
      erasure_positions: { type: 'array', items: { type: 'integer' }, description: 'every PayloadsErased event of this erasure (one per page of positions)' },
      positions: { type: 'array', items: { type: 'integer' } },
    },
    'One erasure: who erased which payloads, when, why and on which basis.',
  ),
};
