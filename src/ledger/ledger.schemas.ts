/** Answer schemas of the ledger and health endpoints. */
import { nullable, obj, ref, Schema } from '../common/openapi';

const head = obj({ position: { type: 'integer' }, event_hash: nullable({ type: 'string' }) }, 'The newest event (`{position: 0, event_hash: null}` when empty).');

export const LEDGER_SCHEMAS: Record<string, Schema> = {
  LedgerHead: head,
  LedgerVerification: obj(
    {
      verdict: { type: 'string', enum: ['valid', 'invalid'], description: 'the overall result: the chain recomputes from the first event (and matches the given head)' },
      ok: { type: 'boolean', deprecated: true, description: 'deprecated: read `verdict`' },
      checked: { type: 'integer' },
      head: ref('LedgerHead'),
      first_failure: nullable({ type: 'object', additionalProperties: true }),
      tree: ref('TreeAudit'),
    },
    'The ledger hash chain recomputed.',
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
