/**
 * Rate limits (S13): one weighted read budget per anonymous client (an IPv4
 * address or an IPv6 /64) and one per API key, a per-key hourly quota for
 * coverage reports and verification batches, all counted in the throttler's
 * storage (Redis when REDIS_URL is set); and a per-process limit on heavy
 * reads running at once.
 */
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { CallHandler, ExecutionContext, Global, Inject, Injectable, Logger, Module, NestInterceptor, Optional, SetMetadata } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_INTERCEPTOR, Reflector } from '@nestjs/core';
import { InjectThrottlerStorage, ThrottlerException, ThrottlerGuard, ThrottlerLimitDetail, ThrottlerRequest, ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { from, Observable, switchMap } from 'rxjs';
import { ApiKeysService } from '../auth/api-keys.service';
import type { AppConfig } from '../config/configuration';
import { LedgerError } from './errors';
import { LedgerMetrics } from '../metrics/ledger-metrics';

/** Weight of a read that re-verifies a job's whole chain (`/api/jobs/{id}/verify`, `/endpoint`, the `/jobs/{id}` page). */
export const JOB_VERIFY_COST = 5;
/** Weight of `/api/ledger/verify` (recomputes the whole ledger chain). */
export const LEDGER_VERIFY_COST = 20;
/** Weight of an evidence pack (`/api/{jobs,workflows,coverage-reports}/{id}/evidence`: every record of its subject and their proofs, like an export). */
export const EVIDENCE_PACK_COST = JOB_VERIFY_COST;
/** Weight of a coverage report read (`/api/coverage-reports/{id}`, `/coverage/{id}`: the report and its digest). */
export const REPORT_READ_COST = 2;
/** Weight of a coverage report as a PDF (`/coverage/{id}.pdf`: the report, its digest and a PDF of up to ~50 pages). */
export const REPORT_PDF_COST = 5;

/** The public read budget's window (VERIFY_RATE_LIMIT units per window; src/app.module.ts). */
export const RATE_WINDOW_SECONDS = 60;
/** Anonymous IPv6 clients are counted per this prefix (a /64 is one subscriber's network; IPv4-mapped addresses count as IPv4). */
export const IPV6_CLIENT_PREFIX = 64;

/** The 429 message of the anonymous budget (also the error filter's default for a throttler refusal). */
export const ANONYMOUS_BUDGET_MESSAGE = 'too many requests: public reads share one budget per client (VERIFY_RATE_LIMIT per minute, S13); retry after the Retry-After seconds';
/** The 429 message of a key's budget. */
export const KEY_BUDGET_MESSAGE = "too many requests: this API key's read budget is spent (KEY_READ_RATE_LIMIT per minute, S13); retry after the Retry-After seconds";

const COST_KEY = 'aer1:read-cost';
const SKIP_KEY = 'aer1:read-free';
/** Metadata of the roles decorator (src/auth/roles.guard.ts): a route with roles is a write, not a public read. */
const ROLES_KEY = 'aer1:roles';

/**
 * A public read that spends `cost` units of the client's one budget
 * (VERIFY_RATE_LIMIT units per minute, S13). Every public read not marked
 * costs 1; mark the ones that re-verify a chain or render a large page with
 * their weight.
 */
export const PublicRead = (cost: number): MethodDecorator & ClassDecorator => SetMetadata(COST_KEY, cost);

/** A read outside the budget (only `/health`, which load balancers poll). */
export const FreeRead = (): MethodDecorator & ClassDecorator => SetMetadata(SKIP_KEY, true);

/** The verify endpoints and pages: `@PublicRead(1)`. */
export const VerifyRateLimit = (): MethodDecorator & ClassDecorator => PublicRead(1);

/** Who spends a public read: an API key (its own budget) or an anonymous client (its address's). Kept on the request. */
interface Reader {
  tracker: string;
  keyed: boolean;
}
const READER = Symbol('aer1:reader');

/**
 * One budget per reader for every public read (S13), weighted by cost: the
 * key is the reader alone, never the handler, so a reader past its budget on
 * one endpoint gets 429 on all of them until the window ends. A read sent
 * with a valid API key spends that key's budget (KEY_READ_RATE_LIMIT); any
 * other read spends its address's (VERIFY_RATE_LIMIT): the connection's
 * address or, behind TRUST_PROXY, the forwarded one, an IPv6 address counted
 * per /64 and an IPv4-mapped one as its IPv4 address. An unknown, revoked or
 * malformed key is anonymous here (the endpoint itself may answer 401).
 * Routes that need a key (marked with `@Roles`) are counted only when they
 * are reads (GET/HEAD: evidence packs, plans, batch lists, the event
 * stream), with the key's budget and the same weights; keyed writes keep
 * their own limits (REPORT_QUOTA_PER_HOUR, the webhook caps) and are not
 * counted here. Past the budget: 429 `rate_limited` with `Retry-After`
 * (seconds).
 */
@Injectable()
export class PublicReadGuard extends ThrottlerGuard {
  /** Counts refusals (`aer1_rate_limit_refusals_total{limiter="public_read"|"key_read"}`); property-injected, the throttler owns the constructor. */
  @Optional() @Inject(LedgerMetrics) private readonly metrics?: LedgerMetrics;
  /** Authenticates the bearer key of a read (property-injected, as above). */
  @Optional() @Inject(ApiKeysService) private readonly keys?: ApiKeysService;
  @Optional() @Inject(ConfigService) private readonly config?: ConfigService<AppConfig, true>;

  protected override async throwThrottlingException(context: ExecutionContext, _detail: ThrottlerLimitDetail): Promise<void> {
    const keyed = (await this.reader(this.getRequestResponse(context).req)).keyed;
    this.metrics?.rateLimited(keyed ? 'key_read' : 'public_read');
    throw new ThrottlerException(keyed ? KEY_BUDGET_MESSAGE : ANONYMOUS_BUDGET_MESSAGE);
  }

  /** The reader of `req` (authenticated once per request; the controller's own check then hits the key cache). */
  private async reader(req: Record<string, unknown>): Promise<Reader> {
    const slot = req as Record<symbol, Reader | undefined>;
    const known = slot[READER];
    if (known) return known;
    let r: Reader = { tracker: await super.getTracker(req), keyed: false };
    const header = (req as unknown as FastifyRequest).headers?.authorization;
    if (header !== undefined && this.keys) {
      try {
        const p = await this.keys.fromHeader(header);
        if (p) {
          r = { tracker: `key:${p.key_id}`, keyed: true };
          // The key is authenticated once per request: the roles guard takes this principal instead of reading the key again.
          (req as { principal?: unknown }).principal = p;
        }
      } catch {
        // Not a valid key: the address's budget. An endpoint that reads the key answers 401 itself.
      }
    }
    slot[READER] = r;
    return r;
  }

  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    return (await this.reader(req)).tracker;
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean | undefined>(SKIP_KEY, targets)) return true;
    const roles = this.reflector.getAllAndOverride<string[] | undefined>(ROLES_KEY, targets);
    if (!Array.isArray(roles) || roles.length === 0) return false;
    // A keyed read spends the key's read budget like any read; a keyed write has its own limits.
    const method = context.switchToHttp().getRequest<FastifyRequest>().method;
    return method !== 'GET' && method !== 'HEAD';
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `public-read:${name}:${tracker}`;
  }

  /**
   * Besides the throttler's `X-RateLimit-*`, the standard fields of the IETF
   * draft (draft-ietf-httpapi-ratelimit-headers, the `-Limit/-Remaining/-Reset`
   * form most clients read): `RateLimit-Limit` (units per window),
   * `RateLimit-Remaining`, `RateLimit-Reset` (seconds until the window ends)
   * and `RateLimit-Policy: <limit>;w=<window seconds>`. On 429 the remaining
   * budget is 0 and `Retry-After` says when to come back.
   */
  protected override setResponseHeader(res: Record<string, unknown>, name: string, value: string | number): void {
    super.setResponseHeader(res, name, value);
    const field = /^X-RateLimit-(Limit|Remaining|Reset)$/.exec(name)?.[1];
    if (field) super.setResponseHeader(res, `RateLimit-${field}`, value);
    if (field === 'Limit') super.setResponseHeader(res, 'RateLimit-Policy', `${value};w=${RATE_WINDOW_SECONDS}`);
    if (name === 'Retry-After') {
      super.setResponseHeader(res, 'RateLimit-Remaining', 0);
      super.setResponseHeader(res, 'RateLimit-Reset', value);
    }
  }

  /** Spends the route's cost (one storage hit per unit, so any ThrottlerStorage works, Redis included). */
  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    if ((await this.reader(this.getRequestResponse(props.context).req)).keyed && this.config) props = { ...props, limit: this.config.get('KEY_READ_RATE_LIMIT', { infer: true }) };
    // Never more than the whole budget, so every read stays possible once per window whatever VERIFY_RATE_LIMIT is.
    const cost = Math.min(this.reflector.getAllAndOverride<number | undefined>(COST_KEY, [props.context.getHandler(), props.context.getClass()]) ?? 1, props.limit);
    for (let i = 1; i < cost; i++) {
      const tracker = await props.getTracker(this.getRequestResponse(props.context).req, props.context);
      const key = props.generateKey(props.context, tracker, props.throttler.name ?? 'default');
      const r = await this.storageService.increment(key, props.ttl, props.limit, props.blockDuration, props.throttler.name ?? 'default');
      if (r.isBlocked) break; // the last hit below answers 429 with Retry-After
    }
    return super.handleRequest(props);
  }
}

