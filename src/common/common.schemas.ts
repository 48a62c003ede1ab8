/** Component schemas shared by several modules (see src/common/openapi.ts). */
import { arrayOf, ERROR_SCHEMA, nullable, obj, ref, Schema } from './openapi';

export const COMMON_SCHEMAS: Record<string, Schema> = {
  Error: ERROR_SCHEMA,
  Check: obj({ name: { type: 'string' }, ok: nullable({ type: 'boolean', description: 'null: not decided by this check alone' }), detail: { type: 'string' } }, 'One named check of a verification, in order.', ['detail']),
  RecordedBy: nullable(obj({ key_id: { type: 'string', format: 'uuid' }, name: { type: 'string' } }, 'The key that recorded this (null for records from before attribution).')),
  ReasonCodes: arrayOf({ type: 'string', pattern: '^[a-z0-9_.]+$' }, 'Reason codes (never prose).'),
  Verdict: { type: 'string', enum: ['valid', 'invalid', 'historical', 'incomplete'], description: 'The overall result of a verification (the one word the API uses for it).' },
  Limits: arrayOf({ type: 'string' }, 'What this verification does not establish (prose).'),
};

/** `{items, next}`: one page of a list endpoint; `next` is the cursor for `?after=` (null on the last page). */
export function pageOf(item: string, description: string): Schema {
  return obj({ items: arrayOf(ref(item)), next: nullable({ type: 'string', description: 'pass as `after` for the next page; null when this is the last page' }) }, description);
}
