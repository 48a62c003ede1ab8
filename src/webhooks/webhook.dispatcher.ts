import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { AppConfig } from '../config/configuration';
import { DatabaseService, Tx } from '../database/database.service';
import { AttemptResult, postOnce } from './webhook-http';
import { WebhookEventType, WebhookPayloads } from './webhook.events';
import { DueSubscription, FeedEvent, WebhookFeedRepository } from './webhooks.repository';

/** What became of one attempt, for tests and logs. */
export interface AttemptRecord {
  delivery_id: string;
  subscription_id: string;
  /** The event's position in the webhook feed. */
  position: number;
  attempt: number;
  result: AttemptResult;
}

/** Subscriptions looked at per pass (the rest wait for the next one). */
const DUE_PER_PASS = 200;
/** Events one claim delivers in a row before its subscription goes back to the queue (others of the owner get their turn). */
const EVENTS_PER_CLAIM = 50;
/** Events every subscription has passed are deleted from the feed this long after they were recorded (7 days). */
export const FEED_RETENTION_MS = 7 * 24 * 3600_000;
/** How often one process prunes the feed. */
const PRUNE_EVERY_MS = 3600_000;
/**
 * Lease beyond one attempt's deadline (the database writes around it). A
 * process that dies holding a lease delays its subscription by at most
 * WEBHOOK_TIMEOUT_MS plus this.
 */
const LEASE_MARGIN_MS = 5_000;

/**
 * Delivers webhooks as catch-up subscriptions on the webhook event feed
 * (`webhook_events`). {@link record} appends an event to the feed inside the
 * write transaction of the ledger event that caused it (or {@link emit} in
 * its own), so an acknowledged ledger write has its webhook event too. Each
 * subscription keeps its own position in the feed; this process (any
 * process with this module: API and verification workers alike, with or
 * without REDIS_URL) leases subscriptions that are behind, delivers their
 * next event and moves the position only after a 2xx answer or after the
 * last attempt failed (the give-up is recorded in `webhook_failures` and
 * logged). A crash or shutdown leaves the position where it was: the event
 * is delivered again after the lease ends (at least once).
 *
 * `webhook-id` is {@link deliveryId}(subscription, position): the same on
 * every attempt and redelivery. Attempts are signed by Standard Webhooks
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 with
 * the subscription's `whsec_` secret) and sent only to checked addresses
 * (webhook-http.ts), within WEBHOOK_TIMEOUT_MS in all. Failed attempts are
 * retried after WEBHOOK_BACKOFF_MS doubled each time (at most an hour), up
 * to WEBHOOK_MAX_ATTEMPTS, one event at a time per subscription, in feed
 * order. At most WEBHOOK_CONCURRENCY attempts run at once in this process,
 * at most WEBHOOK_OWNER_CONCURRENCY of one owner. Subscriptions of a
 * revoked key get nothing more.
 */
