import { Controller, Get, HttpStatus, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FreeRead } from '../common/rate-limit';
import { ref } from '../common/openapi';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { DatabaseService } from '../database/database.service';
import { BatchDispatcher } from '../verification-queue/dispatchers';
import { CheckpointSigner } from '../log/checkpoint-signer';
import { StaticTiles } from '../log/static-tiles';
import { LogIdentityService } from '../log/log-identity.service';
import { WitnessCoordinator } from '../log/witnesses';
import { CheckpointTimestamper } from '../log/timestamps';
import { NostrPublisher } from '../log/nostr-publisher';

/** The body of `/health`: Terminus's result, with `degraded` when only Redis is down. */
export type HealthAnswer = Omit<HealthCheckResult, 'status'> & { status: HealthCheckResult['status'] | 'degraded' };

/**
 * `/health`: the database, the verifiable log's checkpoint signer and, when
 * REDIS_URL is set, Redis (the verification queue).
 *
 * - 200 `status: "ok"`: everything configured answers.
 * - 200 `status: "degraded"`, `details.redis.status: "down"`: the database is
 *   fine and Redis is not. The API still serves every read and write; only
 *   verification batches answer 503 `queue_unavailable`. A load balancer keeps
 *   routing to it (all replicas share the one Redis: taking them all out
 *   would stop ingestion for a batch-only fault); monitoring alerts on the
 *   body's status.
 * - 200 `status: "degraded"`, `details.log.status: "down"`: checkpoints are
 *   not being signed: `signing` is `stopped` (the stored tree disagreed with
 *   what was signed: see `reason` and `reason_code`; an operator must look;
 *   when the database is behind or forks from the checkpoint kept in the
 *   signer's state file, `checkpoint_state: {size, root}` and
 *   `database: {size, root, root_at_state_size?}` show both, and writes are
 *   refused with 503 `log_unavailable`; this answer is anonymous, so files
 *   are named by their role, never by path: the server's log has the paths) or `disabled` (no
 *   signing key configured), or its last run failed (`signing` is `active`,
 *   `last_error: {message, at}`: a read failed, e.g. the database was
 *   unreachable; tried again next tick, cleared once a run succeeds). Reads and writes go on; proofs stay at the last
 *   checkpoint. `details.log` also gives the origin, the newest checkpoint's
 *   size and age in seconds.
 * - With TILES_DIR, `details.log.tiles_dir` gives the size of the checkpoint
 *   last written to the static copy and its last failure (`last_error:
 *   {message, at}`, the folder named TILES_DIR); informational only.
 * - With WITNESSES or WITNESS_POLICY_FILE configured, `details.log.witnessing`
 *   gives the quorum (the fewest cosignatures that can meet it), how many
 *   witnesses are `current`, `policy: {source, rule, quorum_reached,
 *   current_quorum}` (the rule in words; whether the newest signed
 *   checkpoint's cosignatures meet it; whether the current required
 *   witnesses can) and, per witness, its name, `required` (false: optional,
 *   never counted), `reachable`, its last cosigned size (`cosigned_size`,
 *   `cosigned_at`), its lag (`lag_sizes` behind the newest signed
 *   checkpoint, `lag_seconds` that checkpoint has waited for it) and the
 *   last error. A witness is current when it cosigned the newest signed
 *   checkpoint or lags by less than 60 s (WITNESS_LAG_SECONDS); when the
 *   current required witnesses cannot meet the rule, `details.log.status`
 *   is "down" and the answer "degraded" (GET /checkpoint then stays at the
 *   last witnessed size). With TSA_URL, `details.log.timestamps` gives the newest token's
 *   size, genTime and TSA, and the last refusal (informational only).
 * - With NOSTR_RELAYS, `details.log.nostr` gives the publisher key (hex,
 *   npub), the newest anchored size, its event id and time, and per relay
 *   `status` (`ok`: it accepted the newest anchor; `failing`: its last
 *   attempt was refused or got no answer, `last_error` and `retry_at`;
 *   `pending`), `last_ok_size` and `last_ok_at` (when it last accepted an
 *   anchor). Informational only: anchoring never makes the log down.
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
    private readonly signer: CheckpointSigner,
    private readonly identity: LogIdentityService,
    private readonly witnesses: WitnessCoordinator,
    private readonly timestamper: CheckpointTimestamper,
    private readonly staticTiles: StaticTiles,
    private readonly nostr: NostrPublisher,
  ) {}

  @Get()
  @FreeRead()
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ operationId: 'getHealth', summary: 'Database and (when configured) Redis reachability' })
  @ApiResponse({ status: 200, description: '{status: "ok" | "degraded", info, error, details: {database: {status, dialect}, redis?: {status, message?}}}; "degraded": the database is up, Redis is down (batches answer 503)', content: { 'application/json': { schema: ref('Health') } } })
  @ApiResponse({ status: 503, description: '{status: "error", ...}: the database does not answer', content: { 'application/json': { schema: ref('Health') } } })
  async check(@Res({ passthrough: true }) res: FastifyReply): Promise<HealthAnswer> {
    const checks = [
      async () => {
        const i = this.indicator.check('database');
        return (await this.db.ping()) ? i.up({ dialect: this.db.dialect }) : i.down({ dialect: this.db.dialect });
      },
      async () => {
        const st = this.signer.state();
        const i = this.indicator.check('log');
        const info = {
          origin: this.identity.current?.origin ?? null,
          signing: st.signing,
          ...(st.reason ? { reason: st.reason } : {}),
          ...(st.reason_code ? { reason_code: st.reason_code } : {}),
          ...(st.checkpoint_state !== undefined ? { checkpoint_state: st.checkpoint_state } : {}),
          ...(st.database ? { database: st.database } : {}),
          ...(st.last_error ? { last_error: st.last_error } : {}),
          checkpoint_size: st.checkpoint_size,
          checkpoint_age_seconds: st.signed_at === null ? null : Math.max(0, Math.round((Date.now() - Date.parse(st.signed_at)) / 1000)),
        };
        const witnessing = this.witnesses.health();
        const timestamps = this.timestamper.health();
        const nostr = this.nostr.health();
        // A static copy that is not being written (its last write failed) makes the log check down: /health answers
        // `degraded` (still 200), never `ok` while the published copy falls behind.
        const tilesDir = this.staticTiles.health();
        const all = { ...info, ...(witnessing ? { witnessing } : {}), ...(timestamps ? { timestamps } : {}), ...(nostr ? { nostr } : {}), ...(tilesDir ? { tiles_dir: tilesDir } : {}) };
        const witnessed = !witnessing || witnessing.policy.current_quorum;
        return st.signing === 'active' && !st.last_error && witnessed && !tilesDir?.last_error ? i.up(all) : i.down(all);
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
      if (body?.status === 'error' && failed.length > 0 && failed.every((f) => f === 'redis' || f === 'log')) {
        res.status(HttpStatus.OK);
        return { ...body, status: 'degraded' };
      }
      throw e;
    }
  }
}
