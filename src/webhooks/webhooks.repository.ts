import { Queryable } from '../database/rows';
import type { WebhookEventType } from './webhook.events';

/** A webhook subscription as listed (never its secret). */
export interface WebhookSubscription {
  id: string;
  url: string;
  events: WebhookEventType[];
  /** The key that created it (its owner may list and delete it). */
  key_id: string;
  key_name: string;
  owner: string | null;
  created_at: string;
}

interface Row {
  id: string;
  url: string;
  events: string;
  key_id: string;
  key_name: string;
  owner: string | null;
  created_at: string;
}

const COLUMNS = 'id, url, events, key_id, key_name, owner, created_at';

function toSubscription(r: Row): WebhookSubscription {
  return { id: r.id, url: r.url, events: JSON.parse(r.events) as WebhookEventType[], key_id: r.key_id, key_name: r.key_name, owner: r.owner ?? null, created_at: r.created_at };
}

/**
 * The `webhook_subscriptions` table (an operational table like `api_keys`,
 * not a projection: see its migration): its SQL, rows and mapping. Every
 * method runs on the unit of work it is given.
 */
export class WebhooksRepository {
  /** Insert a subscription with its signing secret (`whsec_...`), at position `position` of the event feed (it gets the events after it). */
  async insert(q: Queryable, s: WebhookSubscription & { secret: string }, position: number): Promise<void> {
    await q.query('INSERT INTO webhook_subscriptions (id, url, events, secret, key_id, key_name, owner, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      s.id,
      s.url,
      JSON.stringify(s.events),
      s.secret,
      s.key_id,
      s.key_name,
      s.owner,
      s.created_at,
      position,
    ]);
  }

  /** Subscriptions of key `keyId`, and of keys of `owner` (null: none), whose key is not revoked. */
  async counts(q: Queryable, keyId: string, owner: string | null): Promise<{ key: number; owner: number }> {
    const live = 'FROM webhook_subscriptions s LEFT JOIN api_keys k ON k.id = s.key_id WHERE k.revoked_at IS NULL';
    const key = await q.query<{ n: number | string }>(`SELECT COUNT(*) AS n ${live} AND s.key_id = ?`, [keyId]);
    const own = owner === null ? [{ n: 0 }] : await q.query<{ n: number | string }>(`SELECT COUNT(*) AS n ${live} AND s.owner = ?`, [owner]);
    return { key: Number(key[0].n), owner: Number(own[0].n) };
  }

  /** Every subscription, oldest first. */
  async list(q: Queryable): Promise<WebhookSubscription[]> {
    return (await q.query<Row>(`SELECT ${COLUMNS} FROM webhook_subscriptions ORDER BY created_at, id`)).map(toSubscription);
  }

  /** One subscription, or null. */
  async get(q: Queryable, id: string): Promise<WebhookSubscription | null> {
    const r = (await q.query<Row>(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = ?`, [id]))[0];
    return r ? toSubscription(r) : null;
  }

  /** The URL and signing secret of a subscription, or null when it was deleted. */
  async target(q: Queryable, id: string): Promise<{ url: string; secret: string } | null> {
    return (await q.query<{ url: string; secret: string }>('SELECT url, secret FROM webhook_subscriptions WHERE id = ?', [id]))[0] ?? null;
  }

  /** Delete a subscription (a no-op when absent). */
  async delete(q: Queryable, id: string): Promise<void> {
    await q.query('DELETE FROM webhook_subscriptions WHERE id = ?', [id]);
  }
}

/** One event of the webhook feed. */
export interface FeedEvent {
  position: number;
  type: WebhookEventType;
  /** The JSON body `{"type", "timestamp", "data"}`, fixed when the event was recorded. */
  body: string;
}

/** A subscription with work due: where it stands in the feed and how to reach it. */
export interface DueSubscription {
  id: string;
  url: string;
  secret: string;
  events: WebhookEventType[];
  key_id: string;
  owner: string | null;
  position: number;
  attempts: number;
  /** The position of the next event of a subscribed type after `position`, or null (none: the subscription is only behind by others' types). */
  next: number | null;
}

/**
 * The webhook event feed (`webhook_events`) and the delivery state kept on
 * each subscription row (position, attempts, next_attempt_at, lease): see
 * migration 1764560000000-WebhookPositions. Times are epoch milliseconds.
 * Every method runs on the unit of work it is given; the dispatcher calls
 * those that write inside `DatabaseService.write` (serialized with every
 * write, across processes too), so a read then an update there is atomic.
 */
export class WebhookFeedRepository {
  /**
   * Record an event: its position, or the position of the event already
   * recorded with this `type` and `key` (recorded once).
   */
  async append(q: Queryable, type: WebhookEventType, key: string, body: string, createdAt: string): Promise<number> {
    const added = await q.query<{ position: number | string }>('INSERT INTO webhook_events (type, event_key, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (type, event_key) DO NOTHING RETURNING position', [type, key, body, createdAt]);
    if (added.length > 0) return Number(added[0].position);
    const had = await q.query<{ position: number | string }>('SELECT position FROM webhook_events WHERE type = ? AND event_key = ?', [type, key]);
    return Number(had[0].position);
  }

  /** The newest event's position (0: none yet). */
  async head(q: Queryable): Promise<number> {
    return Number((await q.query<{ p: number | string | null }>('SELECT MAX(position) AS p FROM webhook_events'))[0]?.p ?? 0);
  }

  /** True when some subscription of a key not revoked is behind the feed's head and due at `now` (a cheap look before a pass's write). */
  async anyDue(q: Queryable, now: number): Promise<boolean> {
    const r = await q.query(
      `SELECT 1 AS due FROM webhook_subscriptions s LEFT JOIN api_keys k ON k.id = s.key_id
       WHERE s.position < (SELECT COALESCE(MAX(position), 0) FROM webhook_events) AND s.next_attempt_at <= ? AND s.lease_until < ? AND k.revoked_at IS NULL LIMIT 1`,
      [now, now],
    );
    return r.length > 0;
  }

  /**
   * At most `limit` subscriptions behind `head`, due at `now` (no retry
   * waiting, no live lease) and whose key is not revoked, longest waiting
   * first, each with the position of its next event of a subscribed type.
   */
  async due(q: Queryable, head: number, now: number, limit: number): Promise<DueSubscription[]> {
    const rows = await q.query<{ id: string; url: string; secret: string; events: string; key_id: string; owner: string | null; position: number | string; attempts: number | string; next: number | string | null }>(
      `SELECT s.id, s.url, s.secret, s.events, s.key_id, s.owner, s.position, s.attempts,
         (SELECT MIN(e.position) FROM webhook_events e WHERE e.position > s.position AND s.events LIKE '%"' || e.type || '"%') AS next
       FROM webhook_subscriptions s LEFT JOIN api_keys k ON k.id = s.key_id
       WHERE s.position < ? AND s.next_attempt_at <= ? AND s.lease_until < ? AND k.revoked_at IS NULL
       ORDER BY s.next_attempt_at, s.id LIMIT ?`,
      [head, now, now, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      secret: r.secret,
      events: JSON.parse(r.events) as WebhookEventType[],
      key_id: r.key_id,
      owner: r.owner ?? null,
      position: Number(r.position),
      attempts: Number(r.attempts),
      next: r.next === null ? null : Number(r.next),
    }));
  }

  /** The event at `position`, or null. */
  async event(q: Queryable, position: number): Promise<FeedEvent | null> {
    const r = (await q.query<{ position: number | string; type: WebhookEventType; body: string }>('SELECT position, type, body FROM webhook_events WHERE position = ?', [position]))[0];
    return r ? { position: Number(r.position), type: r.type, body: r.body } : null;
  }

  /** The first event of one of `types` after `after`, or null. */
  async nextOf(q: Queryable, types: readonly WebhookEventType[], after: number): Promise<FeedEvent | null> {
    const r = (
      await q.query<{ position: number | string; type: WebhookEventType; body: string }>(`SELECT position, type, body FROM webhook_events WHERE position > ? AND type IN (${types.map(() => '?').join(', ')}) ORDER BY position LIMIT 1`, [after, ...types])
    )[0];
    return r ? { position: Number(r.position), type: r.type, body: r.body } : null;
  }

  /** The lease holder and position of a subscription, or null when it was deleted. */
  async state(q: Queryable, id: string): Promise<{ lease_owner: string | null; lease_until: number; position: number; attempts: number; revoked: boolean } | null> {
    const r = (
      await q.query<{ lease_owner: string | null; lease_until: number | string; position: number | string; attempts: number | string; revoked_at: string | null }>(
        'SELECT s.lease_owner, s.lease_until, s.position, s.attempts, k.revoked_at FROM webhook_subscriptions s LEFT JOIN api_keys k ON k.id = s.key_id WHERE s.id = ?',
        [id],
      )
    )[0];
    return r ? { lease_owner: r.lease_owner, lease_until: Number(r.lease_until), position: Number(r.position), attempts: Number(r.attempts), revoked: r.revoked_at !== null && r.revoked_at !== undefined } : null;
  }

  /** Take (or renew) the lease of a subscription for `owner` until `until`. */
  async lease(q: Queryable, id: string, owner: string, until: number): Promise<void> {
    await q.query('UPDATE webhook_subscriptions SET lease_owner = ?, lease_until = ? WHERE id = ?', [owner, until, id]);
  }

  /** Move a subscription to `position` (its event there delivered or given up; nothing of its types before): attempts start again. */
  async advance(q: Queryable, id: string, position: number): Promise<void> {
    await q.query('UPDATE webhook_subscriptions SET position = ?, attempts = 0, next_attempt_at = 0 WHERE id = ?', [position, id]);
  }

  /** A failed attempt on the next event: `attempts` so far, try again at `at`; the lease is released. */
  async retryAt(q: Queryable, id: string, attempts: number, at: number): Promise<void> {
    await q.query('UPDATE webhook_subscriptions SET attempts = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = 0 WHERE id = ?', [attempts, at, id]);
  }

  /** Release the lease of a subscription held by `owner` (a no-op when another holds it). */
  async release(q: Queryable, id: string, owner: string): Promise<void> {
    await q.query('UPDATE webhook_subscriptions SET lease_owner = NULL, lease_until = 0 WHERE id = ? AND lease_owner = ?', [id, owner]);
  }

  /** True when some event was recorded before `before` (ISO time). */
  async anyBefore(q: Queryable, before: string): Promise<boolean> {
    return (await q.query('SELECT 1 AS old FROM webhook_events WHERE created_at < ? LIMIT 1', [before])).length > 0;
  }

  /**
   * Delete events recorded before `before` (ISO time) that every subscription
   * of a key not revoked has passed; the newest event is kept (it is the
   * head new subscriptions start from).
   */
  async prune(q: Queryable, before: string): Promise<void> {
    await q.query(
      `DELETE FROM webhook_events WHERE created_at < ?
         AND position < (SELECT MAX(position) FROM webhook_events)
         AND position <= (SELECT COALESCE(MIN(s.position), 9007199254740991) FROM webhook_subscriptions s LEFT JOIN api_keys k ON k.id = s.key_id WHERE k.revoked_at IS NULL)`,
      [before],
    );
  }

  /** Record a delivery given up (a second record of the same one is ignored). */
  async recordFailure(q: Queryable, f: { subscription_id: string; position: number; webhook_id: string; type: string; attempts: number; reason: string; failed_at: string }): Promise<void> {
    await q.query('INSERT INTO webhook_failures (subscription_id, position, webhook_id, type, attempts, reason, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (subscription_id, position) DO NOTHING', [
      f.subscription_id,
      f.position,
      f.webhook_id,
      f.type,
      f.attempts,
      f.reason,
      f.failed_at,
    ]);
  }

  /** Deliveries given up for a subscription, oldest first. */
  async failures(q: Queryable, id: string): Promise<{ position: number; webhook_id: string; type: string; attempts: number; reason: string; failed_at: string }[]> {
    const rows = await q.query<{ position: number | string; webhook_id: string; type: string; attempts: number | string; reason: string; failed_at: string }>(
      'SELECT position, webhook_id, type, attempts, reason, failed_at FROM webhook_failures WHERE subscription_id = ? ORDER BY position',
      [id],
    );
    return rows.map((r) => ({ ...r, position: Number(r.position), attempts: Number(r.attempts) }));
  }
}
