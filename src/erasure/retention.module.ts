import { DynamicModule, Module } from '@nestjs/common';
import { readQueueOptions } from '../verification-queue/queue-options';
import { ErasureModule } from './erasure.module';
import { RETENTION_QUEUE_OPTIONS, RetentionScheduler } from './retention.scheduler';
import { RetentionService } from './retention.service';

/**
 * Retention (issue 29, docs/erasure.md "Retention"): RETENTION_PERIOD and
 * per-key `retention_period`, checked every RETENTION_CHECK_INTERVAL_MS in
 * API processes; with REDIS_URL (and QUEUE_PREFIX) as a BullMQ repeatable job.
 */
@Module({})
export class RetentionModule {
  static forRoot(env: Record<string, string | undefined> = process.env): DynamicModule {
    const q = readQueueOptions(env);
    return {
      module: RetentionModule,
      imports: [ErasureModule],
      providers: [RetentionService, RetentionScheduler, { provide: RETENTION_QUEUE_OPTIONS, useValue: { redisUrl: q.redisUrl, prefix: q.prefix } }],
      exports: [RetentionService, RetentionScheduler],
    };
  }
}