/**
 * The throttler's storage: Redis when REDIS_URL is set (replicas share one
 * budget), in memory otherwise. While Redis cannot be reached each replica
 * falls back to its own in-memory count (logged once per outage), so reads
 * stay limited and available.
 */
export class FallbackThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('Throttler');
  private readonly memory = new ThrottlerStorageService();
  private readonly redis?: ThrottlerStorageRedisService;
  private degraded = false;

  /** @param prefix prepended to every key (QUEUE_PREFIX: deployments sharing one Redis keep apart budgets). */
  constructor(
    redisUrl?: string | null,
    private readonly prefix = 'aer1',
  ) {
    if (redisUrl) {
      // Commands wait for the first connection (at most a second); during an outage they are not sent at all.
      this.redis = new ThrottlerStorageRedisService(redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 1_000 });
      this.redis.redis.on('error', () => undefined); // reported by increment() below, once per outage
    }
  }

  async increment(name: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const key = `${this.prefix}:${name}`;
    if (this.redis && (!this.degraded || this.redis.redis.status === 'ready')) {
      try {
        const r = await this.redis.increment(key, ttl, limit, blockDuration, throttlerName);
        if (this.degraded) this.logger.log('Redis is back: the rate limit budget is shared again');
        this.degraded = false;
        return r;
      } catch (e) {
        if (!this.degraded) this.logger.warn(`Redis unavailable for the rate limit (${e instanceof Error ? e.message : String(e)}): counting in memory per replica`);
        this.degraded = true;
      }
    }
    return this.memory.increment(key, ttl, limit, blockDuration, throttlerName);
  }

  onApplicationShutdown(): void {
    this.redis?.onModuleDestroy();
    this.memory.onApplicationShutdown();
  }
}

