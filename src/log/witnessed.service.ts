import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { addSignatureLines, verifyCosignatures } from '../core/tlog';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { StoredCheckpoint, TreeRepository } from './tree.repository';
import { parseTsaSettings, parseWitnessPolicy, TsaSettings, WitnessPolicy } from './witness-config';
import { StoredCosignature, StoredTimestamp, WitnessRepository } from './witness.repository';

/** Witnessed sizes looked at, newest first, before giving up on finding one whose stored cosignatures verify. */
const WITNESSED_CANDIDATES = 8;

/**
 * The reads of witnessing and time anchors (issue 15), shared by the log's
 * pages and proofs: the configured policy (WITNESSES, WITNESS_QUORUM,
 * TSA_*), the newest checkpoint carrying at least k valid cosignatures by
 * configured witnesses (the log's note with their lines appended, C2SP
 * signed-note), stored cosignatures and RFC 3161 tokens. Stored
 * cosignatures were verified on receipt and are verified again here before
 * a note is served as witnessed.
 */
@Injectable()
export class WitnessedCheckpoints {
  readonly policy: WitnessPolicy;
  readonly tsa: TsaSettings;
  private readonly tree = new TreeRepository();
  private readonly repo = new WitnessRepository();
  private readonly logger = new Logger('Witnessing');
  /**
   * The largest witnessed size this process has served: cosignatures are
   * append-only, so the newest witnessed size never decreases and later
   * lookups need not aggregate the rows below it.
   */
  private floor = 0;

  constructor(
    private readonly db: DatabaseService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.policy = parseWitnessPolicy(config.get('WITNESSES', { infer: true }), config.get('WITNESS_QUORUM', { infer: true }));
    this.tsa = parseTsaSettings(config.get('TSA_URL', { infer: true }), config.get('TSA_CERTS', { infer: true }), config.get('TSA_INTERVAL_MS', { infer: true }));
  }

  /** True when WITNESSES names at least one witness: `/checkpoint` and proofs then serve witnessed checkpoints only. */
  get enabled(): boolean {
    return this.policy.witnesses.length > 0;
  }

  private get vkeys(): string[] {
    return this.policy.witnesses.map((w) => w.vkey);
  }

  /** Stored cosignatures on the checkpoint of `size` by the configured witnesses. */
  cosignatures(size: number, q: Queryable = this.db): Promise<StoredCosignature[]> {
    return this.repo.cosignatures(q, size, this.vkeys);
  }

  /**
   * The checkpoint `cp` with the configured witnesses' stored cosignature
   * lines appended, when at least k of them verify; else null.
   */
  async withCosignatures(cp: StoredCheckpoint, q: Queryable = this.db): Promise<StoredCheckpoint | null> {
    const stored = await this.cosignatures(cp.size, q);
    if (stored.length === 0) return null;
    const note = addSignatureLines(cp.note, stored.map((s) => s.line));
    let valid: number;
    try {
      valid = verifyCosignatures(note, this.policy.witnesses.map((w) => w.verifier)).cosignatures.length;
    } catch (e) {
      this.logger.error(`stored cosignatures on checkpoint ${cp.size} do not verify: ${(e as Error).message}`);
      return null;
    }
    return valid >= this.policy.quorum ? { ...cp, note } : null;
  }

  /** The newest checkpoint with at least k valid cosignatures (note with their lines), or null (none yet, or no witnesses configured). */
  async newest(q: Queryable = this.db): Promise<StoredCheckpoint | null> {
    if (!this.enabled) return null;
    for (const floor of this.floor > 0 ? [this.floor, 0] : [0]) {
      for (const size of await this.repo.witnessedSizes(q, this.vkeys, this.policy.quorum, WITNESSED_CANDIDATES, floor)) {
        const cp = await this.tree.checkpoint(q, size);
        if (!cp) continue;
        const w = await this.withCosignatures(cp, q);
        if (w) {
          if (size > this.floor) this.floor = size;
          return w;
        }
      }
    }
    return null;
  }

  /** The RFC 3161 token stored for the checkpoint of `size`, or null. */
  timestamp(size: number, q: Queryable = this.db): Promise<StoredTimestamp | null> {
    return this.repo.timestamp(q, size);
  }

  /** The newest stored token, or null. */
  newestTimestamp(q: Queryable = this.db): Promise<StoredTimestamp | null> {
    return this.repo.newestTimestamp(q);
  }

  /**
   * The newest timestamped checkpoint when it covers leaf `index` (size >
   * index) and is not newer than `upTo`: that checkpoint (with its
   * cosignatures when witnessing) and its token. Null without a TSA, or
   * when no anchored checkpoint covers the leaf yet.
   */
  async anchored(index: number, upTo: number, q: Queryable = this.db): Promise<{ checkpoint: StoredCheckpoint; timestamp: StoredTimestamp } | null> {
    if (!this.tsa) return null;
    const ts = await this.repo.newestTimestamp(q);
    if (!ts || ts.size <= index || ts.size > upTo) return null;
    const cp = await this.tree.checkpoint(q, ts.size);
    if (!cp) return null;
    const checkpoint = this.enabled ? await this.withCosignatures(cp, q) : cp;
    return checkpoint ? { checkpoint, timestamp: ts } : null;
  }
}
