import { InjectQueue } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { Queue } from 'bullmq';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnavailableError } from '../common/errors';
import { DatabaseService } from '../database/database.service';
import { eventData } from '../ledger/event';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { ChunkData, chunkJobId, chunkTargets } from './batch.types';
import { VerificationBatchesRepository } from './verification-batches.repository';
import { BatchEvent } from './verification.events';
import { QUEUE_OPTIONS, VERIFICATION_QUEUE, VerificationQueueOptions } from './queue-options';
import { dropConnectionIfUnreachable } from './redis-shutdown';
import { VerificationProcessor } from './verification.processor';
import { LedgerMetrics } from '../metrics/ledger-metrics';

/** How a recorded batch gets processed. */
export abstract class BatchDispatcher {
  /** Throws {@link UnavailableError} `queue_unavailable` when batches cannot be queued now (checked before anything is written). */
  abstract ensureAvailable(): Promise<void>;
  /** Called inside the transaction that records the batch: a failure rolls the batch back. */
  abstract enqueueInTx(chunks: ChunkData[]): Promise<void>;
  /** Called after that transaction committed. */
  abstract afterCommit(batchId: string, chunks: ChunkData[]): void;
  /**
   * For /health: null when no Redis is configured (batches run in process),
   * else whether Redis answers a PING now (at most about 2 s).
   */
  abstract redisHealth(): Promise<null | { up: true } | { up: false; message: string }>;
}

const PING_TIMEOUT_MS = 1500;
/** /health answers within about 2 s even with Redis unreachable (load balancer and compose checks time out at 3 s). */
const HEALTH_PING_TIMEOUT_MS = 1000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * REDIS_URL mode: one BullMQ job per chunk, job id `<batch>_<chunk>`. The jobs
 * are added (one atomic addBulk) inside the database transaction that records
 * the batch, so a failed add rolls the batch back: never half-recorded nor
 * half-queued. Workers retry a chunk that arrives before that commit.
 */
@Injectable()
export class RedisDispatcher extends BatchDispatcher implements BeforeApplicationShutdown, OnApplicationBootstrap {
  private readonly log = new Logger('VerificationQueue');

