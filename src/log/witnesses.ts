import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { addSignatureLines, assembleHashes, consistencyProofPlan, verifyCosignatures } from '../core/tlog';
import { describeQuorum, quorumReached } from '../core/tlog/quorum';
import { DatabaseService } from '../database/database.service';
import { WebhookDispatcher } from '../webhooks/webhook.dispatcher';
import { submitToWitness } from '../witness/client';
import { LogIdentityService } from './log-identity.service';
import { StoredCheckpoint, TreeRepository } from './tree.repository';
import { WitnessConfig } from './witness-config';
import { WitnessedCheckpoints } from './witnessed.service';
import { WitnessRepository } from './witness.repository';

/**
 * A witness is "behind" when the newest signed checkpoint has gone this many
 * seconds without its cosignature (counted from the signing of the first
 * checkpoint after the last one it cosigned). /health counts it as not
 * current, and `ledger.checkpoint.witness_lag` is sent once per witness and
 * cosigned size.
 */
export const WITNESS_LAG_SECONDS = 60;
/** First retry delay after an unreachable witness, a 5xx or a refusal, in ms; doubled per failure up to {@link WITNESS_MAX_BACKOFF_MS}. */
export const WITNESS_BACKOFF_MS = 500;
export const WITNESS_MAX_BACKOFF_MS = 30_000;
/** Time allowed for one add-checkpoint exchange, in ms. */
const SUBMIT_TIMEOUT_MS = 10_000;
/** 409 answers followed (resubmitting from the size each one teaches) within one submission. */
const MAX_CONFLICTS = 3;

/** One witness as /health shows it. */
export interface WitnessHealth {
  /** Its name in WITNESS_POLICY_FILE; with WITNESSES, its key name. */
  name: string;
  /** The name in its vkey (the name its cosignature lines carry). */
  key_name: string;
  url: string;
  /** Counts toward the quorum; false: optional (asked, never counted). */
  required: boolean;
  /** Its last exchange got an HTTP answer (true), or none did (false: unreachable, timed out); null before the first. */
  reachable: boolean | null;
  /** Size of the newest checkpoint this witness cosigned (stored here), or null. */
  cosigned_size: number | null;
  /** RFC 3339 time its newest cosignature was received, or null. */
  cosigned_at: string | null;
  /** Checkpoints sizes behind: newest signed size minus cosigned size (0: current). */
  lag_sizes: number;
  /** Seconds the newest signed checkpoint has waited for this witness (0 when it has cosigned it). */
  lag_seconds: number;
  /** Cosigned the newest signed checkpoint, or lagging by less than WITNESS_LAG_SECONDS without having refused it. */
  current: boolean;
  /** The last failure (unreachable, refusal), cleared by the next cosignature. */
  last_error?: string;
}

/** What /health shows of witnessing. */
export interface WitnessingHealth {
  /** The fewest valid cosignatures that can meet the policy (k of WITNESSES; 0 for `quorum none`). */
  quorum: number;
  witnesses: WitnessHealth[];
  /** Witnesses that are current (required and optional). */
  current: number;
  /** Size of the newest checkpoint signed by the log. */
  newest_signed_size: number | null;
  /** The quorum policy and its state. */
  policy: {
    /** Where it is configured. */
    source: 'WITNESSES' | 'WITNESS_POLICY_FILE';
    /** The rule in words, e.g. `all of (eu: 2 of (w1, w2, w3), us: any of (w4, w5))`. */
    rule: string;
    /** The cosignatures stored on the newest signed checkpoint meet the rule (false before the first). */
    quorum_reached: boolean;
    /** The current required witnesses can meet the rule; false makes /health degraded. */
    current_quorum: boolean;
  };
}

interface Runtime {
  readonly cfg: WitnessConfig;
  /** The witness's latest cosigned size as it told us (a 409) or as we last saw it cosign; null: unknown. */
  known: number | null;
  cosigned: { size: number; at: string } | null;
  lagSince: string | null;
  busy: boolean;
  failures: number;
  retryAt: number;
  lastError: string | null;
  /** The last answer was a refusal (4xx, or a size beyond ours): not current until it cosigns again. */
  refused: boolean;
  /** The last exchange got an HTTP answer; null before the first. */
  reachable: boolean | null;
  alerted: string | null;
}

/**
 * Submits each newly signed checkpoint to every configured witness
 * (c2sp.org/tlog-witness add-checkpoint, issue 15) and stores the
 * cosignatures that verify (c2sp.org/tlog-cosignature, type 0x04 keys from
 * WITNESSES). Per witness: `old` is the size it last cosigned (as stored
 * here; 0 on first contact); a 409 teaches its real size and the
 * checkpoint is resubmitted from there with a consistency proof built from
 * the stored tree; unreachable witnesses, 5xx answers and refusals
 * (403/422/...: logged as errors; a 422 means the witness holds a history
 * this log's checkpoint does not extend) are retried with exponential
 * backoff (500 ms doubling to 30 s). Only the newest signed checkpoint is
 * submitted: a witness that fell behind skips straight to it. Inserts are
 * idempotent, so several API processes on one database may each run this.
 */
