import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationShutdown, Type } from '@nestjs/common';
import { Job, Queue, Worker } from 'bullmq';
import { ChunkData } from './batch.types';
import { VERIFICATION_QUEUE, VerificationQueueOptions, workerConnection } from './queue-options';
import { dropConnectionIfUnreachable, redisUnreachable } from './redis-shutdown';
import { VerificationProcessor } from './verification.processor';

/** Token of the worker of a context (when it has one): `.worker` is its BullMQ Worker (see {@link workerHandle}). */
export const VERIFICATION_WORKER_HOST = Symbol('VERIFICATION_WORKER_HOST');

/** What {@link VERIFICATION_WORKER_HOST} resolves to: a handle on the host's Worker, not the host itself (an alias would start a second Worker). */
export function workerHandle(host: VerificationWorkerHost): { readonly worker: Worker } {
  return {
    get worker(): Worker {
      return host.worker;
    },
  };
}

/** The BullMQ side of {@link VerificationProcessor}: one job is one chunk. */
@Injectable()
export class VerificationWorkerHost extends WorkerHost implements BeforeApplicationShutdown, OnApplicationShutdown {
  protected readonly log = new Logger('VerificationWorker');

  constructor(
    private readonly processor: VerificationProcessor,
    @InjectQueue(VERIFICATION_QUEUE) private readonly queue: Queue,
  ) {
    super();
    // A connection error (Redis down, or closed while it was still connecting at shutdown) is an
    // 'error' event: without a listener Node throws it as an unhandled error in the process.
    this.queue.on('error', (e: Error) => this.log.debug?.(`redis: ${e.message}`));
  }

  /** The Worker's connection errors: logged, never thrown (BullMQ reconnects by itself). */
  @OnWorkerEvent('error')
  onWorkerError(e: Error): void {
    this.log.warn(`redis: ${e.message}`);
  }

  async process(job: Job<ChunkData>): Promise<{ recorded: number; skipped: number }> {
    const r = await this.processor.processChunk(job.data);
    this.log.debug?.(`job ${job.id}: ${r.recorded} recorded, ${r.skipped} already recorded`);
    return r;
  }

  /**
   * With Redis unreachable, a graceful close never ended: BullMQ queued its
   * QUIT until Redis returned, so SIGTERM left the worker running. Close
   * without waiting then (before anything closes the worker gracefully), and
   * drop the queue's connection too (redis-shutdown.ts): the chunk in hand
   * cannot be acknowledged anyway, its lock expires and it is retried, and
   * recording results is idempotent.
   */
  async beforeApplicationShutdown(): Promise<void> {
    let worker: Worker | undefined;
    try {
      worker = this.worker; // throws when the worker was never created
    } catch {
      worker = undefined;
    }
    if (worker && (await redisUnreachable(worker))) await worker.close(true);
    await dropConnectionIfUnreachable(this.queue);
  }

  async onApplicationShutdown(): Promise<void> {
    // Let the running chunk finish and release its lock (the explorer closes workers too; close() is idempotent).
    await this.worker?.close();
  }
}

/**
 * The worker host class with this deployment's worker options (concurrency,
 * lock and stalled-check timing, blocking connection that never gives up):
 * a subclass per configuration, so several workers in one process can differ.
 */
export function workerHostClass(options: VerificationQueueOptions): Type<VerificationWorkerHost> {
  class ConfiguredVerificationWorkerHost extends VerificationWorkerHost {}
  Processor(VERIFICATION_QUEUE, {
    connection: workerConnection(options.redisUrl!),
    prefix: options.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    maxStalledCount: 2,
  })(ConfiguredVerificationWorkerHost);
  return ConfiguredVerificationWorkerHost;
}
