import { Controller, Get, Req, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeysService } from '../auth/api-keys.service';
import { ApiErrors } from '../common/openapi';
import { FreeRead } from '../common/rate-limit';
import type { AppConfig } from '../config/configuration';
import { LedgerError } from '../common/errors';
import { LedgerMetrics } from './ledger-metrics';

function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * `GET /metrics`: Prometheus text format (prom-client). Never public:
 * - 404 `not_found` unless METRICS_ENABLED=true (the endpoint does not exist then);
 * - readable with `Authorization: Bearer <METRICS_TOKEN>` (when set: a
 *   scrape-only secret for Prometheus) or with an admin API key (LEDGER_ADMIN_KEY
 *   or a key of role admin);
 * - 401 without a key or with an unknown one (`missing_key`, `invalid_key`,
 *   `invalid_authorization`, `key_revoked`), 403 `forbidden_role` for a key of another role.
 * Not counted in the public read budget (it needs a key).
 */
@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: LedgerMetrics,
    private readonly keys: ApiKeysService,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  @Get()
  @FreeRead()
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getMetrics', summary: 'Prometheus metrics (METRICS_ENABLED=true; METRICS_TOKEN or an admin key)' })
  @ApiResponse({ status: 200, description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  @ApiErrors([401, 403, 404], { 403: 'Metrics need an admin key or METRICS_TOKEN.', 404: 'Metrics are disabled (METRICS_ENABLED is not true).' })
  async scrape(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<string> {
    if (!this.metrics.enabled) throw new LedgerError(404, 'not_found', 'no such endpoint: metrics are disabled (METRICS_ENABLED)');
    await this.authorize(req.headers.authorization);
    res.header('Content-Type', this.metrics.contentType);
    res.header('Cache-Control', 'no-store');
    return this.metrics.scrape();
  }

  private async authorize(header: string | string[] | undefined): Promise<void> {
    const token = this.config.get('METRICS_TOKEN', { infer: true });
    const bearer = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    if (token && bearer !== undefined && sameSecret(bearer, token)) return;
    const principal = (await this.keys.fromHeader(header)) ?? (await this.keys.authenticate(undefined));
    if (principal.role !== 'admin') throw new LedgerError(403, 'forbidden_role', `metrics need an admin key or METRICS_TOKEN; the key has role ${principal.role}`);
  }
}
