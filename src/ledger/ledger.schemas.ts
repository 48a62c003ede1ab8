/** Answer schemas of the ledger and health endpoints. */
import { nullable, obj, ref, Schema } from '../common/openapi';

const head = obj({ position: { type: 'integer' }, event_hash: nullable({ type: 'string' }) }, 'The newest event (`{position: 0, event_hash: null}` when empty).');

export const LEDGER_SCHEMAS: Record<string, Schema> = {
  LedgerHead: head,
  LedgerVerification: obj(
    {
      verdict: {
        type: 'string',
        enum: ['valid', 'invalid'],
        description: 'the overall result: the chain recomputes from the first event (and matches the given head), and every read-model row matches its events. `invalid` is answered with status 409',
      },
      ok: { type: 'boolean', deprecated: true, description: 'deprecated: read `verdict`' },
      checked: { type: 'integer', description: 'events the chain check reached' },
      head: ref('LedgerHead'),
      first_failure: nullable({ type: 'object', additionalProperties: true, description: "the chain's first failure: `{position, reason, detail}`" }),
      expected_head: { type: 'object', additionalProperties: true, description: 'present when head_position and head_hash were given' },
      projections: ref('ProjectionAudit'),
      tree: ref('TreeAudit'),
      erased: obj(
        {
          payload_erased: obj({ count: { type: 'integer' }, positions: { type: 'array', items: { type: 'integer' } } }, 'format 3 events whose payload was erased: leaf recomputed and checked, content gone (positions listed up to 1000)'),
          leaf_not_recomputed: obj({ count: { type: 'integer' }, positions: { type: 'array', items: { type: 'integer' } } }, 'format 1/2 events whose data (part of their leaf) was erased: stored hash taken as it stands, named (up to 1000)'),
        },
        'issue 29: events whose payloads were erased, named; never counted as recomputed content',
      ),
    },
    'The ledger hash chain recomputed and the read models audited against the events.',
    ['expected_head'],
  ),
  ProjectionAudit: obj(
    {
      ok: { type: 'boolean', description: 'every table matches the replay of the events up to `as_of_position`' },
      as_of_position: { type: 'integer', description: 'the ledger position the read models were compared at (one read snapshot)' },
      events_replayed: { type: 'integer' },
      replay_failure: nullable(obj({ position: { type: 'integer' }, type: { type: 'string' }, detail: { type: 'string' } }, 'the first event the projections could not apply')),
      tables: {
        type: 'array',
        items: obj(
          {
            table: { type: 'string' },
            ok: { type: 'boolean' },
            rows_checked: { type: 'integer', description: 'the union of stored and replayed rows' },
            failures: { type: 'integer' },
            first_failure: nullable(
              obj(
                {
                  kind: { type: 'string', enum: ['differs', 'missing', 'unexpected'] },
                  position: nullable({ type: 'integer', description: 'the row\'s ledger position (null for workflow_steps, which has none)' }),
                  key: { type: 'object', additionalProperties: true, description: 'the row\'s primary key' },
                  column: { type: 'string' },
                  stored: {},
                  expected: {},
                  detail: { type: 'string' },
                },
                'the first row of this table that is not what its events make',
                ['column', 'stored', 'expected'],
              ),
            ),
          },
          'one projection table checked',
        ),
      },
    },
    'Every row of every projection table checked against the replay of the events.',
  ),
  Health: obj({ status: { type: 'string', enum: ['ok', 'degraded', 'error'] }, details: { type: 'object', additionalProperties: true } }, 'Database and (when configured) Redis reachability.'),
  StreamedEvent: obj(
    {
      position: { type: 'integer', minimum: 1, description: 'the ledger position (also the SSE `id:`)' },
      stream_id: { type: 'string' },
      stream_position: { type: 'integer', minimum: 1 },
      type: { type: 'string', description: 'the event type, e.g. `ReceiptRecorded`, `TimelineEntryAppended`, `CoverageReportIssued`' },
      recorded_at: { type: 'string', format: 'date-time' },
      format: { type: 'integer', enum: [1, 2], description: 'serialization of the event hash input (`aer1-ledger-event/<format>`)' },
      key_id: nullable({ type: 'string' }),
      key_name: nullable({ type: 'string' }),
      prev_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      event_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      data: nullable({ type: 'string', description: 'the event data\'s JSON text exactly as stored (hashed as is); null when withheld' }),
      data_withheld: { type: 'boolean', enum: [true], description: 'present when `data` is withheld: a `metadata` publication and a compliance key (S13)' },
    },
    'One ledger event as the live stream sends it (the `data:` of an SSE event): every stored column, so the chain can be recomputed.',
    ['data_withheld'],
  ),
  Page: { type: 'object', additionalProperties: true, description: 'The data of a public page (with Accept: application/json).' },
};
