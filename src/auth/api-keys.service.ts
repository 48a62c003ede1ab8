import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DatabaseService } from '../database/database.service';
import { ApiKeysRepository } from './api-keys.repository';
import { LedgerError, NotFoundError } from '../common/errors';
import { assertIdentifier, IDENTIFIER_MAX_LENGTH, identifierProblem } from '../core/text';
import { AppConfig } from '../config/configuration';
import { parseRetentionPeriod } from '../erasure/retention-period';

/**
 * `outcome` (issue 18): a system that owns effects (a payment ledger, a CRM)
 * reporting what it observed; it speaks only for the systems in its list.
 */
export const ROLES = ['producer', 'compliance', 'auditor', 'admin', 'outcome', 'privacy'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What the public may read of a key's records (S13): `full` (the default, as
 * before) publishes everything, canonical bytes included; `metadata` publishes
 * the record, its output commitment, provenance, status and verdict, and serves
 * the canonical bytes only to authenticated auditors (and admins). Fixed per
 * record when it is written: redaction happens before publication.
 */
export const PUBLICATIONS = ['full', 'metadata'] as const;
export type Publication = (typeof PUBLICATIONS)[number];

/** What a key is and may do (its secret aside). */
export interface KeyProfile {
  name: string;
  role: Role;
  /** Who the key belongs to; keys of one owner may act on each other's records. Null: the key alone. */
  owner: string | null;
  /**
   * Systems the key may claim as `EXECUTED BY <system>`; null = any provenance
   * class (keys created without a list, as before). See {@link provenancePermitted}.
   * For an `outcome` key: the systems it speaks for (never null, at least one).
   */
  systems: string[] | null;
  /** May claim `OBSERVED VIA GATEWAY` when the key is restricted (systems not null). */
  gateway: boolean;
  publication: Publication;
}

/** A caller authenticated by API key. The key itself is never kept or logged. */
export interface Principal extends KeyProfile {
  key_id: string;
}

/** Options of a new key (`POST /api/keys`, `npm run ledger -- create-key`). */
export interface KeyOptions {
  owner?: string | null;
  systems?: string[] | null;
  gateway?: boolean;
  publication?: Publication;
  /** The key's own retention (issue 29): an ISO 8601 duration (`P30D`) after which its records' payloads are erased; instead of RETENTION_PERIOD. */
  retention_period?: string | null;
}

/** A key as listed (no secret). */
export interface KeyRecord extends KeyProfile {
  id: string;
  /** The key's own retention period (ISO 8601 duration), or null: RETENTION_PERIOD applies. */
  retention_period: string | null;
  created_at: string;
  revoked_at: string | null;
}

/**
 * How long (ms) an authenticated key is trusted without reading its row
 * again. A key revoked through another process (another API instance, or
 * `npm run ledger -- revoke-key`) stops working here within this time; one
 * revoked through this process, at once.
 */
export const KEY_CACHE_MS = 1000;
/** At most this many keys are remembered (the oldest is dropped first). */
const KEY_CACHE_ENTRIES = 10_000;

function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** An owner or system name: the identifier rule (src/common/text.ts). */
function plainName(v: unknown): v is string {
  // The identifier rule does not judge an empty string: an empty owner would make every such key one owner.
  return typeof v === 'string' && v.length > 0 && identifierProblem('name', v) === null;
}

/**
 * Check and normalize key options; throws 422 `invalid_key_options` naming
 * every problem. `systems` lists system names exactly as they follow
 * `EXECUTED BY ` in a provenance class (case-sensitive, no duplicates).
 */
