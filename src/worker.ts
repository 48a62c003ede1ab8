/**
 * `npm run worker` (node dist/src/worker.js): a verification worker. A Nest
 * application context without HTTP that processes the BullMQ verification
 * queue against the same database and Redis as the API. Run any number of
 * them, on any machine that reaches both. Needs DATABASE_URL and REDIS_URL;
 * WORKER_CONCURRENCY (default 1), QUEUE_PREFIX (default aer1).
 */
import 'reflect-metadata';
import { DynamicModule, INestApplicationContext, LogLevel, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { CommonModule } from './common/common.module';
import { validateConfig } from './config/configuration';
import { DatabaseModule } from './database/database.module';
import { LedgerModule } from './ledger/ledger.module';
import { VerificationQueueModule } from './verification-queue/verification-queue.module';

@Module({})
export class WorkerModule {
  static register(env: Record<string, string | undefined> = process.env): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, ignoreEnvVars: true, load: [() => validateConfig(env)] }),
        CommonModule,
        DatabaseModule,
        LedgerModule,
        VerificationQueueModule.forWorker(env),
      ],
    };
  }
}

function logLevels(env: Record<string, string | undefined>): LogLevel[] | false {
  const level = env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info');
  if (level === 'silent') return false;
  const all: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
  const upTo = { fatal: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 }[level] ?? 3;
  return all.slice(0, upTo + 1);
}

/** Start a worker (also used by the tests: several in one process, each its own context). */
export async function createWorker(env: Record<string, string | undefined> = process.env): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.register(env), { logger: logLevels(env), abortOnError: false });
  app.enableShutdownHooks();
  await app.init();
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
