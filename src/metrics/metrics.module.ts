import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/configuration';
import { DatabaseService } from '../database/database.service';
import { LedgerMetrics } from './ledger-metrics';
import { MetricsController } from './metrics.controller';

/**
 * {@link LedgerMetrics} for every module (API and worker), enabled by
 * METRICS_ENABLED=true; it observes every write transaction of the
 * {@link DatabaseService}.
 */
@Global()
@Module({
  providers: [
    {
      provide: LedgerMetrics,
      inject: [ConfigService, DatabaseService],
      useFactory: (config: ConfigService<AppConfig, true>, db: DatabaseService) => {
        const metrics = new LedgerMetrics(config.get('METRICS_ENABLED', { infer: true }), { defaultMetrics: true });
        if (metrics.enabled) db.observeWrites(metrics);
        return metrics;
      },
    },
  ],
  exports: [LedgerMetrics],
})
export class MetricsModule {}

/** `GET /metrics` (API processes only). */
@Module({ controllers: [MetricsController] })
export class MetricsHttpModule {}
