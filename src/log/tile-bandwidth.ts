import { Injectable, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectThrottlerStorage, normalizeIp, ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/configuration';
import { LedgerError } from '../common/errors';
import { IPV6_CLIENT_PREFIX, RATE_WINDOW_SECONDS } from '../common/rate-limit';
import { LedgerMetrics } from '../metrics/ledger-metrics';

/** The unit the tile bandwidth budget is counted in: one full hash tile (8 KiB). */
export const TILE_BANDWIDTH_UNIT = 8192;

/**
 * The bandwidth budget of `GET /tile/...` (docs/tiles.md): per client (its
 * address, or behind TRUST_PROXY the forwarded one; IPv6 per /64, as the
 * public read budget), TILE_BANDWIDTH_KIB_PER_MINUTE per minute, counted in
 * {@link TILE_BANDWIDTH_UNIT} units in the throttler's storage (Redis when
 * REDIS_URL is set, so replicas share it). Tiles spend no public read budget.
 */
@Injectable()
export class TileBandwidth {
  /** Units per window (0: no budget). */
  private readonly units: number;

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    config: ConfigService<AppConfig, true>,
    @Optional() private readonly metrics?: LedgerMetrics,
  ) {
    const kib = config.get('TILE_BANDWIDTH_KIB_PER_MINUTE', { infer: true });
    this.units = kib === 0 ? 0 : Math.max(1, Math.floor((kib * 1024) / TILE_BANDWIDTH_UNIT));
  }

  /**
   * Spend `bytes` (rounded up to whole units) of the client's budget; throws
   * 429 `bandwidth_exceeded` with `retry_after_seconds` once it is spent.
   * An answer larger than the whole budget is still served once per window.
   */
  async spend(req: FastifyRequest, bytes: number): Promise<void> {
    if (this.units === 0) return;
    const tracker = normalizeIp(req.ip ?? 'unknown', IPV6_CLIENT_PREFIX);
    const ttl = RATE_WINDOW_SECONDS * 1000;
    const cost = Math.min(this.units, Math.max(1, Math.ceil(bytes / TILE_BANDWIDTH_UNIT)));
    for (let i = 0; i < cost; i++) {
      const r = await this.storage.increment(`tile-bytes:${tracker}`, ttl, this.units, ttl, 'tile-bandwidth');
      if (r.isBlocked) {
        this.metrics?.rateLimited('tile_bandwidth');
        throw new LedgerError(429, 'bandwidth_exceeded', `tiles are served up to TILE_BANDWIDTH_KIB_PER_MINUTE (${(this.units * TILE_BANDWIDTH_UNIT) / 1024} KiB) per client per minute; retry after the Retry-After seconds, or read the log's static copy`, {
          retry_after_seconds: Math.max(1, r.timeToBlockExpire),
        });
      }
    }
  }
}