@Injectable()
export class WitnessCoordinator implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WitnessCoordinator');
  private readonly tree = new TreeRepository();
  private readonly repo = new WitnessRepository();
  private readonly runtimes: Runtime[];
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private newest: StoredCheckpoint | null = null;
  private stopping = false;

  constructor(
    private readonly db: DatabaseService,
    private readonly identity: LogIdentityService,
    private readonly witnessed: WitnessedCheckpoints,
    private readonly config: ConfigService<AppConfig, true>,
    @Optional() private readonly webhooks?: WebhookDispatcher,
  ) {
    this.runtimes = witnessed.policy.witnesses.map((cfg) => ({ cfg, known: null, cosigned: null, lagSince: null, busy: false, failures: 0, retryAt: 0, lastError: null, refused: false, reachable: null, alerted: null }));
  }

  onApplicationBootstrap(): void {
    if (!this.identity.current || this.runtimes.length === 0) return;
    const every = Math.max(100, Math.min(this.config.get('CHECKPOINT_INTERVAL_MS', { infer: true }), 1000));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
    void this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => undefined);
    await Promise.all([...this.inflight]);
  }

  /**
   * Witnessing for /health; null when no witnesses are configured. The
   * policy is judged by its rule: `quorum_reached` over the witnesses whose
   * stored cosignature covers the newest signed checkpoint, `current_quorum`
   * over the current ones (optional witnesses never count).
   */
  health(): WitnessingHealth | null {
    if (this.runtimes.length === 0) return null;
    const newest = this.newest;
    const policy = this.witnessed.policy;
    const witnesses = this.runtimes.map((r): WitnessHealth => {
      const lagSizes = newest ? Math.max(0, newest.size - (r.cosigned?.size ?? 0)) : 0;
      const lagSeconds = lagSizes === 0 || !r.lagSince ? 0 : Math.max(0, Math.round((Date.now() - Date.parse(r.lagSince)) / 1000));
      return {
        name: r.cfg.name,
        key_name: r.cfg.verifier.name,
        url: r.cfg.url,
        required: r.cfg.required,
        reachable: r.reachable,
        cosigned_size: r.cosigned?.size ?? null,
        cosigned_at: r.cosigned?.at ?? null,
        lag_sizes: lagSizes,
        lag_seconds: lagSeconds,
        current: lagSizes === 0 || (lagSeconds < WITNESS_LAG_SECONDS && !r.refused),
        ...(r.lastError ? { last_error: r.lastError } : {}),
      };
    });
    const keys = (pick: (r: Runtime, i: number) => boolean): Set<string> => new Set(this.runtimes.filter(pick).map((r) => r.cfg.vkey));
    const cosignedNewest = keys((r) => newest !== null && (r.cosigned?.size ?? -1) >= newest.size);
    const current = keys((_, i) => witnesses[i].current);
    return {
      quorum: policy.quorum,
      witnesses,
      current: current.size,
      newest_signed_size: newest?.size ?? null,
      policy: {
        source: policy.source.kind === 'WITNESS_POLICY_FILE' ? 'WITNESS_POLICY_FILE' : 'WITNESSES',
        rule: describeQuorum(policy.rule),
        quorum_reached: newest !== null && quorumReached(policy.rule, cosignedNewest),
        current_quorum: quorumReached(policy.rule, current),
      },
    };
  }

  /** Look at the newest signed checkpoint and submit it to every witness that has not cosigned it (each at most once at a time). */
  tick(): Promise<void> {
    if (!this.identity.current || this.runtimes.length === 0 || this.stopping) return Promise.resolve();
    this.ticking ??= this.look()
      .catch((e: unknown) => this.logger.error(`witnessing round failed: ${(e as Error).message}`))
      .finally(() => {
        this.ticking = null;
      });
    return this.ticking;
  }

  private async look(): Promise<void> {
    const newest = await this.tree.latestCheckpoint(this.db);
    this.newest = newest;
    if (!newest) return;
    for (const r of this.runtimes) {
      const mine = await this.repo.newestBy(this.db, r.cfg.vkey);
      r.cosigned = mine ? { size: mine.size, at: mine.received_at } : null;
      if (mine && (r.known === null || r.known < mine.size)) r.known = mine.size;
      if ((r.cosigned?.size ?? -1) >= newest.size) {
        r.lagSince = null;
        continue;
      }
      const after = await this.tree.checkpointCovering(this.db, (r.cosigned?.size ?? 0) + 1);
      r.lagSince = after?.signed_at ?? newest.signed_at;
      this.alertIfBehind(r, newest);
      if (r.busy || Date.now() < r.retryAt) continue;
      r.busy = true;
      const p: Promise<void> = this.submit(r, newest)
        .catch((e: unknown) => this.failed(r, `submission failed: ${(e as Error).message}`))
        .finally(() => {
          r.busy = false;
          this.inflight.delete(p);
        });
      this.inflight.add(p);
    }
  }

  private alertIfBehind(r: Runtime, newest: StoredCheckpoint): void {
    if (!this.webhooks || !r.lagSince) return;
    const lag = Math.round((Date.now() - Date.parse(r.lagSince)) / 1000);
    if (lag <= WITNESS_LAG_SECONDS) return;
    const key = `${r.cfg.verifier.name}@${r.cosigned?.size ?? 0}`;
    if (r.alerted === key) return;
    r.alerted = key;
    void this.webhooks.emit(
      'ledger.checkpoint.witness_lag',
      { origin: this.identity.current!.origin, witness: r.cfg.verifier.name, checkpoint_size: newest.size, cosigned_size: r.cosigned?.size ?? null, lag_seconds: lag, threshold_seconds: WITNESS_LAG_SECONDS },
      key,
    );
  }

  private failed(r: Runtime, why: string, level: 'warn' | 'error' = 'warn'): void {
    r.failures += 1;
    r.refused = level === 'error';
    r.lastError = why;
    const delay = Math.min(WITNESS_BACKOFF_MS * 2 ** (r.failures - 1), WITNESS_MAX_BACKOFF_MS);
    r.retryAt = Date.now() + delay;
    this.logger[level](`witness ${r.cfg.verifier.name} (${r.cfg.url}): ${why}; retrying in ${delay} ms`);
  }

  /** Submit `cp` to one witness, following up to {@link MAX_CONFLICTS} 409s; store a verified cosignature. */
  private async submit(r: Runtime, cp: StoredCheckpoint): Promise<void> {
    let old = r.known ?? 0;
    for (let conflicts = 0; ; ) {
      if (old > cp.size) {
        r.known = null; // ask again next time: the witness may have been told a size by another log with our key
        return this.failed(r, `the witness holds size ${old}, beyond this log's newest checkpoint (${cp.size}): it cosigned a history this database does not have`, 'error');
      }
      const plan = old === 0 || old === cp.size ? null : consistencyProofPlan(old, cp.size);
      const proof = plan ? assembleHashes(plan, await this.tree.hashes(this.db, plan.nodes)) : [];
      const res = await submitToWitness(r.cfg.url, old, proof, cp.note, { witness: r.cfg.verifier, timeoutMs: SUBMIT_TIMEOUT_MS });
      if (res.status === 'conflict') {
        r.known = res.size;
        old = res.size;
        if (++conflicts > MAX_CONFLICTS) return this.failed(r, `the witness answered 409 ${MAX_CONFLICTS + 1} times (last size ${res.size})`);
        continue;
      }
      r.reachable = res.status !== 'unreachable';
      if (res.status === 'unreachable') return this.failed(r, `unreachable: ${res.error}`);
      if (res.status === 'rejected') {
        const body = res.body.trim().slice(0, 300);
        if (res.http >= 500) return this.failed(r, `HTTP ${res.http}: ${body}`);
        const what = res.http === 422 ? 'refused the checkpoint as inconsistent with what it cosigned before (split view or rewritten history)' : `refused the checkpoint`;
        return this.failed(r, `${what}: HTTP ${res.http} ${body}`, 'error');
      }
      // submitToWitness verified the lines with the witness key; verify again as a note and take the timestamp.
      const { cosignatures } = verifyCosignatures(addSignatureLines(cp.note, res.cosignatureLines), [r.cfg.verifier]);
      const c = cosignatures[0];
      if (!c) return this.failed(r, 'answered 200 without a valid cosignature by its key', 'error');
      const at = new Date().toISOString();
      await this.db.write((tx) => this.repo.insertCosignature(tx, { size: cp.size, witness_vkey: r.cfg.vkey, witness_name: c.name, line: c.line, timestamp: c.timestamp, received_at: at }));
      r.known = cp.size;
      if (!r.cosigned || r.cosigned.size < cp.size) r.cosigned = { size: cp.size, at };
      r.failures = 0;
      r.retryAt = 0;
      r.lastError = null;
      r.refused = false;
      if (this.newest && cp.size >= this.newest.size) r.lagSince = null;
      return;
    }
  }
}
