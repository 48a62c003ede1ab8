import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { dropConnectionIfUnreachable, redisUnreachable } from '../verification-queue/redis-shutdown';
import { ConfigService } from '@nestjs/config';
import { Job, Queue, Worker } from 'bullmq';
import { createHash, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { AppConfig } from '../config/configuration';
import { DatabaseService } from '../database/database.service';
import { producerConnection, VerificationQueueOptions, workerConnection } from '../verification-queue/queue-options';
import { AttemptResult, postOnce } from './webhook-http';
import { WebhookEventType, WebhookPayloads } from './webhook.events';
import { WebhooksRepository } from './webhooks.repository';

/** Injection token: the queue settings (REDIS_URL, QUEUE_PREFIX) the webhook queue shares with the verification queue. */
export const WEBHOOK_QUEUE_OPTIONS = Symbol('WEBHOOK_QUEUE_OPTIONS');

/** The BullMQ queue of webhook deliveries (beside the verification queue, same Redis and prefix). */
export const WEBHOOK_QUEUE = 'webhooks';

/** One delivery: one event to one subscription. The body is fixed when the event is emitted, so every retry sends the same bytes. */
export interface DeliveryJob {
  /** The Standard Webhooks `webhook-id`: the same on every retry of this delivery. */
  delivery_id: string;
  subscription_id: string;
  type: WebhookEventType;
  /** The JSON body `{"type", "timestamp", "data"}`. */
  body: string;
}

/** What became of one attempt, for tests and logs. */
export interface AttemptRecord {
  delivery_id: string;
  subscription_id: string;
  attempt: number;
  result: AttemptResult | { ok: false; status: null; reason: 'subscription deleted' };
}

/** In-process delivery ids remembered (a repeated emit of one event is not delivered twice). */
const SEEN_MAX = 10_000;

/**
 * Emits webhook events and delivers them. `emit(type, payload, eventKey)`
 * queues one delivery per subscription to `type`: with REDIS_URL a BullMQ job
 * (job id = delivery id, `attempts` WEBHOOK_MAX_ATTEMPTS, exponential backoff
 * from WEBHOOK_BACKOFF_MS; every process with this module runs a delivery
 * worker); without it, in this process with the same retries and backoff
 * (pending retries are lost at a restart). The delivery id is derived from
 * the subscription, the type and `eventKey`, so the same event emitted twice
 * is one delivery. Each attempt is signed by the Standard Webhooks scheme
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 with
 * the subscription's `whsec_` secret) and sent only to checked addresses
 * (webhook-http.ts). A 2xx answer ends a delivery; anything else is retried.
 */
@Injectable()
export class WebhookDispatcher implements OnModuleDestroy {
  private readonly log = new Logger('Webhooks');
  private readonly allowPrivate: boolean;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;
  private readonly queue: Queue<DeliveryJob> | null = null;
  private readonly worker: Worker<DeliveryJob> | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly seen = new Set<string>();
  private stopping = false;
  /** Every attempt made in this process, newest last (bounded; read by tests). */
  readonly attempts: AttemptRecord[] = [];

  constructor(
    private readonly db: DatabaseService,
    private readonly subscriptions: WebhooksRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(WEBHOOK_QUEUE_OPTIONS) q: Pick<VerificationQueueOptions, 'redisUrl' | 'prefix'>,
  ) {
    this.allowPrivate = config.get('WEBHOOK_ALLOW_PRIVATE', { infer: true });
    this.maxAttempts = config.get('WEBHOOK_MAX_ATTEMPTS', { infer: true });
    this.backoffMs = config.get('WEBHOOK_BACKOFF_MS', { infer: true });
    this.timeoutMs = config.get('WEBHOOK_TIMEOUT_MS', { infer: true });
    if (q.redisUrl) {
      this.queue = new Queue<DeliveryJob>(WEBHOOK_QUEUE, { connection: producerConnection(q.redisUrl), prefix: q.prefix });
      this.queue.on('error', (e: Error) => this.log.debug?.(`redis: ${e.message}`));
      this.worker = new Worker<DeliveryJob>(WEBHOOK_QUEUE, async (job: Job<DeliveryJob>) => this.runJob(job), {
        connection: workerConnection(q.redisUrl),
        prefix: q.prefix,
        concurrency: 4,
      });
      this.worker.on('error', (e: Error) => this.log.debug?.(`redis: ${e.message}`));
    }
  }

  /** Milliseconds to wait before attempt `n` (2, 3, ...): WEBHOOK_BACKOFF_MS doubled each time, at most an hour (BullMQ's `exponential` backoff, the same curve). */
  delayBefore(n: number): number {
    return Math.min(this.backoffMs * 2 ** Math.max(0, n - 2), 3_600_000);
  }

  /**
   * Queue `type` with `payload` for every subscription to it; returns the
   * delivery ids queued. `eventKey` names the event (a report id, a batch
   * id, a checkpoint size and witness): emitting the same key again queues no
   * second delivery. Without it the event is new each time. Never throws:
   * a webhook failure must not fail the write that caused it (it is logged).
   * The witness machinery calls `emit('ledger.checkpoint.witness_lag', …)`.
   */
  async emit<T extends WebhookEventType>(type: T, payload: WebhookPayloads[T], eventKey: string = randomUUID()): Promise<string[]> {
    try {
      const subs = await this.subscriptions.subscribedTo(this.db, type);
      const body = JSON.stringify({ type, timestamp: new Date().toISOString(), data: payload });
      const jobs: DeliveryJob[] = subs.map((s) => ({ delivery_id: deliveryId(s.id, type, eventKey), subscription_id: s.id, type, body }));
      if (this.queue) {
        await this.queue.addBulk(
          jobs.map((j) => ({
            name: j.type,
            data: j,
            opts: { jobId: j.delivery_id, attempts: this.maxAttempts, backoff: { type: 'exponential', delay: this.backoffMs }, removeOnComplete: { age: 24 * 3600, count: 10_000 }, removeOnFail: { age: 7 * 24 * 3600 } },
          })),
        );
      } else {
        for (const j of jobs) {
          if (this.seen.has(j.delivery_id) || this.stopping) continue;
          this.remember(j.delivery_id);
          this.schedule(j, 1, 0);
        }
      }
      return jobs.map((j) => j.delivery_id);
    } catch (e) {
      this.log.error(`webhook event ${type} not queued: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    }
  }

  private remember(id: string): void {
    this.seen.add(id);
    if (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.values().next().value as string);
  }

  private schedule(job: DeliveryJob, attempt: number, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const run = this.attempt(job, attempt)
        .then((done) => {
          if (done || this.stopping) return;
          if (attempt >= this.maxAttempts) this.log.warn(`webhook delivery ${job.delivery_id} given up after ${attempt} attempts`);
          else this.schedule(job, attempt + 1, this.delayBefore(attempt + 1));
        })
        .finally(() => this.inFlight.delete(run));
      this.inFlight.add(run);
    }, delayMs);
    this.timers.add(timer);
  }

  /** BullMQ processor: one attempt; a failure throws so BullMQ retries it with the same job (and delivery id). */
  private async runJob(job: Job<DeliveryJob>): Promise<void> {
    const done = await this.attempt(job.data, job.attemptsMade + 1);
    if (!done) throw new Error(`webhook delivery ${job.data.delivery_id}: attempt ${job.attemptsMade + 1} failed`);
  }

  /** One signed attempt; true when the delivery is finished (delivered, or its subscription deleted). */
  private async attempt(job: DeliveryJob, attempt: number): Promise<boolean> {
    const target = await this.subscriptions.target(this.db, job.subscription_id);
    if (!target) {
      this.record({ delivery_id: job.delivery_id, subscription_id: job.subscription_id, attempt, result: { ok: false, status: null, reason: 'subscription deleted' } });
      return true;
    }
    const now = new Date();
    const signature = new Webhook(target.secret).sign(job.delivery_id, now, job.body);
    const result = await postOnce(
      target.url,
      job.body,
      { 'webhook-id': job.delivery_id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature },
      { allowPrivate: this.allowPrivate, timeoutMs: this.timeoutMs },
    );
    this.record({ delivery_id: job.delivery_id, subscription_id: job.subscription_id, attempt, result });
    if (!result.ok) this.log.warn(`webhook delivery ${job.delivery_id} attempt ${attempt} failed: ${result.reason}`);
    return result.ok;
  }

  private record(a: AttemptRecord): void {
    this.attempts.push(a);
    if (this.attempts.length > 1000) this.attempts.shift();
  }

  /** Stop: pending in-process retries are dropped, attempts under way finish; the BullMQ worker and queue close. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.inFlight]);
    // Redis gone: close the worker without waiting and drop the queue's connection, or close() waits for
    // Redis (or fails) and the process never ends (as the verification worker does: redis-shutdown.ts).
    if (this.worker && (await redisUnreachable(this.worker))) await this.worker.close(true).catch(() => undefined);
    if (this.queue) await dropConnectionIfUnreachable(this.queue);
    await this.worker?.close().catch(() => undefined);
    await this.queue?.close().catch(() => undefined);
  }
}

/** `msg_` and 32 hex of SHA-256 over the subscription, the type and the event's key: one id per event and subscription, stable across retries. */
export function deliveryId(subscriptionId: string, type: string, eventKey: string): string {
  return `msg_${createHash('sha256').update(`${subscriptionId}\u0000${type}\u0000${eventKey}`).digest('hex').slice(0, 32)}`;
}