export function checkKeyOptions(o: KeyOptions): Required<KeyOptions> {
  const problems: string[] = [];
  if (o.owner !== undefined && o.owner !== null && !plainName(o.owner)) problems.push(`owner must be 1 to ${IDENTIFIER_MAX_LENGTH} characters without control, invisible or bidi characters or surrounding white space (NFC)`);
  let systems: string[] | null = null;
  if (o.systems !== undefined && o.systems !== null) {
    if (!Array.isArray(o.systems) || o.systems.length > 100) problems.push('systems must be an array of at most 100 system names');
    else {
      const bad = o.systems.filter((s) => !plainName(s));
      if (bad.length > 0) problems.push(`each system must be a name of 1 to ${IDENTIFIER_MAX_LENGTH} characters without control, invisible or bidi characters or surrounding white space (NFC)`);
      if (new Set(o.systems).size !== o.systems.length) problems.push('systems must not repeat a name');
      systems = [...o.systems];
    }
  }
  if (o.gateway !== undefined && typeof o.gateway !== 'boolean') problems.push('gateway must be true or false');
  if (o.publication !== undefined && !PUBLICATIONS.includes(o.publication)) problems.push(`publication must be one of ${PUBLICATIONS.join(', ')}`);
  if (o.retention_period !== undefined && o.retention_period !== null) {
    try {
      if (typeof o.retention_period !== 'string') throw new Error('retention_period must be a string');
      parseRetentionPeriod(o.retention_period);
    } catch (e) {
      problems.push(`retention_period: ${(e as Error).message}`);
    }
  }
  if (problems.length > 0) throw new LedgerError(422, 'invalid_key_options', problems.join('; '), { problems });
  const gateway = o.gateway === true;
  // A gateway flag alone restricts the key too: it may claim the gateway class, not EXECUTED BY.
  if (gateway && systems === null) systems = [];
  return { owner: o.owner ?? null, systems, gateway, publication: o.publication ?? 'full', retention_period: o.retention_period ?? null };
}

