import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal } from '../auth/api-keys.service';
import { assertOwner, sameOwner } from '../auth/permissions';
import { BadInputError, ConflictError, NotFoundError, UnprocessableError } from '../common/errors';
import { AppConfig } from '../config/configuration';
import { isObject } from '../core/aer1';
import { DatabaseService } from '../database/database.service';
import { AddressRefusedError, resolveAllowed } from './webhook-http';
import { WEBHOOK_EVENT_TYPES, WebhookEventType } from './webhook.events';
import { WebhookFeedRepository, WebhooksRepository, WebhookSubscription } from './webhooks.repository';

/** Longest accepted receiver URL, in characters. */
export const WEBHOOK_URL_MAX = 2048;

/** A new subscription: the signing secret is shown only in this answer. */
export interface CreatedWebhook extends WebhookSubscription {
  /** `whsec_` and 32 random bytes in base64: the Standard Webhooks signing secret. */
  secret: string;
}

/**
 * Webhook subscriptions of compliance teams (POST/GET/DELETE /api/webhooks).
 * A subscription belongs to the key that created it; keys of the same owner
 * (and admins) may list and delete it.
 */
@Injectable()
export class WebhooksService {
  private readonly allowPrivate: boolean;
  private readonly maxPerKey: number;
  private readonly maxPerOwner: number;
  private readonly feed = new WebhookFeedRepository();

  constructor(
    private readonly db: DatabaseService,
    private readonly repo: WebhooksRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.allowPrivate = config.get('WEBHOOK_ALLOW_PRIVATE', { infer: true });
    this.maxPerKey = config.get('WEBHOOK_MAX_PER_KEY', { infer: true });
    this.maxPerOwner = config.get('WEBHOOK_MAX_PER_OWNER', { infer: true });
  }

  /**
   * Subscribe `{url, events}`. 400 `invalid_body` (shape, unknown members);
   * 422 `invalid_webhook_url` (not an absolute http(s) URL, too long, a
   * fragment), `url_has_userinfo`, `unknown_webhook_event` (an empty, repeated
   * or unknown event type), `webhook_address_refused` (the host resolves to a
   * loopback, link-local or private address, or not at all); 409
   * `webhook_limit_key` when the key already holds WEBHOOK_MAX_PER_KEY
   * subscriptions, `webhook_limit_owner` when its owner's keys hold
   * WEBHOOK_MAX_PER_OWNER (subscriptions of revoked keys not counted). The
   * subscription gets the events recorded after it.
   */
  async create(value: unknown, by: Principal): Promise<CreatedWebhook> {
    if (!isObject(value) || typeof value.url !== 'string' || !Array.isArray(value.events)) throw new BadInputError('invalid_body', 'expected {"url": string, "events": [string, ...]}');
    const unknown = Object.keys(value).filter((k) => k !== 'url' && k !== 'events');
    if (unknown.length > 0) throw new BadInputError('invalid_body', `unknown members: ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
    const url = checkUrl(value.url);
    const events = checkEvents(value.events);
    try {
      await resolveAllowed(new URL(url).hostname, this.allowPrivate);
    } catch (e) {
      if (e instanceof AddressRefusedError) throw new UnprocessableError('webhook_address_refused', e.message, { addresses: e.addresses });
      throw e;
    }
    const sub: WebhookSubscription = { id: randomUUID(), url, events, key_id: by.key_id, key_name: by.name, owner: by.owner, created_at: new Date().toISOString() };
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    await this.db.write(async (tx) => {
      // Counted and inserted in one serialized write: concurrent requests cannot both take the last place.
      const n = await this.repo.counts(tx, by.key_id, by.owner);
      if (n.key >= this.maxPerKey) throw new ConflictError('webhook_limit_key', `this key holds ${n.key} webhook subscriptions, the most one key may hold (WEBHOOK_MAX_PER_KEY); delete one first`, { limit: this.maxPerKey });
      if (by.owner !== null && n.owner >= this.maxPerOwner) throw new ConflictError('webhook_limit_owner', `the keys of owner ${JSON.stringify(by.owner)} hold ${n.owner} webhook subscriptions, the most one owner may hold (WEBHOOK_MAX_PER_OWNER); delete one first`, { limit: this.maxPerOwner });
      await this.repo.insert(tx, { ...sub, secret }, await this.feed.head(tx));
    });
    return { ...sub, secret };
  }

  /** The subscriptions `by` may manage (its own and its owner's; every one for an admin), oldest first, without secrets. */
  async list(by: Principal): Promise<WebhookSubscription[]> {
    return (await this.repo.list(this.db)).filter((s) => by.role === 'admin' || sameOwner(by, s));
  }

  /** Delete a subscription: 404 `not_found`; 403 `not_owner` for another owner's. Nothing more is delivered to it (an attempt in flight may still arrive). */
  async delete(id: string, by: Principal): Promise<void> {
    await this.db.write(async (tx) => {
      const s = await this.repo.get(tx, id);
      if (!s) throw new NotFoundError('webhook subscription', id);
      assertOwner(by, { key_id: s.key_id, name: s.key_name, owner: s.owner }, `webhook subscription ${id}`);
      await this.repo.delete(tx, id);
    });
  }
}

function checkUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnprocessableError('invalid_webhook_url', 'url must be an absolute http or https URL');
  }
  if (raw.length > WEBHOOK_URL_MAX) throw new UnprocessableError('invalid_webhook_url', `url is longer than ${WEBHOOK_URL_MAX} characters`);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UnprocessableError('invalid_webhook_url', 'url must be an http or https URL');
  if (u.username !== '' || u.password !== '') throw new UnprocessableError('url_has_userinfo', 'url must not carry a user name or password; authenticate the sender by its signature');
  if (u.hash !== '') throw new UnprocessableError('invalid_webhook_url', 'url must not have a fragment');
  return u.toString();
}

function checkEvents(raw: unknown[]): WebhookEventType[] {
  if (raw.length === 0) throw new UnprocessableError('unknown_webhook_event', `events must name at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`, { known: WEBHOOK_EVENT_TYPES });
  const bad = raw.filter((e) => typeof e !== 'string' || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (bad.length > 0) throw new UnprocessableError('unknown_webhook_event', `unknown event type(s) ${bad.map((e) => JSON.stringify(e)).join(', ')}; known: ${WEBHOOK_EVENT_TYPES.join(', ')}`, { known: WEBHOOK_EVENT_TYPES });
  if (new Set(raw).size !== raw.length) throw new UnprocessableError('unknown_webhook_event', 'events names a type twice');
  return raw as WebhookEventType[];
}
