import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { WorkflowsRepositoryModule } from '../workflows/workflows-repository.module';
import { VerificationBatchesRepositoryModule } from './verification-batches-repository.module';
import { BatchDispatcher, InProcessDispatcher, RedisDispatcher } from './dispatchers';
import { producerConnection, QUEUE_OPTIONS, readQueueOptions, VERIFICATION_QUEUE, workerConnection } from './queue-options';
import { queueDashboardModules } from './queue-dashboard';
import { VerificationBatchesController } from './verification-batches.controller';
import { VerificationBatchesListing } from './verification-batches.listing';
import { VerificationBatchesService } from './verification-batches.service';
import { VerificationProcessor } from './verification.processor';
import { VERIFICATION_WORKER_HOST, workerHandle, workerHostClass } from './verification.worker-host';

/**
 * Queue-driven batch verification.
 *
 * - `forRoot(env)` (the API): POST/GET /api/verification-batches. Without
 *   REDIS_URL batches run in process; with it chunks go to BullMQ and are
 *   processed by `npm run worker` processes (and by the API itself only when
 *   RUN_WORKER_IN_API=true).
 * - `forWorker(env)`: no HTTP; registers the BullMQ worker (see src/worker.ts).
 */
@Module({})
export class VerificationQueueModule {
  static forRoot(env: Record<string, string | undefined> = process.env): DynamicModule {
    return VerificationQueueModule.build(env, 'api');
  }

  static forWorker(env: Record<string, string | undefined> = process.env): DynamicModule {
    const options = readQueueOptions(env);
    if (!options.redisUrl) throw new Error('invalid configuration: a worker needs REDIS_URL');
    return VerificationQueueModule.build(env, 'worker');
  }

  private static build(env: Record<string, string | undefined>, mode: 'api' | 'worker'): DynamicModule {
    const options = readQueueOptions(env);
    const providers: Provider[] = [{ provide: QUEUE_OPTIONS, useValue: options }, VerificationProcessor];
    const imports: (DynamicModule | Type)[] = [VerificationBatchesRepositoryModule, ReceiptsRepositoryModule, TimelinesRepositoryModule, WorkflowsRepositoryModule];
    const exports: (symbol | typeof VerificationProcessor | typeof BatchDispatcher)[] = [VerificationProcessor];
    if (options.redisUrl) {
      const url = options.redisUrl;
      imports.push(
        BullModule.forRootAsync({
          useFactory: () => ({ connection: mode === 'api' ? producerConnection(url) : workerConnection(url), prefix: options.prefix }),
        }),
        BullModule.registerQueue({ name: VERIFICATION_QUEUE }),
      );
      if (mode === 'worker' || options.runWorkerInApi) {
        const host = workerHostClass(options);
        // Not `useExisting: host`: @nestjs/bullmq discovers processors by each provider's instance, so an
        // alias of the host is found as a second processor and a second BullMQ Worker starts (twice the
        // concurrency, and that Worker is closed gracefully at shutdown even when Redis is down).
        providers.push(host, { provide: VERIFICATION_WORKER_HOST, useFactory: workerHandle, inject: [host] });
        exports.push(VERIFICATION_WORKER_HOST);
      }
      if (mode === 'api') {
        providers.push({ provide: BatchDispatcher, useClass: RedisDispatcher });
        imports.push(...queueDashboardModules()); // Bull Board at /queues (auditor, admin)
      }
    } else {
      providers.push({ provide: BatchDispatcher, useClass: InProcessDispatcher });
    }
    if (mode === 'api') {
      providers.push(VerificationBatchesService, VerificationBatchesListing);
      exports.push(BatchDispatcher); // /health reports Redis through it
    }
    return {
      module: VerificationQueueModule,
      imports,
      controllers: mode === 'api' ? [VerificationBatchesController] : [],
      providers,
      exports,
    };
  }
}