/**
 * API keys: `aer1_` + 43 base64url characters, shown once at creation and
 * stored only as SHA-256. Roles: producer, compliance, auditor, admin, outcome. A key
 * may name its owner, the systems it may claim, and its publication setting.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly db: DatabaseService,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly keys: ApiKeysRepository,
  ) {}

  /** Create a key; returns the secret once. 422 `invalid_role`, `invalid_name`, `invalid_key_options`. */
  async create(name: string, role: Role, options: KeyOptions = {}): Promise<Omit<KeyRecord, 'created_at' | 'revoked_at'> & { key: string }> {
    if (!ROLES.includes(role)) throw new LedgerError(422, 'invalid_role', `role must be one of ${ROLES.join(', ')}`);
    if (!name || typeof name !== 'string') throw new LedgerError(422, 'invalid_name', `name must be 1 to ${IDENTIFIER_MAX_LENGTH} characters`);
    assertIdentifier('name', name);
    const o = checkKeyOptions(options);
    if (role === 'outcome') {
      // An outcome key speaks for named systems only: without a list it would speak for none (or, worse, for any).
      if (o.gateway) throw new LedgerError(422, 'invalid_key_options', 'gateway applies to producer keys only', { problems: ['gateway applies to producer keys only'] });
      if (o.systems === null || o.systems.length === 0) {
        throw new LedgerError(422, 'invalid_key_options', 'an outcome key names the systems it speaks for (systems: ["PAYMENTS"])', { problems: ['an outcome key needs a non-empty systems list'] });
      }
    } else if (role !== 'producer' && (o.systems !== null || o.gateway)) {
      // Only a producer's records carry a provenance class: a list on any other key would restrict nothing and mislead.
      throw new LedgerError(422, 'invalid_key_options', `systems and gateway restrict the provenance a producer key may claim (and name the systems an outcome key speaks for); a ${role} key records no provenance`, { problems: ['systems and gateway apply to producer and outcome keys only'] });
    }
    const key = `aer1_${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    await this.db.write((tx) =>
      this.keys.insert(tx, { id, name, role, key_hash: hashKey(key), created_at: new Date().toISOString(), owner: o.owner, systems: o.systems, gateway: o.gateway, publication: o.publication, retention_period: o.retention_period }),
    );
    return { id, name, role, owner: o.owner, systems: o.systems, gateway: o.gateway, publication: o.publication, retention_period: o.retention_period, key };
  }

  /** Revoke a key by id; later requests with it get 401 `key_revoked`. */
  async revoke(id: string): Promise<void> {
    if (!(await this.keys.exists(this.db, id))) throw new NotFoundError('api_key', id);
    await this.db.write((tx) => this.keys.revoke(tx, id, new Date().toISOString()));
    this.revocations++;
    for (const [hash, c] of this.active) if (c.principal.key_id === id) this.active.delete(hash);
    for (const listener of [...this.revokeListeners]) listener(id);
  }

  /**
   * Call `listener(keyId)` after each revocation through this process (open
   * event streams end at once). Returns the unsubscribe function.
   */
  onRevoke(listener: (keyId: string) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  /**
   * Whether the key of `p` is still active, read from its row now (never
   * from the cache): false once it is revoked by any process (the API, the
   * CLI) or gone. The bootstrap admin key (LEDGER_ADMIN_KEY) is never revoked.
   */
  async stillActive(p: Pick<Principal, 'key_id'>): Promise<boolean> {
    if (p.key_id === BOOTSTRAP_ADMIN_ID) return true;
    return (await this.keys.revokedAt(this.db, p.key_id)) === null;
  }

  /** Keys without their secrets. */
  async list(): Promise<KeyRecord[]> {
    return this.keys.list(this.db);
  }

  /** One key as listed (no secret); 404 `not_found` when no key has this id. */
  async get(id: string): Promise<KeyRecord> {
    const k = await this.keys.byId(this.db, id);
    if (!k) throw new NotFoundError('api_key', id);
    return k;
  }

  /** Retention (issue 29): the keys with a retention period of their own (revoked ones too), key id -> ISO 8601 duration. */
  retentionPeriods(): Promise<Map<string, string>> {
    return this.keys.retentionPeriods(this.db);
  }

  /** The owners of the given key ids (a key without an owner answers null); unknown ids are absent. */
  async ownersOf(ids: string[]): Promise<Map<string, { name: string; owner: string | null }>> {
    return this.keys.owners(this.db, ids);
  }

  /**
   * The caller named by an `Authorization` header, or null when there is none
   * (public reads). 401 `invalid_authorization` when it is not `Bearer <key>`,
   * and as {@link authenticate} for an unknown or revoked key.
   */
  async fromHeader(header: string | string[] | undefined): Promise<Principal | null> {
    if (header === undefined) return null;
    const m = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw new LedgerError(401, 'invalid_authorization', 'Authorization must be "Bearer <key>"');
    return this.authenticate(m[1]);
  }

  /**
   * Authenticate a bearer token. Throws 401 `missing_key`, `invalid_key` or `key_revoked`.
   * LEDGER_ADMIN_KEY, when set, authenticates as admin.
   */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (!token) throw new LedgerError(401, 'missing_key', 'this endpoint needs an API key: Authorization: Bearer <key>');
    const admin = this.config.get('LEDGER_ADMIN_KEY', { infer: true });
    if (admin && safeEqual(token, admin)) return { key_id: BOOTSTRAP_ADMIN_ID, name: 'LEDGER_ADMIN_KEY', role: 'admin', owner: null, systems: null, gateway: false, publication: 'full' };
    const hash = hashKey(token);
    const now = performance.now();
    const cached = this.active.get(hash);
    if (cached && now - cached.at < KEY_CACHE_MS) return cached.principal;
    const revocations = this.revocations;
    const r = await this.keys.byHash(this.db, hash);
    if (!r) throw new LedgerError(401, 'invalid_key', 'the API key is not known');
    if (r.revoked_at) {
      this.active.delete(hash);
      throw new LedgerError(401, 'key_revoked', 'the API key was revoked');
    }
    const principal: Principal = { key_id: r.id, name: r.name, role: r.role, owner: r.owner, systems: r.systems, gateway: r.gateway, publication: r.publication };
    // A revocation through this process while the row was read may have read it before it: not cached.
    if (revocations !== this.revocations) return principal;
    if (this.active.size >= KEY_CACHE_ENTRIES) this.active.delete(this.active.keys().next().value as string);
    this.active.set(hash, { principal, at: now });
    return principal;
  }

  /**
   * Keys this process authenticated in the last {@link KEY_CACHE_MS}, by key
   * hash (never the key): a fleet of agents posting one record per tool call
   * would otherwise read the key's row on every request. Only active keys
   * are kept; a revocation through this process drops its key at once.
   */
  private readonly active = new Map<string, { principal: Principal; at: number }>();
  /** Revocations through this process so far: a key row read across one is not cached. */
  private revocations = 0;
  private readonly revokeListeners = new Set<(keyId: string) => void>();
}

/** The key id recorded for the bootstrap admin key (LEDGER_ADMIN_KEY). */
export const BOOTSTRAP_ADMIN_ID = 'bootstrap-admin';

function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}
