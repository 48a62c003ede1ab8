/**
 * Settings of the verification queue, read from the environment passed to
 * the application (validated here: a bad value stops the start with a message
 * naming the variable).
 */
import type { RedisOptions } from 'ioredis';

export const VERIFICATION_QUEUE = 'verification';
export const QUEUE_OPTIONS = Symbol('VERIFICATION_QUEUE_OPTIONS');

export interface VerificationQueueOptions {
  /** Redis for the queue; without it batches run in the API process. */
  redisUrl: string | null;
  /** BullMQ key prefix (QUEUE_PREFIX, default `aer1`): deployments sharing one Redis use different prefixes. */
  prefix: string;
  /** Jobs processed at once by one worker (WORKER_CONCURRENCY, default 1). */
  concurrency: number;
  /** Process jobs in the API process too (RUN_WORKER_IN_API=true); only with REDIS_URL. */
  runWorkerInApi: boolean;
  /** Targets per job (VERIFICATION_CHUNK_SIZE, default 500). */
  chunkSize: number;
  /** Job lock duration in ms (WORKER_LOCK_DURATION_MS, default 30000): a dead worker's job is retried after this. */
  lockDurationMs: number;
  /** How often workers look for stalled jobs (WORKER_STALLED_INTERVAL_MS, default 30000). */
  stalledIntervalMs: number;
  /** Pause before recording each chunk (WORKER_CHUNK_DELAY_MS, default 0): throttling, and tests that kill a worker mid-chunk. */
  chunkDelayMs: number;
}

function int(env: Record<string, string | undefined>, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`invalid configuration: ${name} must be an integer from ${min} to ${max}`);
  return n;
}

export function readQueueOptions(env: Record<string, string | undefined>): VerificationQueueOptions {
  const prefix = env.QUEUE_PREFIX && env.QUEUE_PREFIX !== '' ? env.QUEUE_PREFIX : 'aer1';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(prefix)) throw new Error('invalid configuration: QUEUE_PREFIX must be 1-64 of A-Z a-z 0-9 _ . -');
  const redisUrl = env.REDIS_URL && env.REDIS_URL !== '' ? env.REDIS_URL : null;
  if (redisUrl !== null && !/^rediss?:\/\/.+/.test(redisUrl)) throw new Error('invalid configuration: REDIS_URL must be redis://...');
  return {
    redisUrl,
    prefix,
    concurrency: int(env, 'WORKER_CONCURRENCY', 1, 1, 64),
    runWorkerInApi: env.RUN_WORKER_IN_API === 'true',
    chunkSize: int(env, 'VERIFICATION_CHUNK_SIZE', 500, 1, 10_000),
    lockDurationMs: int(env, 'WORKER_LOCK_DURATION_MS', 30_000, 1000, 3_600_000),
    stalledIntervalMs: int(env, 'WORKER_STALLED_INTERVAL_MS', 30_000, 500, 3_600_000),
    chunkDelayMs: int(env, 'WORKER_CHUNK_DELAY_MS', 0, 0, 600_000),
  };
}

/** ioredis options from a `redis://[user:password@]host[:port][/db]` or `rediss://` URL. */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db: Number.isSafeInteger(db) ? db : 0,
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * Producer side (API): fail fast when Redis is down instead of buffering
 * commands (short disconnectTimeout: a socket that never opened is not
 * waited for at shutdown).
 */
export function producerConnection(url: string): RedisOptions {
  return { ...redisOptionsFromUrl(url), enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, disconnectTimeout: 200 };
}

/** Worker side: block and wait; reconnects with the ioredis default retry strategy. */
export function workerConnection(url: string): RedisOptions {
  return { ...redisOptionsFromUrl(url), maxRetriesPerRequest: null };
}
