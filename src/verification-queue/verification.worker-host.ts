import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationShutdown, Type } from '@nestjs/common';
import { Job } from 'bullmq';
import { ChunkData } from './batch.types';
import { VERIFICATION_QUEUE, VerificationQueueOptions, workerConnection } from './queue-options';
import { VerificationProcessor } from './verification.processor';

/** Token of the worker host of a context (when it has one): `.worker` is its BullMQ Worker. */
export const VERIFICATION_WORKER_HOST = Symbol('VERIFICATION_WORKER_HOST');

/** The BullMQ side of {@link VerificationProcessor}: one job is one chunk. */
@Injectable()
export class VerificationWorkerHost extends WorkerHost implements OnApplicationShutdown {
  protected readonly log = new Logger('VerificationWorker');

  constructor(private readonly processor: VerificationProcessor) {
    super();
  }

  async process(job: Job<ChunkData>): Promise<{ recorded: number; skipped: number }> {
    const r = await this.processor.processChunk(job.data);
    this.log.debug?.(`job ${job.id}: ${r.recorded} recorded, ${r.skipped} already recorded`);
    return r;
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
