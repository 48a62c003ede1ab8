import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import { Queue, Worker } from 'bullmq';
import { AppConfig } from '../config/configuration';
import { redisOptionsFromUrl, VerificationQueueOptions, workerConnection } from '../verification-queue/queue-options';
import { dropConnectionIfUnreachable, redisUnreachable } from '../verification-queue/redis-shutdown';
import { RetentionService } from './retention.service';

/** The BullMQ queue of retention runs (with REDIS_URL), and the id of its job scheduler. */
export const RETENTION_QUEUE = 'retention';
export const RETENTION_SCHEDULER_ID = 'retention-check';
/** Token of the queue settings (REDIS_URL, QUEUE_PREFIX) the scheduler uses. */
export const RETENTION_QUEUE_OPTIONS = Symbol('RETENTION_QUEUE_OPTIONS');

/**
 * Runs retention every RETENTION_CHECK_INTERVAL_MS, in API processes only
 * (not in CLI commands, which have no HTTP server). Without REDIS_URL: a
 * timer in this process (one run at a time). With it: a BullMQ job
 * scheduler (repeatable job `retention-check`, upserted by every replica,
 * so there is one) whose jobs are taken by one replica's worker each; a
 * run that overlaps another still erases nothing twice (each page is
 * re-checked inside its write). The short-period warning is logged once at start.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Retention');
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private queue: Queue | null = null;
  private worker: Worker | null = null;
  private stopped = false;

  constructor(
    private readonly retention: RetentionService,
    private readonly adapter: HttpAdapterHost,
    @Inject(RETENTION_QUEUE_OPTIONS) private readonly options: Pick<VerificationQueueOptions, 'redisUrl' | 'prefix'>,
    config: ConfigService<AppConfig, true>,
  ) {
    this.intervalMs = config.get('RETENTION_CHECK_INTERVAL_MS', { infer: true });
  }

  /** Whether runs are scheduled in this process (an API process), and how. */
  get mode(): 'off' | 'in_process' | 'redis' {
    if (!this.adapter.httpAdapter) return 'off';
    return this.options.redisUrl ? 'redis' : 'in_process';
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.mode === 'off') return;
    try {
      for (const w of await this.retention.shortPeriodWarnings()) this.logger.warn(w);
    } catch (e) {
      this.logger.warn(`retention periods not read at start: ${message(e)}`);
    }
    if (this.mode === 'in_process') {
      this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
      this.timer.unref();
      return;
    }
    const url = this.options.redisUrl!;
    this.queue = new Queue(RETENTION_QUEUE, { connection: { ...redisOptionsFromUrl(url), maxRetriesPerRequest: 1, connectTimeout: 2000 }, prefix: this.options.prefix });
    this.queue.on('error', (e: Error) => this.logger.debug?.(`redis: ${e.message}`));
    this.worker = new Worker(RETENTION_QUEUE, async () => this.runOnce(true), { connection: workerConnection(url), prefix: this.options.prefix, concurrency: 1, lockDuration: 60_000 });
    this.worker.on('error', (e: Error) => this.logger.warn(`redis: ${e.message}`));
    void this.schedule(); // not awaited: a Redis that does not answer never holds the start
  }

  /** Upsert the job scheduler (every replica does; one scheduler results); retried every interval while Redis does not answer. */
  private async schedule(): Promise<void> {
    if (this.stopped || !this.queue) return;
    try {
      await this.queue.upsertJobScheduler(RETENTION_SCHEDULER_ID, { every: this.intervalMs }, { name: 'retention-run', opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } });
    } catch (e) {
      this.logger.warn(`retention not scheduled (Redis): ${message(e)}; trying again in ${this.intervalMs} ms`);
      this.timer = setTimeout(() => void this.schedule(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** One run; with `rethrow` (a BullMQ job) a failure fails the job, else it is logged. Runs in this process never overlap. */
  async runOnce(rethrow = false): Promise<unknown> {
    if (this.running || this.stopped) return null;
    const run = this.retention.run(new Date(), () => this.stopped);
    this.running = run;
    try {
      const r = await run;
      return { erased: r.erased, scanned: r.scanned, erasures: r.erasures.map((e) => ({ erasure_id: e.erasure_id, count: e.count })) };
    } catch (e) {
      this.logger.error(`retention run failed: ${message(e)}`);
      if (rethrow) throw e;
      return null;
    } finally {
      this.running = null;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.worker) {
      if (await redisUnreachable(this.worker)) await this.worker.close(true);
      else await this.worker.close();
    }
    await this.running?.catch(() => undefined);
    if (this.queue) {
      await dropConnectionIfUnreachable(this.queue);
      await this.queue.close().catch(() => undefined);
    }
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
