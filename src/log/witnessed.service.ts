import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { addSignatureLines, verifyCosignatures } from '../core/tlog';
import { describeQuorum, quorumKeys, quorumReached } from '../core/tlog/quorum';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { LogIdentityService } from './log-identity.service';
import { StoredCheckpoint, TreeRepository } from './tree.repository';
import { loadWitnessPolicy, logKeyMismatch, parseTsaSettings, TsaSettings, WitnessingPolicy } from './witness-config';
import { StoredCosignature, StoredTimestamp, WitnessRepository } from './witness.repository';

/** Witnessed sizes read per query, newest first, when looking for one whose stored cosignatures verify and meet the rule. */
const WITNESSED_CANDIDATES = 8;
/** Queries of {@link WITNESSED_CANDIDATES} made before giving up (64 candidates). */
const WITNESSED_PAGES = 8;

/**
 * The reads of witnessing and time anchors (issue 15), shared by the log's
 * pages and proofs: the configured policy (WITNESSES and WITNESS_QUORUM, or
 * WITNESS_POLICY_FILE; TSA_*), the newest checkpoint whose valid
 * cosignatures by configured witnesses meet the policy's quorum rule (the
 * log's note with the lines of every configured witness, required or
 * optional, appended: C2SP signed-note), stored cosignatures and RFC 3161
 * tokens. Stored
 * cosignatures were verified on receipt and are verified again here before
 * a note is served as witnessed.
 */
@Injectable()
export class WitnessedCheckpoints {
  readonly policy: WitnessingPolicy;
  /** The vkeys that count toward the quorum (the rule's tree). */
  private readonly counted: string[];
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
    identity: LogIdentityService,
  ) {
    this.policy = loadWitnessPolicy({ WITNESSES: config.get('WITNESSES', { infer: true }), WITNESS_QUORUM: config.get('WITNESS_QUORUM', { infer: true }), WITNESS_POLICY_FILE: config.get('WITNESS_POLICY_FILE', { infer: true }) });
    const mismatch = logKeyMismatch(this.policy, identity.current ? { vkey: identity.current.vkey, publicKey: identity.current.signer.publicKey } : null);
    if (mismatch) throw new Error(`invalid configuration: ${mismatch}`);
    this.counted = quorumKeys(this.policy.rule);
    this.tsa = parseTsaSettings(config.get('TSA_URL', { infer: true }), config.get('TSA_CERTS', { infer: true }), config.get('TSA_INTERVAL_MS', { infer: true }));
  }

  /** True when WITNESSES or the policy file names at least one witness: `/checkpoint` and proofs then serve witnessed checkpoints only. */
  get enabled(): boolean {
    return this.policy.witnesses.length > 0;
  }

  /** Who must cosign, in words for messages: `2 of the 3 configured witnesses` (WITNESSES), or the policy file's rule. */
  get quorumWords(): string {
    const p = this.policy;
    if (p.source.kind === 'WITNESS_POLICY_FILE') return `witnesses meeting the quorum of WITNESS_POLICY_FILE (${describeQuorum(p.rule)})`;
    return `${p.quorum} of the ${p.witnesses.length} configured witnesses`;
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
   * lines appended (required and optional ones), when the valid ones meet
   * the quorum rule; else null.
   */
  async withCosignatures(cp: StoredCheckpoint, q: Queryable = this.db): Promise<StoredCheckpoint | null> {
    const stored = await this.cosignatures(cp.size, q);
    if (stored.length === 0) return this.policy.quorum === 0 ? cp : null;
    const note = addSignatureLines(cp.note, stored.map((s) => s.line));
    const byKey = new Map(this.policy.witnesses.map((w) => [`${w.verifier.name}+${w.verifier.keyId}`, w.vkey]));
    let valid: Set<string>;
    try {
      valid = new Set(verifyCosignatures(note, this.policy.witnesses.map((w) => w.verifier)).cosignatures.map((c) => byKey.get(`${c.name}+${c.keyId}`) ?? ''));
    } catch (e) {
      this.logger.error(`stored cosignatures on checkpoint ${cp.size} do not verify: ${(e as Error).message}`);
      return null;
    }
    return quorumReached(this.policy.rule, valid) ? { ...cp, note } : null;
  }

  /**
   * The newest checkpoint whose valid cosignatures meet the quorum rule (note
   * with their lines), or null (none yet, or no witnesses configured). With
   * `quorum none` that is the newest signed checkpoint. Sizes are found in
   * SQL by their count of cosignatures from counted witnesses (at least the
   * rule's minimum), then judged by the rule, newest first.
   */
  async newest(q: Queryable = this.db): Promise<StoredCheckpoint | null> {
    if (!this.enabled) return null;
    if (this.policy.quorum === 0) {
      const cp = await this.tree.latestCheckpoint(q);
      return cp ? this.withCosignatures(cp, q) : null;
    }
    for (const floor of this.floor > 0 ? [this.floor, 0] : [0]) {
      let below: number | undefined;
      for (let page = 0; page < WITNESSED_PAGES; page++) {
        const sizes = await this.repo.witnessedSizes(q, this.counted, this.policy.quorum, WITNESSED_CANDIDATES, floor, below);
        for (const size of sizes) {
          const cp = await this.tree.checkpoint(q, size);
          if (!cp) continue;
          const w = await this.withCosignatures(cp, q);
          if (w) {
            if (size > this.floor) this.floor = size;
            return w;
          }
        }
        if (sizes.length < WITNESSED_CANDIDATES) break;
        below = sizes[sizes.length - 1];
      }
      if (floor > 0) {
        // More candidates above the floor than were looked at (e.g. one group's witnesses cosigned a long run of
        // checkpoints while another group was down): the floor was served as witnessed, and cosignatures stay.
        const cp = await this.tree.checkpoint(q, floor);
        const w = cp ? await this.withCosignatures(cp, q) : null;
        if (w) return w;
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