/**
 * Per-key quota for costly writes (coverage reports, verification batches):
 * REPORT_QUOTA_PER_HOUR per key per hour and per kind, counted in the
 * throttler's storage (shared through Redis when set). Past it: 429
 * `quota_exceeded` with `retry_after_seconds` and Retry-After; nothing is
 * built or written.
 */
@Injectable()
export class KeyQuota {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    private readonly config: ConfigService<AppConfig, true>,
    @Optional() private readonly metrics?: LedgerMetrics,
  ) {}

  /** Spend one unit of `kind` for the key of `req` (set by the roles guard); throws 429 past the quota. */
  async spend(req: FastifyRequest, kind: 'coverage_reports' | 'verification_batches'): Promise<void> {
    const principal = (req as FastifyRequest & { principal?: { key_id: string } }).principal;
    if (!principal) return; // the roles guard always sets it on these routes
    const limit = this.config.get('REPORT_QUOTA_PER_HOUR', { infer: true });
    const hour = 3_600_000;
    const r = await this.storage.increment(`quota:${kind}:${principal.key_id}`, hour, limit, hour, 'quota');
    if (r.isBlocked) {
      this.metrics?.rateLimited(kind);
      throw new LedgerError(429, 'quota_exceeded', `a key may issue ${limit} ${kind.replace(/_/g, ' ')} per hour (REPORT_QUOTA_PER_HOUR); retry after the Retry-After seconds`, {
        kind,
        limit,
        retry_after_seconds: r.timeToBlockExpire,
      });
    }
  }
}

const HEAVY_KEY = 'aer1:heavy-read';

