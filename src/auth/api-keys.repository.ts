import { bool, boolParam, pages, placeholders, Queryable } from '../database/rows';
import type { KeyRecord, Role } from './api-keys.service';

interface KeyRow {
  id: string;
  name: string;
  role: Role;
  owner: string | null;
  systems: string | null;
  gateway: number | string | boolean;
  publication: string;
  retention_period: string | null;
  created_at: string;
  revoked_at: string | null;
}

const KEY_COLUMNS = 'id, name, role, owner, systems, gateway, publication, retention_period, created_at, revoked_at';

function toRecord(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    name: r.name,
    role: r.role,
    owner: r.owner ?? null,
    systems: r.systems === null || r.systems === undefined ? null : (JSON.parse(r.systems) as string[]),
    gateway: bool(r.gateway),
    publication: r.publication === 'metadata' ? 'metadata' : 'full',
    retention_period: r.retention_period ?? null,
    created_at: r.created_at,
    revoked_at: r.revoked_at ?? null,
  };
}

/** The `api_keys` table (secrets stored only as SHA-256 hashes): its SQL, rows and mapping. Every method runs on the unit of work it is given. */
export class ApiKeysRepository {
  /** Insert a key (not revoked). */
  async insert(q: Queryable, k: Omit<KeyRecord, 'revoked_at'> & { key_hash: string }): Promise<void> {
    await q.query('INSERT INTO api_keys (id, name, role, key_hash, created_at, revoked_at, owner, systems, gateway, publication, retention_period) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)', [
      k.id,
      k.name,
      k.role,
      k.key_hash,
      k.created_at,
      k.owner,
      k.systems === null ? null : JSON.stringify(k.systems),
      boolParam(k.gateway),
      k.publication,
      k.retention_period,
    ]);
  }

  /** True when a key with this id exists (revoked or not). */
  async exists(q: Queryable, id: string): Promise<boolean> {
    return (await q.query('SELECT id FROM api_keys WHERE id = ?', [id])).length > 0;
  }

  /** When key `id` was revoked: null while it is active, undefined when there is no such key. */
  async revokedAt(q: Queryable, id: string): Promise<string | null | undefined> {
    const rows = await q.query<{ revoked_at: string | null }>('SELECT revoked_at FROM api_keys WHERE id = ?', [id]);
    return rows.length === 0 ? undefined : rows[0].revoked_at;
  }

  /** Revoke a key at `at` (a no-op when it is revoked already). */
  async revoke(q: Queryable, id: string, at: string): Promise<void> {
    await q.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id]);
  }

  /** Every key, oldest first. */
  async list(q: Queryable): Promise<KeyRecord[]> {
    return (await q.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at`)).map(toRecord);
  }

  /** The key with this id (no secret), or null. */
  async byId(q: Queryable, id: string): Promise<KeyRecord | null> {
    const r = (await q.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, [id]))[0];
    return r ? toRecord(r) : null;
  }

  /** The key whose secret hashes to `keyHash`, or null. */
  async byHash(q: Queryable, keyHash: string): Promise<KeyRecord | null> {
    const r = (await q.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`, [keyHash]))[0];
    return r ? toRecord(r) : null;
  }

  /** Name and owner of the given key ids; unknown ids are absent. */
  async owners(q: Queryable, ids: string[]): Promise<Map<string, { name: string; owner: string | null }>> {
    const out = new Map<string, { name: string; owner: string | null }>();
    for (const page of pages([...new Set(ids)], 500)) {
      const rows = await q.query<{ id: string; name: string; owner: string | null }>(`SELECT id, name, owner FROM api_keys WHERE id IN (${placeholders(page.length)})`, page);
      for (const r of rows) out.set(r.id, { name: r.name, owner: r.owner ?? null });
    }
    return out;
  }

  /** Retention (issue 29): the ids of keys with a retention period of their own, with it. Revoked keys too: their records age all the same. */
  async retentionPeriods(q: Queryable): Promise<Map<string, string>> {
    const rows = await q.query<{ id: string; retention_period: string }>('SELECT id, retention_period FROM api_keys WHERE retention_period IS NOT NULL');
    return new Map(rows.map((r) => [r.id, r.retention_period]));
  }
}
