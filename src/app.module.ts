import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { ThrottlerModule } from '@nestjs/throttler';
import { LoggerModule } from 'nestjs-pino';
import { requestLogOptions } from './common/request-log';
import { AuthModule } from './auth/auth.module';
import { CommonModule } from './common/common.module';
import { FallbackThrottlerStorage, IPV6_CLIENT_PREFIX, PublicReadGuard, RATE_WINDOW_SECONDS, RateLimitModule } from './common/rate-limit';
import { AppConfig, validateConfig } from './config/configuration';
import { DatabaseModule } from './database/database.module';
import { HealthController } from './health/health.controller';
import { LedgerHttpModule, EventLedgerModule } from './ledger/ledger.module';
import { LogModule, LogReadModule } from './log/log.module';
import { LogTreeModule } from './log/log-tree.module';
import { ProjectionsModule } from './projections';
import { ReceiptsModule } from './receipts/receipts.module';
import { OutcomesModule } from './outcomes/outcomes.module';
import { ErasureModule } from './erasure/erasure.module';
import { RetentionModule } from './erasure/retention.module';
import { CoverageModule } from './coverage/coverage.module';
import { WorkflowsModule } from './workflows/workflows.module';
import { PublicPagesModule } from './public-pages/public-pages.module';
import { BadgesModule } from './badges/badges.module';
import { TimelinesModule } from './timelines/timelines.module';
import { EvidenceModule } from './evidence/evidence.module';
import { OtlpModule } from './otlp/otlp.module';
import { readQueueOptions } from './verification-queue/queue-options';
import { VerificationQueueModule } from './verification-queue/verification-queue.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { MetricsHttpModule, MetricsModule } from './metrics/metrics.module';

/**
 * The service. `env` overrides process.env (tests pass their own DATABASE_URL
 * and keys); configuration is validated at start.
 */
@Module({})
export class AppModule {
  static register(env: Record<string, string | undefined> = process.env): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, ignoreEnvVars: true, load: [() => validateConfig(env)] }),
        LoggerModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<AppConfig, true>) => ({
            // No per-request middleware from nestjs-pino: its AsyncLocalStorage turns on promise hooks for
            // every promise of every request (measured: 22% of a single POST's CPU). Requests are logged by
            // pino-http, a Fastify onRequest hook over the same logger (app.factory.ts, requestLogHook).
            forRoutes: [],
            pinoHttp: requestLogOptions(config.get('LOG_LEVEL', { infer: true }) ?? (env.NODE_ENV === 'test' ? 'silent' : 'info'), env.NODE_ENV !== 'test'),
          }),
        }),
        ThrottlerModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<AppConfig, true>) => ({
            throttlers: [{ name: 'default', ttl: RATE_WINDOW_SECONDS * 1000, limit: config.get('VERIFY_RATE_LIMIT', { infer: true }) }],
            ipv6SubnetPrefix: IPV6_CLIENT_PREFIX,
            storage: new FallbackThrottlerStorage(readQueueOptions(env).redisUrl, readQueueOptions(env).prefix),
          }),
        }),
        RateLimitModule,
        TerminusModule,
        CommonModule,
        DatabaseModule,
        MetricsModule,
        MetricsHttpModule,
        EventLedgerModule,
        LogTreeModule,
        ProjectionsModule,
        LedgerHttpModule,
        LogReadModule,
        LogModule,
        AuthModule,
        ReceiptsModule,
        OutcomesModule,
        ErasureModule,
        RetentionModule.forRoot(env),
        CoverageModule,
        WorkflowsModule,
        PublicPagesModule,
        BadgesModule,
        TimelinesModule,
        EvidenceModule,
        OtlpModule,
        VerificationQueueModule.forRoot(env),
        WebhooksModule.forRoot(env),
      ],
      controllers: [HealthController],
      providers: [{ provide: APP_GUARD, useClass: PublicReadGuard }],
    };
  }
}
