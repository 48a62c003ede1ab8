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
import { AppendGate } from '../ledger/append-gate';
import { dirname } from 'node:path';
import { CheckpointStateError, CheckpointStateStore, FileCheckpointState, MemoryCheckpointState, SignedState } from './checkpoint-state';
import { MissingNodeError } from './tree.repository';
import { StaticTiles } from './static-tiles';

/** Leaves integrated per checkpoint at most: a long backlog (an upgraded ledger) is signed in steps. */
const MAX_LEAVES_PER_CHECKPOINT = 100_000;

/**
 * Why signing stopped, as a code: the database is behind, or forks from, the
 * checkpoint kept in the state file; the state file is unusable; or the
 * stored tree disagrees with the events or with the stored checkpoints.
 */
export type StopCode =
  | 'database_behind_checkpoint_state'
  | 'database_forks_from_checkpoint_state'
  | 'checkpoint_state_unusable'
  | 'stored_checkpoint_invalid'
  | 'stored_tree_mismatch'
  | 'database_rolled_back'
  | 'other_signer_root_differs';

/** What `/health` shows of the signer. */
export interface SignerState {
  signing: 'active' | 'stopped' | 'disabled';
  reason?: string;
  /** With `stopped`: why, as a code. */
  reason_code?: StopCode;
  /** With a state-file stop: the checkpoint kept in the state file (null when it is unusable); never its path (the log line has it). */
  checkpoint_state?: { size: number; root: string } | null;
  /** With a state-file stop: the database's tree size (events) and its root at that size (null when its nodes are missing). */
  database?: { size: number; root: string | null; root_at_state_size?: string | null };
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
 *
 * The database can be replaced under it (restored from an older backup):
 * so the newest checkpoint the key signed is also kept outside it, in the
 * state file ({@link CheckpointStateStore}, checkpoint-state.ts), written
 * before a checkpoint is stored or served. At start and before every
 * signature the database's tree must extend that checkpoint: at least its
 * size, the same root at its size, and a checked consistency proof from it
 * to the new size. When it does not (`database_behind_checkpoint_state`,
 * `database_forks_from_checkpoint_state`) signing stops and this process
 * refuses appends ({@link AppendGate}: 503 `log_unavailable`), since events
 * appended to that database could never be signed under this origin and
 * would be lost when the newer database is restored. A state file ahead of
 * this process's view but matching the database's tree (another process
 * sharing the key file signed it) is fine.
 */
@Injectable()
export class CheckpointSigner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CheckpointSigner');
  private readonly tree = new TreeRepository();
  private timer: NodeJS.Timeout | null = null;
  /** The last run queued (runs are serial), and the one waiting to start, if any. */
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private stopped: { code: StopCode; reason: string; checkpoint_state?: SignerState['checkpoint_state']; database?: SignerState['database'] } | null = null;
  /** Where the last signed checkpoint is kept outside the database (null without a key). */
  private readonly store: CheckpointStateStore | null;
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
    @Optional() private readonly gate?: AppendGate,
    @Optional() private readonly staticTiles?: StaticTiles,
  ) {
    this.leaves = new LeafRecomputer(db.connectionTarget, db);
    const id = identity.current;
    this.store = !id ? null : id.statePath ? new FileCheckpointState(id.statePath, id.origin, id.vkey) : new MemoryCheckpointState();
  }

  /** Check the database against the state file before the service takes requests (appends are refused from the start when it is behind or forked); then sign on a clock. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.identity.current) return;
    try {
      await this.checkState();
    } catch (e) {
      this.lastError = { message: this.withoutPaths((e as Error).message), at: new Date().toISOString() };
      this.logger.error(`cannot compare the database with the checkpoint state file yet: ${(e as Error).message}`);
    }
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
      ...(this.stopped
        ? {
            reason: this.stopped.reason,
            reason_code: this.stopped.code,
            ...(this.stopped.checkpoint_state !== undefined ? { checkpoint_state: this.stopped.checkpoint_state } : {}),
            ...(this.stopped.database ? { database: this.stopped.database } : {}),
          }
        : !this.identity.current
          ? { reason: this.identity.reason }
          : {}),
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
        this.lastError = { message: this.withoutPaths((e as Error).message), at: new Date().toISOString() };
        this.logger.error(`checkpoint not signed this time: ${(e as Error).message}`);
      }
      // TILES_DIR: the static copy follows the checkpoint /checkpoint serves (never throws).
      await this.staticTiles?.sync();
    });
    this.queued = run;
    this.chain = run;
    return run;
  }

  private stop(code: StopCode, reason: string, detail: { checkpoint_state?: SignerState['checkpoint_state']; database?: SignerState['database'] } = {}, refuseAppends = false): void {
    const shown = this.withoutPaths(reason);
    this.stopped = { code, reason: shown, ...detail };
    this.log.signingStopped = { code, reason: shown };
    if (refuseAppends) this.gate?.set(`checkpoint signing is stopped and writes are refused: ${shown}`);
    this.logger.error(`checkpoint signing STOPPED (${code}): ${reason}${this.store?.path ? ` (state file: ${this.store.path})` : ''}`);
  }

  /**
   * `text` for anonymous answers (/health, error messages): the state file,
   * the signing key file and the state file's folder named by their role;
   * the server's log lines keep the paths for the operator.
   */
  private withoutPaths(text: string): string {
    const roles: [string | null | undefined, string][] = [
      [this.store?.path, "the signer's state file"],
      [this.identity.current?.source.path, 'the signing key file'],
      [this.store?.path ? dirname(this.store.path) : null, "the state file's folder"],
    ];
    const state = this.store?.path;
    // writeFileDurably's temporary copy (`<file>.tmp-<pid>-<hex>`), named in a failed write's error.
    const escaped = state ? state.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : null;
    let out = escaped ? text.replace(new RegExp(escaped + '\\.tmp-[0-9]+-[0-9a-f]+', 'g'), "a temporary copy of the signer's state file") : text;
    for (const [path, role] of roles) if (path && path !== '/' && path !== '.') out = out.split(path).join(role);
    return out;
  }

  /** MTH of the stored tree at `size` (base64), or null when its nodes are missing. */
  private async storedRoot(size: number): Promise<string | null> {
    try {
      return (await this.log.rootAt(size)).toString('base64');
    } catch (e) {
      if (e instanceof MissingNodeError) return null;
      throw e;
    }
  }

  /**
   * Require the database's tree to extend the checkpoint in the state file:
   * the ledger has at least its size and the stored tree's root at its size
   * is its root. The state file is read first, the database after: a
   * checkpoint another process signed (and wrote) before is then within the
   * database this reads. Returns the state (null: none yet), or false when
   * signing stopped. Throws when the database cannot be read.
   */
  private async checkState(): Promise<{ state: SignedState | null } | false> {
    const store = this.store!;
    let state: SignedState | null;
    try {
      state = store.read();
    } catch (e) {
      if (!(e instanceof CheckpointStateError)) throw e;
      this.stop('checkpoint_state_unusable', `${e.message}: nothing is signed until it is restored from the backup of the key and its state file (or moved away on purpose; see docs/operating.md, "The signer's state file")`, { checkpoint_state: null });
      return false;
    }
    if (!state) return { state: null };
    const head = (await this.events.head(this.db))?.position ?? 0;
    const cs = { size: state.size, root: state.root };
    if (head < state.size) {
      this.stop(
        'database_behind_checkpoint_state',
        `the database holds ${head} events but this log's key signed a checkpoint of size ${state.size}: it was restored from an older backup or lost events; restore a database at least as new as that checkpoint, or start a new log (new key and origin)`,
        { checkpoint_state: cs, database: { size: head, root: await this.storedRoot(head) } },
        true,
      );
      return false;
    }
    const at = await this.storedRoot(state.size);
    if (at === null) {
      // Not another history: the tree cannot be read at that size (its appends are refused too, saying which node is missing).
      this.stop('stored_tree_mismatch', `the stored tree lacks nodes of the first ${state.size} events, whose checkpoint this log's key signed; npm run ledger -- verify reports what is wrong`, {
        checkpoint_state: cs,
        database: { size: head, root: null, root_at_state_size: null },
      });
      return false;
    }
    if (at !== state.root) {
      this.stop(
        'database_forks_from_checkpoint_state',
        `the database's tree at size ${state.size} has root ${at}, but this log's key signed root ${state.root} at that size: the database holds another history; restore the database this log signed, or start a new log (new key and origin)`,
        { checkpoint_state: cs, database: { size: head, root: await this.storedRoot(head), root_at_state_size: at } },
        true,
      );
      return false;
    }
    return { state };
  }

  /** (Re)start this signer's tree from the newest stored checkpoint, checking the stored nodes reproduce its signed root. */
  private async resume(state: SignedState | null): Promise<boolean> {
    const id = this.identity.current!;
    const cp = await this.tree.latestCheckpoint(this.db);
    if (!cp) {
      this.mine = { integrator: TreeIntegrator.empty(), headHash: LEDGER_GENESIS_HASH };
      return true;
    }
    try {
      verifyCheckpoint(cp.note, [parseVerifierKey(id.vkey)], id.origin);
    } catch (e) {
      this.stop('stored_checkpoint_invalid', `the stored checkpoint of size ${cp.size} does not verify under this log's key ${id.vkey}: ${(e as Error).message}`);
      return false;
    }
    const integrator = TreeIntegrator.resume(cp.size, await this.tree.rightEdgeHashes(this.db, cp.size));
    if (integrator.root().toString('base64') !== cp.root) {
      this.stop('stored_tree_mismatch', `the stored tree at size ${cp.size} does not reproduce the signed checkpoint's root`);
      return false;
    }
    const headHash = cp.size === 0 ? LEDGER_GENESIS_HASH : await this.events.hashAt(this.db, cp.size);
    if (headHash === null) {
      this.stop('stored_tree_mismatch', `the ledger has no event at position ${cp.size}, which the checkpoint of size ${cp.size} covers`);
      return false;
    }
    if (!state) {
      // No state file yet (a log signed before state files existed, or the file was removed): the newest stored checkpoint,
      // verified above, becomes the state. A database already rolled back cannot be told from this; see README.
      await this.store!.write({ origin: id.origin, size: cp.size, root: cp.root, note: cp.note });
      this.logger.warn(`no checkpoint state file: adopted the newest stored checkpoint (size ${cp.size}) into ${this.store!.path ?? 'memory'}`);
    }
    this.mine = { integrator, headHash };
    this.last = { size: cp.size, signed_at: cp.signed_at };
    this.metrics?.checkpointSigned(cp.size, Date.parse(cp.signed_at));
    return true;
  }

  private async signIfGrown(): Promise<void> {
    const id = this.identity.current!;
    const checked = await this.checkState();
    if (!checked) return;
    const state = checked.state;
    const latest = await this.tree.latestCheckpoint(this.db);
    if (!this.mine || (latest && latest.size !== this.mine.integrator.size)) {
      if (latest && this.mine && latest.size < this.mine.integrator.size) {
        this.stop('database_rolled_back', `the newest stored checkpoint (${latest.size}) is smaller than one this process signed (${this.mine.integrator.size}): the database was rolled back`);
        return;
      }
      if (!(await this.resume(state))) return;
    }
    const mine = this.mine!;
    const from = mine.integrator.size;
    const head = (await this.events.head(this.db))?.position ?? 0;
    if (head < from) {
      this.stop('database_rolled_back', `the ledger has ${head} events, fewer than the signed checkpoint's ${from}`);
      return;
    }
    if (latest && head === from) return;
    const to = Math.min(head, from + MAX_LEAVES_PER_CHECKPOINT);
    // Recompute the new leaves from the events, checking each event's hash and link (in the worker thread when there is one).
    const r = await this.leaves.recompute({ from, to, edge: mine.integrator.edgeHashes(), prevHash: mine.headHash });
    if (!r.ok) return this.stop('stored_tree_mismatch', r.reason);
    const work = TreeIntegrator.resume(r.size, r.edge);
    const prev = r.headHash;
    const root = r.root;
    if (!work.root().equals(root)) return this.stop('stored_tree_mismatch', `the recomputed tree's right edge at size ${to} does not give its root`);
    const stored = await this.log.rootAt(to);
    if (!stored.equals(root)) return this.stop('stored_tree_mismatch', `the stored tree's root at size ${to} differs from the root of the leaves recomputed from the events`);
    if (latest && from > 0) {
      const proof = assembleHashes(consistencyProofPlan(from, to), await this.tree.hashes(this.db, consistencyProofPlan(from, to).nodes));
      try {
        verifyConsistency(from, to, proof, Buffer.from(latest.root, 'base64'), root);
      } catch (e) {
        return this.stop('stored_tree_mismatch', `the tree at size ${to} is not consistent with the signed checkpoint of size ${from}: ${(e as Error).message}`);
      }
    }
    if (state && !(await this.extendsState(state, to, root))) return;
    // Never sign what a power cut could take back: the events and nodes read above are on disk first (issue 34, wal-sync.ts).
    await this.db.durable();
    const text = checkpointNoteText({ origin: id.origin, size: to, rootHash: root, extensions: [] });
    const note = signNote(text, [id.signer]);
    const signedAt = new Date().toISOString();
    // Kept outside the database first: once this checkpoint may be served, a restored database cannot make the key forget it.
    await this.store!.write({ origin: id.origin, size: to, root: root.toString('base64'), note });
    // On the write connection: a file SQLite's read connection is read-only.
    const inserted = await this.db.write((tx) => this.tree.insertCheckpoint(tx, { size: to, root: root.toString('base64'), note, signed_at: signedAt }));
    if (!inserted) {
      const other = await this.tree.checkpoint(this.db, to);
      if (!other || other.root !== root.toString('base64')) return this.stop('other_signer_root_differs', `another signer stored a checkpoint of size ${to} with a different root`);
    }
    this.mine = { integrator: work, headHash: prev };
    this.last = { size: to, signed_at: inserted ? signedAt : (await this.tree.checkpoint(this.db, to))!.signed_at };
    this.metrics?.checkpointSigned(to, Date.parse(this.last.signed_at));
  }

  /**
   * Check that a tree of `to` leaves with root `root` (from the stored
   * nodes) and the state's checkpoint are one history: a consistency proof
   * from the smaller to the larger, built from stored nodes and verified
   * (RFC 9162 section 2.1.4.2). Stops signing (false) when it does not hold.
   */
  private async extendsState(state: SignedState, to: number, root: Buffer): Promise<boolean> {
    const stateRoot = Buffer.from(state.root, 'base64');
    const [m, n, r1, r2] = to >= state.size ? [state.size, to, stateRoot, root] : [to, state.size, root, stateRoot];
    try {
      if (m === n) {
        if (!r1.equals(r2)) throw new Error(`roots differ at size ${m}`);
      } else if (m > 0) {
        const plan = consistencyProofPlan(m, n);
        verifyConsistency(m, n, assembleHashes(plan, await this.tree.hashes(this.db, plan.nodes)), r1, r2);
      }
    } catch (e) {
      if (e instanceof MissingNodeError) throw e; // a read failure of this run: tried again next tick
      this.stop(
        'database_forks_from_checkpoint_state',
        `the tree at size ${to} is not consistent with the checkpoint of size ${state.size} this log's key signed: ${(e as Error).message}`,
        { checkpoint_state: { size: state.size, root: state.root }, database: { size: to, root: root.toString('base64') } },
        true,
      );
      return false;
    }
    return true;
  }
}