@Injectable()
export class WebhookDispatcher implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('Webhooks');
  private readonly feed = new WebhookFeedRepository();
  private readonly allowPrivate: boolean;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly ownerConcurrency: number;
  private readonly graceMs: number;
  private readonly pollMs: number;
  /** This process's name on the leases it takes. */
  private readonly me = `${process.pid}:${randomUUID()}`;
  private readonly abort = new AbortController();
  /** Deliveries running here: subscription id → its owner group and promise. */
  private readonly running = new Map<string, { group: string; done: Promise<void> }>();
  private readonly perGroup = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private passing: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  private prunedAt = 0;
  /** Every attempt made in this process, newest last (bounded; read by tests). */
  readonly attempts: AttemptRecord[] = [];

  constructor(
    private readonly db: DatabaseService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.allowPrivate = config.get('WEBHOOK_ALLOW_PRIVATE', { infer: true });
    this.maxAttempts = config.get('WEBHOOK_MAX_ATTEMPTS', { infer: true });
    this.backoffMs = config.get('WEBHOOK_BACKOFF_MS', { infer: true });
    this.timeoutMs = config.get('WEBHOOK_TIMEOUT_MS', { infer: true });
    this.concurrency = config.get('WEBHOOK_CONCURRENCY', { infer: true });
    this.ownerConcurrency = config.get('WEBHOOK_OWNER_CONCURRENCY', { infer: true });
    this.graceMs = config.get('WEBHOOK_SHUTDOWN_GRACE_MS', { infer: true });
    this.pollMs = config.get('WEBHOOK_POLL_MS', { infer: true });
  }

  /** Start looking for deliveries due (every WEBHOOK_POLL_MS, and at once after an event recorded here). */
  onModuleInit(): void {
    this.tickLater(0);
  }

  /** Milliseconds to wait before attempt `n` (2, 3, ...): WEBHOOK_BACKOFF_MS doubled each time, at most an hour. */
  delayBefore(n: number): number {
    return Math.min(this.backoffMs * 2 ** Math.max(0, n - 2), 3_600_000);
  }

  /**
   * Append `type` with `payload` to the webhook feed inside the write
   * transaction `tx` (so it commits with the ledger event that caused it, or
   * not at all); returns its feed position. `eventKey` names the event (a
   * report id, a batch id, a checkpoint size and witness): recording the same
   * type and key again returns the first one's position and adds nothing.
   * Delivery starts after the commit.
   */
  async record<T extends WebhookEventType>(tx: Tx, type: T, payload: WebhookPayloads[T], eventKey: string): Promise<number> {
    const at = new Date().toISOString();
    const body = JSON.stringify({ type, timestamp: at, data: payload });
    const position = await this.feed.append(tx, type, eventKey, body, at);
    this.db.afterCommit(tx, () => this.wake());
    return position;
  }

  /**
   * {@link record} in a write transaction of its own, for events that are not
   * ledger writes (the witness machinery calls `emit('ledger.checkpoint.witness_lag', …)`).
   * Returns the feed position, or null when it could not be recorded. Never
   * throws (a webhook failure must not fail its caller; it is logged).
   * Without `eventKey` the event is new each time.
   */
  async emit<T extends WebhookEventType>(type: T, payload: WebhookPayloads[T], eventKey: string = randomUUID()): Promise<number | null> {
    try {
      return await this.db.write((tx) => this.record(tx, type, payload, eventKey));
    } catch (e) {
      this.log.error(`webhook event ${type} not recorded: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }

  /** Deliveries given up for subscription `id`, oldest first (what, how often tried, why). */
  failures(id: string): ReturnType<WebhookFeedRepository['failures']> {
    return this.feed.failures(this.db, id);
  }

  /** Look for deliveries due now (after an event committed, or a delivery slot freed). */
  private wake(): void {
    if (this.stopping) return;
    if (this.passing) this.again = true;
    else this.tickLater(0);
  }

  /** Wake once `ms` from now (a retry due before the next poll). */
  private wakeIn(ms: number): void {
    if (this.stopping || ms >= this.pollMs) return;
    const t = setTimeout(() => {
      this.retryTimers.delete(t);
      this.wake();
    }, ms);
    t.unref?.();
    this.retryTimers.add(t);
  }

  private tickLater(ms: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.passing = this.pass()
        .catch((e: unknown) => this.log.warn(`webhook pass failed: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => {
          this.passing = null;
          const now = this.again;
          this.again = false;
          this.tickLater(now ? 0 : this.pollMs);
        });
    }, ms);
    this.timer.unref?.();
  }

  private groupOf(s: { owner: string | null; key_id: string }): string {
    return s.owner !== null ? `owner:${s.owner}` : `key:${s.key_id}`;
  }

  /**
   * One pass: in one write transaction, lease the subscriptions due that fit
   * the free slots (global and per owner), and move those behind only by
   * events of other types to the head; then deliver each leased one.
   */
  private async pass(): Promise<void> {
    if (this.stopping) return;
    if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = Date.now();
      const before = new Date(Date.now() - FEED_RETENTION_MS).toISOString();
      // A read first: a write only when some event is old enough.
      if (await this.feed.anyBefore(this.db, before)) await this.db.write((tx) => this.feed.prune(tx, before));
    }
    if (this.running.size >= this.concurrency) return;
    // A read first: most passes find nothing due and take no write transaction.
    if (!(await this.feed.anyDue(this.db, Date.now()))) return;
    const claimed = await this.db.write(async (tx) => {
      const now = Date.now();
      const head = await this.feed.head(tx);
      const due = await this.feed.due(tx, head, now, DUE_PER_PASS);
      const out: { sub: DueSubscription; event: FeedEvent }[] = [];
      const taken = new Map<string, number>();
      for (const s of due) {
        if (s.next === null) {
          await this.feed.advance(tx, s.id, head);
          continue;
        }
        if (this.running.has(s.id) || this.running.size + out.length >= this.concurrency) continue;
        const g = this.groupOf(s);
        const inGroup = (this.perGroup.get(g) ?? 0) + (taken.get(g) ?? 0);
        if (inGroup >= this.ownerConcurrency) continue;
        const event = await this.feed.event(tx, s.next);
        if (!event) continue;
        await this.feed.lease(tx, s.id, this.me, now + this.timeoutMs + LEASE_MARGIN_MS);
        taken.set(g, (taken.get(g) ?? 0) + 1);
        out.push({ sub: s, event });
      }
      return out;
    });
    if (this.stopping) {
      // Leased while shutdown began: give them back untouched.
      for (const c of claimed) await this.db.write((tx) => this.feed.release(tx, c.sub.id, this.me)).catch(() => undefined);
      return;
    }
    for (const c of claimed) this.start(c.sub, c.event);
  }

  private start(sub: DueSubscription, event: FeedEvent): void {
    const group = this.groupOf(sub);
    this.perGroup.set(group, (this.perGroup.get(group) ?? 0) + 1);
    const done = this.deliver(sub, event)
      .catch((e: unknown) => this.log.warn(`webhook subscription ${sub.id}: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        this.running.delete(sub.id);
        const n = (this.perGroup.get(group) ?? 1) - 1;
        if (n <= 0) this.perGroup.delete(group);
        else this.perGroup.set(group, n);
        this.wake();
      });
    this.running.set(sub.id, { group, done });
  }

  /**
   * Deliver `event` to the leased subscription `sub`, then its next events
   * in order (at most {@link EVENTS_PER_CLAIM}), while attempts succeed; a
   * failed attempt schedules the retry and releases the lease. Positions and
   * attempts change only in a write that first checks the lease is still
   * ours and the key not revoked.
   */
  private async deliver(sub: DueSubscription, first: FeedEvent): Promise<void> {
    let event: FeedEvent | null = first;
    let attempts = sub.attempts;
    for (let n = 0; event && n < EVENTS_PER_CLAIM; n++) {
      const current: FeedEvent = event;
      const id = deliveryId(sub.id, current.position);
      const result = await this.attempt(sub, current, id, attempts + 1);
      if ('aborted' in result && result.aborted) {
        // Shutdown: the position stays; the event is sent again after restart (or by another process).
        await this.db.write((tx) => this.feed.release(tx, sub.id, this.me)).catch(() => undefined);
        return;
      }
      event = await this.db.write(async (tx): Promise<FeedEvent | null> => {
        const st = await this.feed.state(tx, sub.id);
        if (!st || st.lease_owner !== this.me || st.position !== sub.position) return null; // deleted, or the lease was lost
        if (!result.ok && attempts + 1 < this.maxAttempts) {
          const wait = this.delayBefore(attempts + 2);
          await this.feed.retryAt(tx, sub.id, attempts + 1, Date.now() + wait);
          this.wakeIn(wait);
          return null;
        }
        if (!result.ok) {
          await this.feed.recordFailure(tx, { subscription_id: sub.id, position: current.position, webhook_id: id, type: current.type, attempts: attempts + 1, reason: result.reason, failed_at: new Date().toISOString() });
          this.log.warn(`webhook delivery ${id} (subscription ${sub.id}, ${current.type}) given up after ${attempts + 1} attempts: ${result.reason}`);
        }
        await this.feed.advance(tx, sub.id, current.position);
        sub.position = current.position;
        attempts = 0;
        const next = st.revoked || this.stopping ? null : await this.feed.nextOf(tx, sub.events, current.position);
        if (next) await this.feed.lease(tx, sub.id, this.me, Date.now() + this.timeoutMs + LEASE_MARGIN_MS);
        else await this.feed.release(tx, sub.id, this.me);
        return next;
      });
    }
    if (event) await this.db.write((tx) => this.feed.release(tx, sub.id, this.me));
  }

  /** One signed attempt of `event` to `sub`. */
  private async attempt(sub: DueSubscription, event: FeedEvent, id: string, attempt: number): Promise<AttemptResult & { aborted?: true }> {
    const now = new Date();
    const signature = new Webhook(sub.secret).sign(id, now, event.body);
    const result = await postOnce(
      sub.url,
      event.body,
      { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature },
      { allowPrivate: this.allowPrivate, timeoutMs: this.timeoutMs, signal: this.abort.signal },
    );
    this.attempts.push({ delivery_id: id, subscription_id: sub.id, position: event.position, attempt, result });
    if (this.attempts.length > 1000) this.attempts.shift();
    if (!result.ok && !result.aborted) this.log.warn(`webhook delivery ${id} attempt ${attempt} failed: ${result.reason}`);
    return result;
  }

  /**
   * Stop: no new pass or attempt starts; attempts in flight get
   * WEBHOOK_SHUTDOWN_GRACE_MS to finish, then are aborted, their positions
   * left where they were (delivered again after restart), their leases
   * released.
   */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    await this.passing;
    const all = () => Promise.all([...this.running.values()].map((r) => r.done));
    let grace: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([all().then(() => true), new Promise<boolean>((resolve) => (grace = setTimeout(() => resolve(false), this.graceMs)))]);
    clearTimeout(grace);
    if (!inTime) {
      this.abort.abort();
      await all();
    }
  }
}

/** `msg_` and 32 hex of SHA-256 over the subscription and the event's feed position: one id per event and subscription, the same on every attempt and redelivery. */
export function deliveryId(subscriptionId: string, position: number): string {
  return `msg_${createHash('sha256').update(`${subscriptionId}\u0000${position}`).digest('hex').slice(0, 32)}`;
}