  constructor(
    @InjectQueue(VERIFICATION_QUEUE) private readonly queue: Queue,
    private readonly db: DatabaseService,
    private readonly batches: VerificationBatchesRepository,
    private readonly events: EventsRepository,
    @Inject(QUEUE_OPTIONS) private readonly options: VerificationQueueOptions,
    @Optional() metrics?: LedgerMetrics,
  ) {
    super();
    // Connection errors are reported to submitters as 503; keep them out of the crash path.
    this.queue.on('error', (e: Error) => this.log.debug?.(`redis: ${e.message}`));
    // Queue depth at each scrape: BullMQ's job counts (every process that shares the queue); none while Redis does not answer.
    metrics?.setQueueDepthSource(async () => {
      const c = await withTimeout(this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'), HEALTH_PING_TIMEOUT_MS, 'redis job counts');
      return { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, delayed: c.delayed ?? 0, failed: c.failed ?? 0 };
    });
  }

  private async ping(timeoutMs = PING_TIMEOUT_MS): Promise<void> {
    const client = await withTimeout(this.queue.client, timeoutMs, 'redis connection');
    await withTimeout((client as unknown as { ping(): Promise<string> }).ping(), timeoutMs, 'redis ping');
  }

  async ensureAvailable(): Promise<void> {
    try {
      await this.ping();
    } catch (e) {
      throw new UnavailableError('queue_unavailable', `the verification queue (Redis) is unavailable, nothing was recorded; try again later (${e instanceof Error ? e.message : String(e)})`);
    }
  }

  async enqueueInTx(chunks: ChunkData[]): Promise<void> {
    if (chunks.length === 0) return;
    try {
      await withTimeout(
        this.queue.addBulk(
          chunks.map((c) => ({
            name: 'verify-chunk',
            data: c,
            opts: {
              jobId: chunkJobId(c.batch_id, c.chunk_index),
              attempts: 8,
              backoff: { type: 'exponential', delay: 500 },
              removeOnComplete: { age: 24 * 3600, count: 10_000 },
              removeOnFail: { age: 7 * 24 * 3600 },
            },
          })),
        ),
        5000,
        'redis addBulk',
      );
    } catch (e) {
      throw new UnavailableError('queue_unavailable', `the verification queue (Redis) did not accept the batch, nothing was recorded; try again later (${e instanceof Error ? e.message : String(e)})`);
    }
  }

  afterCommit(): void {}

  async redisHealth(): Promise<{ up: true } | { up: false; message: string }> {
    try {
      await this.ping(HEALTH_PING_TIMEOUT_MS);
      return { up: true };
    } catch (e) {
      return { up: false, message: e instanceof Error ? e.message : String(e) };
    }
  }

  /**
   * Re-queue the chunks of batches not yet completed, so a batch whose jobs
   * were lost (a Redis restarted without its data) still completes. Job ids
   * are deterministic, so a chunk still queued is not added twice, and a
   * chunk run again records nothing twice. Best effort: with Redis down at
   * start, the API still starts and says so.
   */
  async onApplicationBootstrap(): Promise<void> {
    try {
      const unfinished = await unfinishedBatches(this.db, this.batches, this.events, this.options);
      if (unfinished.length === 0) return;
      await this.ensureAvailable();
      for (const b of unfinished) await this.enqueueInTx(b.chunks);
      this.log.log(`re-queued ${unfinished.length} unfinished verification batch(es)`);
    } catch (e) {
      this.log.warn(`unfinished verification batches not re-queued at start: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * When Redis went away after the connection was up, closing the queue
   * failed (QUIT refused without an offline queue): app.close() rejected,
   * later shutdown hooks were skipped and the process exited 1. See redis-shutdown.ts.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await dropConnectionIfUnreachable(this.queue);
  }
}

/**
 * The chunks of every batch not yet completed, rebuilt from its
 * `VerificationBatchRequested` event (chunking is deterministic, so the
 * chunk indexes, and the queue's job ids, are the same as when it was submitted).
 */
export async function unfinishedBatches(db: DatabaseService, batches: VerificationBatchesRepository, events: EventsRepository, options: VerificationQueueOptions): Promise<{ batchId: string; chunks: ChunkData[] }[]> {
  const out: { batchId: string; chunks: ChunkData[] }[] = [];
  for (const batchId of await batches.unfinishedIds(db)) {
    const json = await events.firstData(db, streams.batch(batchId), 'VerificationBatchRequested');
    if (json === null) continue;
    const d = eventData<BatchEvent, 'VerificationBatchRequested'>('VerificationBatchRequested', json);
    out.push({ batchId: d.batch_id, chunks: chunkTargets(d.batch_id, d.targets, d.chunk_size || options.chunkSize) });
  }
  return out;
}

/**
 * No REDIS_URL: batches run in the API process with the same processor,
 * one chunk at a time, after the 202 answer. Batches left incomplete by a
 * restart are resumed at start (results already recorded are skipped).
 */
@Injectable()
export class InProcessDispatcher extends BatchDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('VerificationQueue');
  private tail: Promise<void> = Promise.resolve();
  private stopping = false;
  /** Chunks handed to {@link afterCommit} and not yet run (or given up), and the one running (0 or 1). */
  private waiting = 0;
  private active = 0;

  constructor(
    private readonly processor: VerificationProcessor,
    private readonly db: DatabaseService,
    private readonly batches: VerificationBatchesRepository,
    private readonly events: EventsRepository,
    @Inject(QUEUE_OPTIONS) private readonly options: VerificationQueueOptions,
    @Optional() metrics?: LedgerMetrics,
  ) {
    super();
    metrics?.setQueueDepthSource(async () => ({ waiting: this.waiting, active: this.active }));
  }

  async ensureAvailable(): Promise<void> {
    if (this.stopping) throw new UnavailableError('queue_unavailable', 'the service is shutting down; nothing was recorded');
  }

  async enqueueInTx(): Promise<void> {}

  async redisHealth(): Promise<null> {
    return null;
  }

  afterCommit(batchId: string, chunks: ChunkData[]): void {
    this.waiting += chunks.length;
    this.tail = this.tail.then(async () => {
      let left = chunks.length;
      try {
        await this.run(batchId, chunks, () => {
          left--;
          this.waiting--;
        });
      } finally {
        this.waiting -= left; // given up or stopping: no longer queued in this process
      }
    });
  }

  /** `started` is called as each chunk starts (for the queue depth). */
  private async run(batchId: string, chunks: ChunkData[], started: () => void): Promise<void> {
    for (const chunk of chunks) {
      if (this.stopping) return;
      started();
      this.active = 1;
      try {
        for (let attempt = 1; ; attempt++) {
          if (this.stopping) return;
          try {
            await this.processor.processChunk(chunk);
            break;
          } catch (e) {
            if (attempt >= 5) {
              this.log.error(`batch ${batchId} chunk ${chunk.chunk_index} failed ${attempt} times, left for the next start: ${e instanceof Error ? e.message : String(e)}`);
              return;
            }
            await sleep(200 * 2 ** attempt);
          }
        }
      } finally {
        this.active = 0;
      }
      await new Promise<void>((resolve) => setImmediate(resolve)); // let requests in between chunks
    }
  }

  /** Resume batches left incomplete by a stop. */
  async onApplicationBootstrap(): Promise<void> {
    for (const { batchId, chunks } of await unfinishedBatches(this.db, this.batches, this.events, this.options)) this.afterCommit(batchId, chunks);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.tail;
  }
}
