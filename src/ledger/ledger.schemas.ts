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
  Page: { type: 'object', additionalProperties: true, description: 'The data of a public page (with Accept: application/json).' },
};
