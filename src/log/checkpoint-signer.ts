import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { LedgerMetrics } from '../metrics/ledger-metrics';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { LEDGER_GENESIS_HASH } from '../core/ledger/event-hash';
import { checkpointNoteText, consistencyProofPlan, assembleHashes, parseVerifierKey, signNote, TreeIntegrator, verifyCheckpoint, verifyConsistency } from '../core/tlog';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { TreeRepository } from './tree.repository';
import { LeafRecomputer } from './leaf-recomputer';

/** Leaves integrated per checkpoint at most: a long backlog (an upgraded ledger) is signed in steps. */
const MAX_LEAVES_PER_CHECKPOINT = 100_000;

/** What `/health` shows of the signer. */
export interface SignerState {
  signing: 'active' | 'stopped' | 'disabled';
  reason?: string;
  /** Why the last run signed nothing while signing stays active (a read failed; it is tried again next tick), with its time. */
  last_error?: { message: string; at: string };
  /** Size and time (RFC 3339) of the newest checkpoint this process knows. */
  checkpoint_size: number | null;
  signed_at: string | null;
}

/**
 * Signs C2SP checkpoints (tlog-checkpoint over signed-note, Ed25519) of the
 * ledger's tree whenever it has grown, at most every CHECKPOINT_INTERVAL_MS.
 *
 * It never signs what it has not checked. It keeps its own tree, resumed
 * from the stored nodes only where they reproduce the last signed root, and
 * extends it with leaves it recomputes from the events (each event's hash
 * and chain link checked). Before signing size n it requires that (1) its
 * root equals the stored tree's root at n, and (2) the consistency proof
 * built from stored nodes proves the last checkpoint's root a prefix of the
 * new one. If anything disagrees it stops signing for good (until an
 * operator restarts it) and says why in /health: two inconsistent
 * checkpoints are never signed. Several processes may sign: a checkpoint
 * of a size already stored by another is checked to have the same root.
 */
