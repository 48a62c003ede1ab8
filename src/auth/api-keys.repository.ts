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
  created_at: string;
  revoked_at: string | null;
}

const KEY_COLUMNS = 'id, name, role, owner, systems, gateway, publication, created_at, revoked_at';

function toRecord(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    name: r.name,
    role: r.role,
    owner: r.owner ?? null,
    systems: r.systems === null || r.systems === undefined ? null : (JSON.parse(r.systems) as string[]),
    gateway: bool(r.gateway),
    publication: r.publication === 'metadata' ? 'metadata' : 'full',
    created_at: r.created_at,
    revoked_at: r.revoked_at ?? null,
  };
}

/** The `api_keys` table (secrets stored only as SHA-256 hashes): its SQL, rows and mapping. Every method runs on the unit of work it is given. */
export class ApiKeysRepository {
  /** Insert a key (not revoked). */
  async insert(q: Queryable, k: Omit<KeyRecord, 'revoked_at'> & { key_hash: string }): Promise<void> {
    await q.query('INSERT INTO api_keys (id, name, role, key_hash, created_at, revoked_at, owner, systems, gateway, publication) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)', [
      k.id,
      k.name,
      k.role,
      k.key_hash,
      k.created_at,
      k.owner,
      k.systems === null ? null : JSON.stringify(k.systems),
      boolParam(k.gateway),
      k.publication,
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
}
