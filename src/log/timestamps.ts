import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { DatabaseService } from '../database/database.service';
import { checkpointTimestampDigest } from '../core/timestamp';
import { requestTimestamp } from '../timestamp/tsa-client';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { WitnessedCheckpoints } from './witnessed.service';
import { WitnessRepository } from './witness.repository';

/** First retry delay after a failed or refused timestamp, in ms, doubled per failure up to 5 minutes. */
const TSA_BACKOFF_MS = 1000;
const TSA_MAX_BACKOFF_MS = 300_000;

/** What /health shows of the time anchors. */
export interface TimestampHealth {
  tsa_url: string;
  /** Size, genTime and TSA of the newest stored token, or nulls. */
  timestamped_size: number | null;
  gen_time: string | null;
  tsa_name: string | null;
  /** The last failure or refusal (code: message), cleared by the next stored token. */
  last_error?: string;
}

/**
 * RFC 3161 time anchors (S10, issue 15): when TSA_URL is set, the checkpoint
 * readers are served (the newest witnessed one with WITNESSES, else the
 * newest signed) is timestamped at most every TSA_INTERVAL_MS (0: each new
 * one) over SHA-256 of its note text without signatures
 * ({@link checkpointTimestampDigest}), so the token does not depend on
 * which cosignatures are attached. Each answer is verified against
 * TSA_CERTS, the digest and the nonce sent before it is stored; a refused
 * token (another TSA, another checkpoint, a broken signature, ...) is
 * logged with its reason code and never stored. Inserts are idempotent.
 */
@Injectable()
export class CheckpointTimestamper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CheckpointTimestamper');
  private readonly repo = new WitnessRepository();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private failures = 0;
  private retryAt = 0;
  private lastError: string | null = null;
  private newest: { size: number; gen_time: string; tsa_name: string } | null = null;

  constructor(
    private readonly db: DatabaseService,
    private readonly identity: LogIdentityService,
    private readonly log: LogService,
    private readonly witnessed: WitnessedCheckpoints,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.identity.current || !this.witnessed.tsa) return;
    const every = Math.max(100, Math.min(this.config.get('CHECKPOINT_INTERVAL_MS', { infer: true }), 1000));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
    void this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** The anchors for /health; null without TSA_URL. */
  health(): TimestampHealth | null {
    const tsa = this.witnessed.tsa;
    if (!tsa) return null;
    return { tsa_url: tsa.url, timestamped_size: this.newest?.size ?? null, gen_time: this.newest?.gen_time ?? null, tsa_name: this.newest?.tsa_name ?? null, ...(this.lastError ? { last_error: this.lastError } : {}) };
  }

  /** Timestamp the served checkpoint now if it is due (one request at a time). */
  tick(): Promise<void> {
    if (!this.identity.current || !this.witnessed.tsa) return Promise.resolve();
    this.running ??= this.anchorIfDue()
      .catch((e: unknown) => this.fail(`not timestamped this time: ${(e as Error).message}`))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private fail(why: string): void {
    this.failures += 1;
    this.lastError = why;
    const delay = Math.min(TSA_BACKOFF_MS * 2 ** (this.failures - 1), TSA_MAX_BACKOFF_MS);
    this.retryAt = Date.now() + delay;
    this.logger.error(`${why}; retrying in ${delay} ms`);
  }

  private async anchorIfDue(): Promise<void> {
    const tsa = this.witnessed.tsa!;
    const last = await this.repo.newestTimestamp(this.db);
    if (last) this.newest = { size: last.size, gen_time: last.gen_time, tsa_name: last.tsa_name };
    if (Date.now() < this.retryAt) return;
    const cp = await this.log.latest();
    if (!cp || cp.size === 0) return;
    if (last && last.size >= cp.size) return;
    if (last && tsa.intervalMs > 0 && Date.now() - Date.parse(last.received_at) < tsa.intervalMs) return;
    const r = await requestTimestamp(tsa.url, checkpointTimestampDigest(cp.note), { certsPem: tsa.certsPem });
    if (!r.ok) return this.fail(`the RFC 3161 token for checkpoint ${cp.size} was refused (${r.code}): ${r.message}`);
    const receivedAt = new Date().toISOString();
    await this.db.write((tx) => this.repo.insertTimestamp(tx, { size: cp.size, token: r.token, gen_time: r.genTime, tsa_name: r.tsaName, received_at: receivedAt }));
    this.newest = { size: cp.size, gen_time: r.genTime, tsa_name: r.tsaName };
    this.failures = 0;
    this.retryAt = 0;
    this.lastError = null;
    this.logger.log(`checkpoint ${cp.size} timestamped at ${r.genTime} by ${r.tsaName}`);
  }
}