@Injectable()
export class CheckpointSigner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CheckpointSigner');
  private readonly tree = new TreeRepository();
  private timer: NodeJS.Timeout | null = null;
  /** The last run queued (runs are serial), and the one waiting to start, if any. */
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private stopped: string | null = null;
  /** This signer's own tree (leaves recomputed from events), and the event hash at its size. */
  private mine: { integrator: TreeIntegrator; headHash: string } | null = null;
  private last: { size: number; signed_at: string } | null = null;
  /** The error of the last run, when it failed (null after a run that did not throw). */
  private lastError: { message: string; at: string } | null = null;
  /** Set at shutdown: no run starts after it. */
  private shuttingDown = false;
  /** Recomputes new leaves from the events: in a worker thread with its own read connection where the database allows one. */
  private readonly leaves: LeafRecomputer;

  constructor(
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
    private readonly identity: LogIdentityService,
    private readonly log: LogService,
    private readonly config: ConfigService<AppConfig, true>,
    @Optional() private readonly metrics?: LedgerMetrics,
  ) {
    this.leaves = new LeafRecomputer(db.connectionTarget, db);
  }

  onApplicationBootstrap(): void {
    if (!this.identity.current) return;
    const every = this.config.get('CHECKPOINT_INTERVAL_MS', { infer: true });
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
    void this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // The worker first: stopping it fails a run still waiting on it, so the wait below always ends.
    await this.leaves.close();
    await this.chain;
  }

  /** The signer's state for /health. */
  state(): SignerState {
    return {
      signing: !this.identity.current ? 'disabled' : this.stopped ? 'stopped' : 'active',
      ...(this.stopped ? { reason: this.stopped } : !this.identity.current ? { reason: this.identity.reason } : {}),
      ...(this.lastError && !this.stopped ? { last_error: this.lastError } : {}),
      checkpoint_size: this.last?.size ?? null,
      signed_at: this.last?.signed_at ?? null,
    };
  }

  /**
   * Sign a checkpoint if the tree has grown. Runs one at a time; resolves
   * when a run that started after this call has finished (calls made while
   * one waits to start share it), so a caller that has just appended sees
   * its events in the next checkpoint.
   */
  tick(): Promise<void> {
    if (!this.identity.current || this.stopped || this.shuttingDown) return Promise.resolve();
    if (this.queued) return this.queued;
    const run = this.chain.then(async () => {
      this.queued = null;
      try {
        await this.signIfGrown();
        this.lastError = null;
      } catch (e) {
        this.lastError = { message: (e as Error).message, at: new Date().toISOString() };
        this.logger.error(`checkpoint not signed this time: ${(e as Error).message}`);
      }
    });
    this.queued = run;
    this.chain = run;
    return run;
  }

  private stop(reason: string): void {
    this.stopped = reason;
    this.logger.error(`checkpoint signing STOPPED: ${reason}`);
  }

  /** (Re)start this signer's tree from the newest stored checkpoint, checking the stored nodes reproduce its signed root. */
  private async resume(): Promise<boolean> {
    const id = this.identity.current!;
    const cp = await this.tree.latestCheckpoint(this.db);
    if (!cp) {
      this.mine = { integrator: TreeIntegrator.empty(), headHash: LEDGER_GENESIS_HASH };
      return true;
    }
    try {
      verifyCheckpoint(cp.note, [parseVerifierKey(id.vkey)], id.origin);
    } catch (e) {
      this.stop(`the stored checkpoint of size ${cp.size} does not verify under this log's key ${id.vkey}: ${(e as Error).message}`);
      return false;
    }
    const integrator = TreeIntegrator.resume(cp.size, await this.tree.rightEdgeHashes(this.db, cp.size));
    if (integrator.root().toString('base64') !== cp.root) {
      this.stop(`the stored tree at size ${cp.size} does not reproduce the signed checkpoint's root`);
      return false;
    }
    const headHash = cp.size === 0 ? LEDGER_GENESIS_HASH : await this.events.hashAt(this.db, cp.size);
    if (headHash === null) {
      this.stop(`the ledger has no event at position ${cp.size}, which the checkpoint of size ${cp.size} covers`);
      return false;
    }
    this.mine = { integrator, headHash };
    this.last = { size: cp.size, signed_at: cp.signed_at };
    this.metrics?.checkpointSigned(cp.size, Date.parse(cp.signed_at));
    return true;
  }

  private async signIfGrown(): Promise<void> {
    const id = this.identity.current!;
    const latest = await this.tree.latestCheckpoint(this.db);
    if (!this.mine || (latest && latest.size !== this.mine.integrator.size)) {
      if (latest && this.mine && latest.size < this.mine.integrator.size) {
        this.stop(`the newest stored checkpoint (${latest.size}) is smaller than one this process signed (${this.mine.integrator.size}): the database was rolled back`);
        return;
      }
      if (!(await this.resume())) return;
    }
    const mine = this.mine!;
    const from = mine.integrator.size;
    const head = (await this.events.head(this.db))?.position ?? 0;
    if (head < from) {
      this.stop(`the ledger has ${head} events, fewer than the signed checkpoint's ${from}`);
      return;
    }
    if (latest && head === from) return;
    const to = Math.min(head, from + MAX_LEAVES_PER_CHECKPOINT);
    // Recompute the new leaves from the events, checking each event's hash and link (in the worker thread when there is one).
    const r = await this.leaves.recompute({ from, to, edge: mine.integrator.edgeHashes(), prevHash: mine.headHash });
    if (!r.ok) return this.stop(r.reason);
    const work = TreeIntegrator.resume(r.size, r.edge);
    const prev = r.headHash;
    const root = r.root;
    if (!work.root().equals(root)) return this.stop(`the recomputed tree's right edge at size ${to} does not give its root`);
    const stored = await this.log.rootAt(to);
    if (!stored.equals(root)) return this.stop(`the stored tree's root at size ${to} differs from the root of the leaves recomputed from the events`);
    if (latest && from > 0) {
      const proof = assembleHashes(consistencyProofPlan(from, to), await this.tree.hashes(this.db, consistencyProofPlan(from, to).nodes));
      try {
        verifyConsistency(from, to, proof, Buffer.from(latest.root, 'base64'), root);
      } catch (e) {
        return this.stop(`the tree at size ${to} is not consistent with the signed checkpoint of size ${from}: ${(e as Error).message}`);
      }
    }
    const text = checkpointNoteText({ origin: id.origin, size: to, rootHash: root, extensions: [] });
    const note = signNote(text, [id.signer]);
    const signedAt = new Date().toISOString();
    // On the write connection: a file SQLite's read connection is read-only.
    const inserted = await this.db.write((tx) => this.tree.insertCheckpoint(tx, { size: to, root: root.toString('base64'), note, signed_at: signedAt }));
    if (!inserted) {
      const other = await this.tree.checkpoint(this.db, to);
      if (!other || other.root !== root.toString('base64')) return this.stop(`another signer stored a checkpoint of size ${to} with a different root`);
    }
    this.mine = { integrator: work, headHash: prev };
    this.last = { size: to, signed_at: inserted ? signedAt : (await this.tree.checkpoint(this.db, to))!.signed_at };
    this.metrics?.checkpointSigned(to, Date.parse(this.last.signed_at));
  }
}
