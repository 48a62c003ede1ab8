/**
 * Configuration from the environment, validated at start (an invalid value
 * stops the process with a message naming the variable).
 */
import { availableParallelism } from 'node:os';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';
import { DEFAULT_DATABASE_URL } from '../database/database-url';
import { loadWitnessPolicy, parseTsaSettings } from '../log/witness-config';
import { originSchemeProblem } from '../log/log-key';
import { parseTrustedKeys } from '../core/aer1/attestation';
import { parseRetentionPeriod } from '../erasure/retention-period';
import { NostrVariables, parseNostrSettings } from './nostr-settings';

/** PDF_WORKERS when unset: one less than the CPUs, at least 1, at most 4. */
export const DEFAULT_PDF_WORKERS = Math.min(4, Math.max(1, availableParallelism() - 1));

export class AppConfig extends NostrVariables {
  /** HTTP port. */
  @Transform(({ value }) => (value === undefined || value === '' ? 3000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** `sqlite:<path>` (default `sqlite:./data/ledger.sqlite`) or `postgres://...`. */
  @IsString()
  @Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, { message: 'DATABASE_URL must be sqlite:<path> or postgres://...' })
  DATABASE_URL = DEFAULT_DATABASE_URL;

  /** Base of the public URLs in records and pages, without a trailing slash. */
  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'PUBLIC_BASE_URL must be an http(s) URL' })
  PUBLIC_BASE_URL?: string;

  /**
   * `true` lets `POST /api/workflows/assemble` write a loopback verify_url (PUBLIC_BASE_URL on localhost,
   * 127.0.0.0/8 or ::1) into a workflow's immutable bytes; otherwise that is 422 `loopback_verify_url`.
   */
  @Transform(({ value }) => value === true || value === 'true')
  @IsBoolean()
  ALLOW_LOOPBACK_VERIFY_URL = false;

  /** `development` or `test` silence the start warning about an unset PUBLIC_BASE_URL. */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;

  /** Optional bootstrap admin key (at least 16 characters). */
  @IsOptional()
  @IsString()
  @MinLength(16)
  LEDGER_ADMIN_KEY?: string;

  /** Largest accepted request body in bytes (default 1 MiB). */
  @Transform(({ value }) => (value === undefined || value === '' ? 1_048_576 : Number(value)))
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 1_048_576;

  /** Public read budget per client per minute (S13): every public read spends its weight (1, or more for costly ones). */
  @Transform(({ value }) => (value === undefined || value === '' ? 120 : Number(value)))
  @IsInt()
  @Min(1)
  VERIFY_RATE_LIMIT = 120;

  /**
   * Read budget per API key per minute: a public read sent with a valid key (`Authorization: Bearer`) spends the
   * key's own budget, weighted like VERIFY_RATE_LIMIT, instead of its address's (default 600). An unknown, revoked
   * or malformed key spends the address's anonymous budget.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 600 : Number(value)))
  @IsInt()
  @Min(1)
  KEY_READ_RATE_LIMIT = 600;

  /**
   * Heavy reads (a coverage PDF, `/api/ledger/verify`, a timeline export, an evidence pack) served at once by this
   * process, whoever asks (default 4); one more is 429 `server_busy` with Retry-After.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 4 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  HEAVY_READ_CONCURRENCY = 4;

  /**
   * A heavy read whose answer makes no progress (bytes wait for a client that reads none of them) for this many ms
   * is ended, its socket destroyed, so its HEAVY_READ_CONCURRENCY slot comes back (default 10000). A client that
   * reads, however slowly, is never cut; the time spent computing before the first byte does not count.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 10_000 : Number(value)))
  @IsInt()
  @Min(1_000)
  @Max(600_000)
  HEAVY_READ_STALL_MS = 10_000;

  /**
   * Worker threads that draw coverage PDFs (`GET /coverage/{id}.pdf`) off the event loop, so `/health` and cheap
   * reads are answered while PDFs are drawn. Default: one less than the CPUs (at least 1, at most 4), so drawing
   * leaves a core to the event loop. Started on the first PDF; a PDF asked for while all are busy waits for one
   * (HEAVY_READ_CONCURRENCY bounds how many wait). 0: PDFs are drawn on the event loop.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? DEFAULT_PDF_WORKERS : Number(value)))
  @IsInt()
  @Min(0)
  @Max(64)
  PDF_WORKERS = DEFAULT_PDF_WORKERS;

  /**
   * Evidence packs: how long (ms) a request waits for the signed checkpoint that will cover its subject (a record
   * written a moment ago) before answering 503 `no_checkpoint` with Retry-After (default 5000; 0: no wait).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 5000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(60_000)
  PACK_CHECKPOINT_WAIT_MS = 5000;

  /**
   * Which proxies to trust for the client address (Fastify's `trustProxy`, as Express's `trust proxy` read it): unset or `false` (the socket's
   * address), `true`, a hop count, or comma-separated addresses / CIDRs / `loopback`, `uniquelocal`.
   */
  @IsOptional()
  @IsString()
  @Matches(/^(true|false|\d{1,2}|[0-9A-Za-z.:/]+(\s*,\s*[0-9A-Za-z.:/]+)*)$/, { message: 'TRUST_PROXY must be true, false, a hop count or a comma-separated list of addresses/CIDRs' })
  TRUST_PROXY?: string;

  /** Coverage reports and verification batches each key may issue per hour (each kind counted apart). */
  @Transform(({ value }) => (value === undefined || value === '' ? 60 : Number(value)))
  @IsInt()
  @Min(1)
  REPORT_QUOTA_PER_HOUR = 60;

  /** Redis for the verification queue and the shared rate limit budget; without it batches run in process. */
  @IsOptional()
  @IsString()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be redis://...' })
  REDIS_URL?: string;

  /**
   * The log's origin (C2SP tlog-checkpoint), a schema-less URL such as `ledger.example.com/aer1`: the
   * first line of every checkpoint and the name of its signature. Default: the signing key's name, or
   * PUBLIC_BASE_URL without its scheme. One with a URL scheme (`https://...`) stops the start.
   */
  @IsOptional()
  @IsString()
  @Matches(/^[^\s+]+$/, { message: 'LEDGER_ORIGIN must be non-empty, without spaces or +' })
  LEDGER_ORIGIN?: string;

  /** The log's Ed25519 signing key file (`npm run ledger -- create-signing-key --out FILE`). */
  @IsOptional()
  @IsString()
  @MinLength(1)
  LEDGER_SIGNING_KEY_FILE?: string;

  /**
   * Where the signer keeps the newest checkpoint it signed, outside the database (see
   * src/log/checkpoint-state.ts). Default: beside the signing key, `.key` replaced by `.checkpoint`
   * (`ledger.log-signing.checkpoint`). Back it up with the key; never share it between two databases.
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  LEDGER_CHECKPOINT_STATE_FILE?: string;

  /**
   * Verifier keys (C2SP vkeys, Ed25519 type 0x01) whose signed note over an endpoint commitment makes it
   * `attested_by` that key (issue 15): separated by commas or newlines, or a JSON array of strings.
   * Unset: no client-posted commitment is attested; every one is self-asserted.
   */
  @IsOptional()
  @IsString()
  TRUSTED_COMMITMENT_KEYS?: string;

  /** Sign a checkpoint at most this often (milliseconds) while the tree grows. */
  @Transform(({ value }) => (value === undefined || value === '' ? 1000 : Number(value)))
  @IsInt()
  @Min(10)
  @Max(3_600_000)
  CHECKPOINT_INTERVAL_MS = 1000;

  /**
   * A folder the API process keeps a static copy of the log's read path in (C2SP tlog-tiles: `checkpoint`,
   * `tile/<L>/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`), written after each checkpoint it serves (docs/tiles.md).
   * Unset: no copy.
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  TILES_DIR?: string;

  /**
   * Bandwidth budget of `GET /tile/...` per client (an IPv4 address or an IPv6 /64) per minute, in KiB, counted
   * in 8 KiB units (one full hash tile); past it: 429 `bandwidth_exceeded` with Retry-After. Tiles do not spend
   * the public read budget (VERIFY_RATE_LIMIT). Default 65536 (64 MiB a minute); 0: no budget.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 65_536 : Number(value)))
  @IsInt()
  @Min(0)
  TILE_BANDWIDTH_KIB_PER_MINUTE = 65_536;

  /** Live event stream (GET /api/ledger/events/stream): a heartbeat comment line every this many ms (default 15000). */
  @Transform(({ value }) => (value === undefined || value === '' ? 15_000 : Number(value)))
  @IsInt()
  @Min(50)
  @Max(300_000)
  SSE_HEARTBEAT_MS = 15_000;

  /** Live event stream: how often an idle stream polls the ledger head for other processes' appends, in ms (default 1000). */
  @Transform(({ value }) => (value === undefined || value === '' ? 1000 : Number(value)))
  @IsInt()
  @Min(20)
  @Max(60_000)
  SSE_POLL_MS = 1000;

  /** Live event stream: open streams per API key (default 2); one more is 429 `stream_limit_key`. */
  @Transform(({ value }) => (value === undefined || value === '' ? 2 : Number(value)))
  @IsInt()
  @Min(1)
  SSE_MAX_PER_KEY = 2;

  /** Live event stream: open streams in this process (default 64); one more is 429 `stream_limit_server`. */
  @Transform(({ value }) => (value === undefined || value === '' ? 64 : Number(value)))
  @IsInt()
  @Min(1)
  SSE_MAX_STREAMS = 64;

  /** `true` lets webhooks be delivered to loopback, link-local and private addresses (tests, private deployments). */
  @Transform(({ value }) => value === true || value === 'true')
  @IsBoolean()
  WEBHOOK_ALLOW_PRIVATE = false;

  /** Webhook delivery attempts before giving up (default 8). */
  @Transform(({ value }) => (value === undefined || value === '' ? 8 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(30)
  WEBHOOK_MAX_ATTEMPTS = 8;

  /** First retry delay of a webhook delivery in ms, doubled each attempt (default 1000). */
  @Transform(({ value }) => (value === undefined || value === '' ? 1000 : Number(value)))
  @IsInt()
  @Min(10)
  @Max(3_600_000)
  WEBHOOK_BACKOFF_MS = 1000;

  /**
   * Overall deadline of one webhook attempt, in ms (default 10000): connecting,
   * sending, the answer's headers and its body (read up to 64 KiB) all within
   * it; past it the attempt is cut and counts as failed (a receiver that drips
   * its answer cannot hold a delivery slot longer).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 10_000 : Number(value)))
  @IsInt()
  @Min(100)
  @Max(120_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** Webhook attempts in flight at once in one process, every owner together (default 16). */
  @Transform(({ value }) => (value === undefined || value === '' ? 16 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_CONCURRENCY = 16;

  /** Webhook attempts in flight at once in one process for one owner (a key without owner: itself), default 4. */
  @Transform(({ value }) => (value === undefined || value === '' ? 4 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_OWNER_CONCURRENCY = 4;

  /** At shutdown, how long webhook attempts in flight may still finish, in ms (default 2000); then they are aborted and redelivered after restart. */
  @Transform(({ value }) => (value === undefined || value === '' ? 2000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(60_000)
  WEBHOOK_SHUTDOWN_GRACE_MS = 2000;

  /** How often each process looks for webhook deliveries due, in ms (default 1000; a new event in this process wakes it at once). */
  @Transform(({ value }) => (value === undefined || value === '' ? 1000 : Number(value)))
  @IsInt()
  @Min(20)
  @Max(60_000)
  WEBHOOK_POLL_MS = 1000;

  /** Webhook subscriptions one API key may hold (default 20); one more is 409 `webhook_limit_key`. */
  @Transform(({ value }) => (value === undefined || value === '' ? 20 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(100_000)
  WEBHOOK_MAX_PER_KEY = 20;

  /** Webhook subscriptions the keys of one owner may hold together (default 50); one more is 409 `webhook_limit_owner`. */
  @Transform(({ value }) => (value === undefined || value === '' ? 50 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(100_000)
  WEBHOOK_MAX_PER_OWNER = 50;

  /**
   * Group commit (issue 17): at most this many concurrent writes share one database
   * transaction and one COMMIT, each in its own savepoint (fails alone). `1` turns
   * group commit off (one transaction per write). Default 64: on PostgreSQL each writing savepoint
   * takes a subtransaction id, and more than 64 in one transaction overflow the per-backend cache
   * (readers then consult pg_subtrans), so keep it at 64 or below there.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 64 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  GROUP_COMMIT_MAX = 64;

  /**
   * Group commit: a group starts when it is full or when its oldest write has waited this
   * many milliseconds (default 2; 0: no added wait, only writes already queued are grouped).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 2 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(1000)
  GROUP_COMMIT_MAX_WAIT_MS = 2;

  /**
   * Bench and testing knob (issue 29), not for production: `2` writes new events
   * in event format 2 (data in the leaf, no salt, no commitment: not erasable
   * without naming the leaf as not recomputable), so `npm run bench` can measure
   * format 3 against format 2 in one run, and tests can write format 2 events.
   * Default 3 (docs/event-formats.md).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 3 : Number(value)))
  @IsIn([2, 3])
  LEDGER_EVENT_FORMAT: 2 | 3 = 3;

  /**
   * `true` serves `GET /metrics` (Prometheus text format) and records the metrics;
   * otherwise nothing is recorded and /metrics answers 404. Readable only with
   * METRICS_TOKEN or an admin key (docs/operating.md, "Metrics").
   */
  @Transform(({ value }) => value === true || value === 'true')
  @IsBoolean()
  METRICS_ENABLED = false;

  /** Optional bearer secret (at least 16 characters) that reads `/metrics` and nothing else. */
  @IsOptional()
  @IsString()
  @MinLength(16)
  METRICS_TOKEN?: string;

  /**
   * Witnesses (issue 15; c2sp.org/tlog-witness): a JSON array of `{"url": "http://host:port", "vkey": "<witness vkey, type 0x04>"}`.
   * Unset or `[]`: no witnessing (GET /checkpoint serves the newest log-signed checkpoint).
   */
  @IsOptional()
  @IsString()
  WITNESSES?: string;

  /** k of the n WITNESSES that must cosign a checkpoint before GET /checkpoint serves it (1..n; default n). */
  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  WITNESS_QUORUM?: number;

  /**
   * A witness policy file in the Sigsum policy format (`witness`, `group`, `quorum` lines; k-of-n groups of
   * groups; witnesses outside the quorum's tree are asked but optional): see docs/witnesses.md. Instead of
   * WITNESSES / WITNESS_QUORUM (both set: the server does not start); a malformed file stops the start naming its line.
   */
  @IsOptional()
  @IsString()
  WITNESS_POLICY_FILE?: string;

  /** RFC 3161 time-stamping authority URL (S10 time anchors); set together with TSA_CERTS. */
  @IsOptional()
  @IsString()
  TSA_URL?: string;

  /** Path of a PEM file holding the TSA's certificate chain (or its CA): tokens must chain to it. */
  @IsOptional()
  @IsString()
  TSA_CERTS?: string;

  /** Timestamp a (witnessed) checkpoint at most this often, in ms (default 60000; 0: every one). */
  @Transform(({ value }) => (value === undefined || value === '' ? 60_000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  TSA_INTERVAL_MS = 60_000;

  /**
   * Retention (issue 29): an ISO 8601 duration (`P180D`, `P6M`, `PT30S`); payloads of erasable events older than it
   * are erased by the ledger itself (reason `retention`), unless the writing key has a `retention_period` of its own.
   * Unset (the default): nothing is erased for age. Shorter than six months: allowed, warned about at start.
   */
  @IsOptional()
  @IsString()
  RETENTION_PERIOD?: string;

  /** How often retention is checked, in ms (default 3600000, one hour). */
  @Transform(({ value }) => (value === undefined || value === '' ? 3_600_000 : Number(value)))
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  RETENTION_CHECK_INTERVAL_MS = 3_600_000;

  /** pino log level. */
  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;
}

/** `validate` hook for ConfigModule: returns the typed config or throws one readable error. */
export function validateConfig(env: Record<string, unknown>): AppConfig {
  const config = plainToInstance(AppConfig, env, { exposeDefaultValues: true });
  const errors = validateSync(config, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) {
    throw new Error(`invalid configuration: ${errors.map((e) => Object.values(e.constraints ?? {}).join(', ')).join('; ')}`);
  }
  if (config.TRUST_PROXY !== undefined) trustProxy(config.TRUST_PROXY);
  try {
    parseTrustedKeys(config.TRUSTED_COMMITMENT_KEYS);
    const scheme = config.LEDGER_ORIGIN !== undefined ? originSchemeProblem(config.LEDGER_ORIGIN) : null;
    if (scheme) throw new Error(scheme);
    loadWitnessPolicy(config);
    parseTsaSettings(config.TSA_URL, config.TSA_CERTS, config.TSA_INTERVAL_MS);
    parseNostrSettings(config.NOSTR_RELAYS, config.NOSTR_KEY_FILE, config.NOSTR_ALLOW_INSECURE, config.NOSTR_INTERVAL_MS);
    if (config.RETENTION_PERIOD === '') config.RETENTION_PERIOD = undefined;
    if (config.RETENTION_PERIOD !== undefined) {
      try {
        parseRetentionPeriod(config.RETENTION_PERIOD);
      } catch (e) {
        throw new Error(`RETENTION_PERIOD: ${(e as Error).message}`);
      }
    }
  } catch (e) {
    throw new Error(`invalid configuration: ${(e as Error).message}`);
  }
  if (config.PUBLIC_BASE_URL) config.PUBLIC_BASE_URL = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  return config;
}

/** The `trustProxy` value (Fastify's; Express's `trust proxy` took the same) for TRUST_PROXY (see {@link AppConfig.TRUST_PROXY}). */
export function trustProxy(value: string | undefined): boolean | number | string[] {
  if (value === undefined || value === '' || value === 'false' || value === 'true') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((s) => s.trim());
}
