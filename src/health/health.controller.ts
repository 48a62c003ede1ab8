import { Controller, Get, HttpStatus, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FreeRead } from '../common/rate-limit';
import { ref } from '../common/openapi';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { Response } from 'express';
import { DatabaseService } from '../database/database.service';
import { BatchDispatcher } from '../verification-queue/dispatchers';

/** The body of `/health`: Terminus's result, with `degraded` when only Redis is down. */
export type HealthAnswer = Omit<HealthCheckResult, 'status'> & { status: HealthCheckResult['status'] | 'degraded' };

/**
 * `/health`: the database and, when REDIS_URL is set, Redis (the verification
 * queue).
 *
 * - 200 `status: "ok"`: everything configured answers.
 * - 200 `status: "degraded"`, `details.redis.status: "down"`: the database is
 *   fine and Redis is not. The API still serves every read and write; only
 *   verification batches answer 503 `queue_unavailable`. A load balancer keeps
 *   routing to it (all replicas share the one Redis: taking them all out
 *   would stop ingestion for a batch-only fault); monitoring alerts on the
 *   body's status.
 * - 503 `status: "error"`: the database does not answer.
 */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly db: DatabaseService,
    private readonly dispatcher: BatchDispatcher,
  ) {}

  @Get()
  @FreeRead()
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ operationId: 'getHealth', summary: 'Database and (when configured) Redis reachability' })
  @ApiResponse({ status: 200, description: '{status: "ok" | "degraded", info, error, details: {database: {status, dialect}, redis?: {status, message?}}}; "degraded": the database is up, Redis is down (batches answer 503)', content: { 'application/json': { schema: ref('Health') } } })
  @ApiResponse({ status: 503, description: '{status: "error", ...}: the database does not answer', content: { 'application/json': { schema: ref('Health') } } })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthAnswer> {
    const checks = [
      async () => {
        const i = this.indicator.check('database');
        return (await this.db.ping()) ? i.up({ dialect: this.db.dialect }) : i.down({ dialect: this.db.dialect });
      },
      async () => {
        const redis = await this.dispatcher.redisHealth();
        if (redis === null) return {}; // no REDIS_URL: batches run in process
        const i = this.indicator.check('redis');
        return redis.up ? i.up() : i.down({ message: redis.message });
      },
    ];
    try {
      return await this.health.check(checks);
    } catch (e) {
      const body = e instanceof ServiceUnavailableException ? (e.getResponse() as HealthCheckResult) : undefined;
      const failed = body?.error ? Object.keys(body.error) : [];
      if (body?.status === 'error' && failed.length === 1 && failed[0] === 'redis') {
        res.status(HttpStatus.OK);
        return { ...body, status: 'degraded' };
      }
      throw e;
    }
  }
}
