import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DatabaseService } from '../database/database.service';
import { LedgerError, NotFoundError } from '../common/errors';
import { assertIdentifier, IDENTIFIER_MAX_LENGTH } from '../common/text';
import { AppConfig } from '../config/configuration';

export const ROLES = ['producer', 'compliance', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** A caller authenticated by API key. The key itself is never kept or logged. */
export interface Principal {
  key_id: string;
  name: string;
  role: Role;
}

function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * API keys: `aer1_` + 43 base64url characters, shown once at creation and
 * stored only as SHA-256. Roles: producer, compliance, auditor, admin.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly db: DatabaseService,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  /** Create a key; returns the secret once. */
  async create(name: string, role: Role): Promise<{ id: string; name: string; role: Role; key: string }> {
    if (!ROLES.includes(role)) throw new LedgerError(422, 'invalid_role', `role must be one of ${ROLES.join(', ')}`);
    if (!name || typeof name !== 'string') throw new LedgerError(422, 'invalid_name', `name must be 1 to ${IDENTIFIER_MAX_LENGTH} characters`);
    assertIdentifier('name', name);
    const key = `aer1_${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    await this.db.write((tx) =>
      tx.query('INSERT INTO api_keys (id, name, role, key_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', [id, name, role, hashKey(key), new Date().toISOString()]),
    );
    return { id, name, role, key };
  }

  /** Revoke a key by id; later requests with it get 401 `key_revoked`. */
  async revoke(id: string): Promise<void> {
    const rows = await this.db.query('SELECT id FROM api_keys WHERE id = ?', [id]);
    if (rows.length === 0) throw new NotFoundError('api_key', id);
    await this.db.write((tx) => tx.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [new Date().toISOString(), id]));
  }

  /** Keys without their secrets. */
  async list(): Promise<{ id: string; name: string; role: string; created_at: string; revoked_at: string | null }[]> {
    return this.db.query('SELECT id, name, role, created_at, revoked_at FROM api_keys ORDER BY created_at');
  }

  /**
   * Authenticate a bearer token. Throws 401 `missing_key`, `invalid_key` or `key_revoked`.
   * LEDGER_ADMIN_KEY, when set, authenticates as admin.
   */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (!token) throw new LedgerError(401, 'missing_key', 'this endpoint needs an API key: Authorization: Bearer <key>');
    const admin = this.config.get('LEDGER_ADMIN_KEY', { infer: true });
    if (admin && safeEqual(token, admin)) return { key_id: 'bootstrap-admin', name: 'LEDGER_ADMIN_KEY', role: 'admin' };
    const rows = await this.db.query<{ id: string; name: string; role: Role; revoked_at: string | null }>('SELECT id, name, role, revoked_at FROM api_keys WHERE key_hash = ?', [hashKey(token)]);
    const k = rows[0];
    if (!k) throw new LedgerError(401, 'invalid_key', 'the API key is not known');
    if (k.revoked_at) throw new LedgerError(401, 'key_revoked', 'the API key was revoked');
    return { key_id: k.id, name: k.name, role: k.role };
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}
