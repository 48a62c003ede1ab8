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
  /** Insert a subscription with its signing secret (`whsec_...`). */
  async insert(q: Queryable, s: WebhookSubscription & { secret: string }): Promise<void> {
    await q.query('INSERT INTO webhook_subscriptions (id, url, events, secret, key_id, key_name, owner, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      s.id,
      s.url,
      JSON.stringify(s.events),
      s.secret,
      s.key_id,
      s.key_name,
      s.owner,
      s.created_at,
    ]);
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

  /** Subscriptions to `type` (the table is small: filtered here, not in SQL, so both dialects read it alike). */
  async subscribedTo(q: Queryable, type: WebhookEventType): Promise<WebhookSubscription[]> {
    return (await this.list(q)).filter((s) => s.events.includes(type));
  }

  /** Delete a subscription (a no-op when absent). */
  async delete(q: Queryable, id: string): Promise<void> {
    await q.query('DELETE FROM webhook_subscriptions WHERE id = ?', [id]);
  }
}
