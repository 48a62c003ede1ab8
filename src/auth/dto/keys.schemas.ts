/** Request and answer schemas of key management (shapes of ApiKeysService). */
import { arrayOf, nullable, obj, Schema } from '../../common/openapi';
import { ROLES } from '../api-keys.service';

const profile: Record<string, Schema> = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  role: { type: 'string', enum: [...ROLES] },
  owner: nullable({ type: 'string' }),
  systems: nullable(arrayOf({ type: 'string' })),
  gateway: { type: 'boolean' },
  publication: { type: 'string', enum: ['full', 'metadata'] },
  retention_period: nullable({ type: 'string', description: 'ISO 8601 duration (`P30D`): the key\'s own retention; null: RETENTION_PERIOD applies' }),
};

export const KEY_SCHEMAS: Record<string, Schema> = {
  CreateKey: {
    type: 'object',
    required: ['name', 'role'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      role: { type: 'string', enum: [...ROLES] },
      owner: { type: 'string', description: 'groups keys that may act on each other\'s records' },
      systems: arrayOf({ type: 'string' }, 'restricts `EXECUTED BY <system>` to these systems (a producer key); the systems an outcome key speaks for (required for role outcome)'),
      gateway: { type: 'boolean', description: 'permits `OBSERVED VIA GATEWAY` on a restricted key' },
      publication: { type: 'string', enum: ['full', 'metadata'], description: '`full` when absent; `metadata` withholds canonical bytes from all but auditors' },
      retention_period: { type: 'string', description: 'ISO 8601 duration (`P30D`, `PT30S`): payloads of the key\'s records older than it are erased by the ledger (reason `retention`), instead of RETENTION_PERIOD' },
    },
  },
  KeyCreated: obj({ ...profile, key: { type: 'string', description: 'the secret `aer1_...`, shown once' } }, 'A new key (the secret is shown only here).'),
  KeyRecord: obj({ ...profile, created_at: { type: 'string', format: 'date-time' }, revoked_at: nullable({ type: 'string', format: 'date-time' }) }, 'A key without its secret.'),
};