/**
 * A heavy read: one that renders a PDF, re-reads the whole ledger or streams
 * a whole record set (coverage PDF, `/api/ledger/verify`, timeline export,
 * evidence packs). At most HEAVY_READ_CONCURRENCY run at once in a process,
 * whoever asks, so a crowd of clients (each within its budget) cannot starve
 * cheap reads and `/health`; one more answers 429 `server_busy` with
 * Retry-After at once. A slot is held from after the guards (401/403 and the
 * read budget come first) until the answer is finished or the client leaves,
 * or until its answer has stalled for HEAVY_READ_STALL_MS (bytes waiting for a
 * client that reads none of them): that answer is then ended (its socket
 * destroyed), so a client that stops reading cannot keep a slot.
 */
export const HeavyRead = (): MethodDecorator & ClassDecorator => SetMetadata(HEAVY_KEY, true);

/** Seconds a client refused by the heavy-read limit is told to wait. */
export const HEAVY_READ_RETRY_SECONDS = 2;

/** The per-process slots of {@link HeavyRead} routes. */
@Injectable()
export class HeavyReads {
  private running = 0;
  readonly limit: number;
  /** Ms an answer may make no progress before it is ended (HEAVY_READ_STALL_MS). */
  readonly stallMs: number;

  constructor(
    config: ConfigService<AppConfig, true>,
    @Optional() private readonly metrics?: LedgerMetrics,
  ) {
    this.limit = config.get('HEAVY_READ_CONCURRENCY', { infer: true });
    this.stallMs = config.get('HEAVY_READ_STALL_MS', { infer: true });
  }

  /** Heavy reads running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Take a slot, or throw 429 `server_busy`; returns its release (idempotent). */
  acquire(): () => void {
    if (this.running >= this.limit) {
      this.metrics?.rateLimited('heavy_read');
      throw new LedgerError(429, 'server_busy', `this server is already serving ${this.running} heavy reads (coverage PDFs, ledger and timeline verifications, timeline exports, evidence packs), the most it runs at once (HEAVY_READ_CONCURRENCY); retry after the Retry-After seconds`, {
        limit: this.limit,
        retry_after_seconds: HEAVY_READ_RETRY_SECONDS,
      });
    }
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
    };
  }
}

/** Holds a {@link HeavyReads} slot around each {@link HeavyRead} route, until its response closes. */
@Injectable()
export class HeavyReadInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly slots: HeavyReads,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || !this.reflector.getAllAndOverride<boolean | undefined>(HEAVY_KEY, [context.getHandler(), context.getClass()])) return next.handle();
    const release = this.slots.acquire();
    const res = context.switchToHttp().getResponse<FastifyReply>().raw;
    // 'close' follows the end of every response, finished or cut (the error filter's answers included).
    if (res.closed || res.destroyed) release();
    else {
      const stopWatch = watchStall(res, this.slots.stallMs);
      res.once('close', () => {
        stopWatch();
        release();
      });
    }
    // The work starts on a later turn of the event loop: requests that arrived together (with SQLite a heavy read may
    // run to its end without waiting on I/O) all reach this point first, so those beyond the limit are refused and
    // /health is answered before the first PDF is drawn.
    return from(new Promise<void>((resolve) => setImmediate(resolve))).pipe(switchMap(() => next.handle()));
  }
}

/**
 * Ends `res` (destroys its socket) once bytes have waited in its socket for
 * `stallMs` without any of them being taken by the client: progress is the
 * count of bytes handed to the operating system (written minus still
 * buffered), checked a few times per `stallMs`. Nothing waiting (the answer
 * is still being computed, or every byte went out) is never a stall, and a
 * client that takes any byte restarts the clock. Returns the watch's stop.
 */
export function watchStall(res: ServerResponse, stallMs: number): () => void {
  let lastSent = -1;
  let since = Date.now();
  const timer = setInterval(
    () => {
      const socket = res.socket;
      if (!socket || socket.destroyed) return;
      const waiting = socket.writableLength;
      const sent = socket.bytesWritten - waiting;
      const now = Date.now();
      if (waiting === 0 || sent !== lastSent) {
        lastSent = sent;
        since = now;
        return;
      }
      if (now - since >= stallMs) socket.destroy(); // 'close' follows: the slot comes back
    },
    Math.max(100, Math.floor(stallMs / 10)),
  );
  timer.unref();
  return () => clearInterval(timer);
}

/** {@link KeyQuota} and the heavy-read limit for every module of the API (not the worker, which has no throttler). */
@Global()
@Module({ providers: [KeyQuota, HeavyReads, { provide: APP_INTERCEPTOR, useClass: HeavyReadInterceptor }], exports: [KeyQuota, HeavyReads] })
export class RateLimitModule {}
