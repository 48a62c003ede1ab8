/**
 * `npm run worker` (node dist/src/worker.js): a verification worker. A Nest
 * application context without HTTP that processes the BullMQ verification
 * queue against the same database and Redis as the API. Run any number of
 * them, on any machine that reaches both. Needs DATABASE_URL and REDIS_URL;
 * WORKER_CONCURRENCY (default 1), QUEUE_PREFIX (default aer1).
 * Logs JSON lines on stdout (pino, LOG_LEVEL as the API): `worker ready` once
 * it takes jobs, then one `chunk verified` line per chunk.
 */
import 'reflect-metadata';
import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { Logger, LoggerModule } from 'nestjs-pino';
import { CommonModule } from './common/common.module';
import { AppConfig, validateConfig } from './config/configuration';
import { DatabaseModule } from './database/database.module';
import { EventLedgerModule } from './ledger/ledger.module';
import { LogTreeModule } from './log/log-tree.module';
import { ProjectionsModule } from './projections';
import { MetricsModule } from './metrics/metrics.module';
import { readQueueOptions, VERIFICATION_QUEUE } from './verification-queue/queue-options';
import { VerificationQueueModule } from './verification-queue/verification-queue.module';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class WorkerModule {
  static register(env: Record<string, string | undefined> = process.env): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, ignoreEnvVars: true, load: [() => validateConfig(env)] }),
        // The API's logger (pino, JSON lines), without HTTP.
        LoggerModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<AppConfig, true>) => ({
            pinoHttp: { level: config.get('LOG_LEVEL', { infer: true }) ?? (env.NODE_ENV === 'test' ? 'silent' : 'info'), autoLogging: false },
          }),
        }),
        CommonModule,
        DatabaseModule,
        MetricsModule,
        EventLedgerModule,
        LogTreeModule,
        ProjectionsModule,
        VerificationQueueModule.forWorker(env),
        WebhooksModule.forWorker(env),
      ],
    };
  }
}

/** Start a worker (also used by the tests: several in one process, each its own context). Logs `worker ready` when it takes jobs. */
export async function createWorker(env: Record<string, string | undefined> = process.env): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.register(env), { bufferLogs: true, abortOnError: false });
  const logger = app.get(Logger);
  app.useLogger(logger);
  app.enableShutdownHooks();
  await app.init();
  const o = readQueueOptions(env);
  logger.log({ msg: 'worker ready', queue: VERIFICATION_QUEUE, prefix: o.prefix, concurrency: o.concurrency, chunk_size: o.chunkSize, pid: process.pid }, 'VerificationWorker');
  return app;
}

if (require.main === module) {
  createWorker()
    .then(() => {
      process.send?.('ready');
    })
    .catch((e: unknown) => {
      process.stderr.write(`aer1-ledger worker: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
