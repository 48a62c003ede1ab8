/**
 * WAL checkpoints of a SQLite file off the event loop (issue 34). With its
 * auto-checkpoint, SQLite copies the WAL into the database inside the COMMIT
 * that takes the WAL past 1,000 pages, fsyncs included, and better-sqlite3
 * runs that COMMIT on the event loop. Here the write connection runs with
 * `wal_autocheckpoint = 0`, and a worker thread with a connection of its own
 * (wal-checkpoint-worker.ts) runs `PRAGMA wal_checkpoint(PASSIVE)` once the
 * WAL holds the same 1,000 frames not yet copied; each group's durability
 * wait nudges it (see {@link WalSync}), one check at a time, nudges in
 * between coalesced into one more.
 *
 * The writer starts the WAL over (writes it from its start again) only when a
 * checkpoint has copied every frame, which a checkpoint running beside a busy
 * writer seldom manages: frames keep coming while it copies. So once the WAL
 * holds `restartFrames` frames, the checkpointer catches up: a PASSIVE
 * checkpoint while the writes go on, then one more inside a write call of its
 * own (`hold`, {@link DatabaseService.write} with `alone`), which keeps the
 * other writes queued for that last short copy and its fsyncs (the event loop
 * runs meanwhile); the next write starts the WAL over.
 *
 * Fallbacks, never a lost or refused write: without the compiled worker
 * script (ts-jest without a build), or once the worker fails (it cannot open
 * the file, a checkpoint errs, it dies), the error is logged and the write
 * connection takes its auto-checkpoints back (1,000 pages, as before); while
 * a check goes unanswered for `stuckMs` the write connection checkpoints too,
 * until the answer comes. A reader that holds an old snapshot keeps any
 * PASSIVE checkpoint (the worker's, or SQLite's own) from copying the frames
 * after it and from restarting the WAL, which then grows until the reader
 * ends: that is logged, not forced (a RESTART or TRUNCATE checkpoint waiting
 * for the reader would hold the writer lock, and stop the writes).
 */
import { Logger } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { workerScript } from '../common/package-root';
import type { CheckpointOutcome, WalCheckpointReply, WalCheckpointRequest, WalCheckpointWorkerData } from './wal-checkpoint-worker';

/** SQLite's default `wal_autocheckpoint`, in pages: the old threshold, kept. */
export const AUTOCHECKPOINT_PAGES = 1000;

/** The write connection's pragma call (better-sqlite3's `Database#pragma`). */
export interface WriterPragma {
  readonly open?: boolean;
  pragma(source: string): unknown;
}

/** See {@link WalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** Frames not yet copied from which a check runs a checkpoint (default {@link AUTOCHECKPOINT_PAGES}). */
  thresholdFrames?: number;
  /** A check unanswered this long lets the write connection checkpoint meanwhile (default 10 s). */
  stuckMs?: number;
  /** The WAL's frames from which the checkpointer catches up (default 4 x thresholdFrames, 16 MB with 4 KB pages; see the file's comment). */
  restartFrames?: number;
  /** The longest a catch-up keeps the writes waiting for the worker (default 2 s). */
  holdMs?: number;
  /** The worker script (tests); default the compiled wal-checkpoint-worker.js, null when there is none. */
  script?: string | null;
}

/** Runs `fn` while no other write runs (a write call of its own); without it the checkpointer never catches up. */
export type HoldWrites = (fn: () => Promise<void>) => Promise<void>;

/** Where checkpoints run now, and what the worker has done (tests, logs). */
export interface WalCheckpointerState {
  mode: 'worker' | 'writer';
  /** True while the write connection runs its own auto-checkpoints (no worker, a failed one, or one that has not answered in time). */
  writerCheckpoints: boolean;
  checks: number;
  checkpoints: number;
  /** Catch-ups run (writes held) and those after which every frame was copied. */
  catchUps: number;
  caughtUp: number;
  last: CheckpointOutcome | null;
}

/** Runs a SQLite file's WAL checkpoints in a worker thread; see the file's comment. */
export class WalCheckpointer {
  private readonly logger = new Logger('WalCheckpointer');
  private worker: Worker | null = null;
  private mode: 'worker' | 'writer' = 'writer';
  private writerOn = true;
  private nextId = 1;
  private readonly inFlight = new Map<number, { settle: (o: CheckpointOutcome | null) => void; timer: NodeJS.Timeout }>();
  private checking = false;
  private again = false;
  private catchingUp: Promise<void> | null = null;
  private catchUpFrom = 0;
  private closed = false;
  private checks = 0;
  private checkpoints = 0;
  private catchUps = 0;
  private caughtUp = 0;
  private last: CheckpointOutcome | null = null;
  private pinnedWarnedAt = 0;
  private readonly thresholdFrames: number;
  private readonly restartFrames: number;
  private readonly stuckMs: number;
  private readonly holdMs: number;
  /** Set once the database service exists (see {@link HoldWrites}). */
  hold: HoldWrites | null = null;

  /**
   * Starts the worker for the database `file` and turns the write
   * connection's auto-checkpoint off (`writer`, after the migrations); with
   * no worker script, leaves the writer's auto-checkpoint on.
   */
  constructor(
    readonly file: string,
    private readonly writer: WriterPragma,
    options: WalCheckpointerOptions = {},
  ) {
    this.thresholdFrames = options.thresholdFrames ?? AUTOCHECKPOINT_PAGES;
    this.restartFrames = options.restartFrames ?? 4 * this.thresholdFrames;
    this.stuckMs = options.stuckMs ?? 10_000;
    this.holdMs = options.holdMs ?? 2_000;
    const script = options.script === undefined ? workerScript(__dirname, 'wal-checkpoint-worker') : options.script;
    if (!script) return;
    const workerData: WalCheckpointWorkerData = { role: 'wal-checkpoint', file, thresholdFrames: this.thresholdFrames };
    const w = new Worker(script, { workerData });
    w.unref(); // never keeps the process alive
    w.on('message', (m: WalCheckpointReply) => this.answered(w, m));
    w.on('error', (e) => this.fail(w, `worker failed: ${e.message}`));
    w.on('exit', (code) => this.fail(w, `worker exited (${code})`));
    this.worker = w;
    this.mode = 'worker';
    this.setWriterCheckpoints(false);
  }

  /** Where checkpoints run now and what the worker has done. */
  get state(): WalCheckpointerState {
    return { mode: this.mode, writerCheckpoints: this.writerOn, checks: this.checks, checkpoints: this.checkpoints, catchUps: this.catchUps, caughtUp: this.caughtUp, last: this.last };
  }

  /** A group committed: the worker checks the WAL's size (now, or after the check in flight) and checkpoints past the threshold. */
  nudge(): void {
    if (this.closed || this.mode !== 'worker') return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    void this.check();
  }

  private async check(): Promise<void> {
    do {
      this.again = false;
      this.checks++;
      const o = await this.request('check');
      if (o && o.log >= Math.max(this.restartFrames, this.catchUpFrom) && this.hold && !this.catchingUp && !this.closed) {
        this.catchingUp = this.catchUp(this.hold).finally(() => (this.catchingUp = null));
      }
    } while (this.again && !this.closed && this.mode === 'worker');
    this.checking = false;
  }

  /** Copy the WAL while the writes go on, then the rest with the writes held, so the next write starts the WAL over. */
  private async catchUp(hold: HoldWrites): Promise<void> {
    this.catchUps++;
    if (!(await this.request('passive'))) return;
    let last: CheckpointOutcome | null = null;
    await hold(async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), this.holdMs)));
      last = await Promise.race([this.request('passive'), timeout]);
      clearTimeout(timer);
    }).catch((e: unknown) => this.logger.warn(`WAL catch-up: ${e instanceof Error ? e.message : String(e)}`));
    const o = last as CheckpointOutcome | null;
    const done = o !== null && !o.busy && o.checkpointed === o.log;
    if (done) this.caughtUp++;
    // Not all copied (a reader's snapshot, a slow worker): try again once the WAL has grown by another threshold.
    this.catchUpFrom = done ? 0 : (o?.log ?? this.restartFrames) + this.thresholdFrames;
  }

  /** Resolves once no check, catch-up or request is in flight (tests). */
  async idle(): Promise<void> {
    while (this.checking || this.catchingUp || this.inFlight.size > 0) {
      if (this.catchingUp) await this.catchingUp;
      else await new Promise<void>((r) => setTimeout(r, 1));
    }
  }

  /**
   * After the last write: waits for the checks in flight, then a final
   * `wal_checkpoint(TRUNCATE)` in the worker (the WAL emptied into the
   * database), and stops the worker. The write connection gets its
   * auto-checkpoint back for anything written after this. Never rejects.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.idle();
    const w = this.worker;
    if (w && this.mode === 'worker') {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), this.stuckMs + 5_000)));
      const o = await Promise.race([this.request('final'), timeout]);
      clearTimeout(timer);
      if (!o) this.logger.warn('the final WAL checkpoint did not answer; SQLite checkpoints when the last connection closes');
      else if (o.busy) this.logger.warn(`the final WAL checkpoint could not finish (a reader): the last connection's close checkpoints`);
    }
    this.worker = null;
    this.mode = 'writer';
    this.setWriterCheckpoints(true);
    if (w) await w.terminate().catch(() => undefined);
  }

  /** Ask the worker; null when it fails or is gone (see {@link fail}). */
  private request(type: WalCheckpointRequest['type']): Promise<CheckpointOutcome | null> {
    const w = this.worker;
    if (!w) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((settle) => {
      const timer = setTimeout(() => {
        if (!this.inFlight.has(id) || this.mode !== 'worker') return;
        this.logger.warn(`a WAL checkpoint has not answered in ${this.stuckMs} ms: the write connection checkpoints meanwhile`);
        this.setWriterCheckpoints(true);
      }, this.stuckMs);
      timer.unref();
      this.inFlight.set(id, { settle, timer });
      w.postMessage({ id, type } satisfies WalCheckpointRequest);
    });
  }

  private answered(w: Worker, m: WalCheckpointReply): void {
    if (w !== this.worker) return;
    if ('error' in m) return this.fail(w, m.id === 0 ? `worker could not open the database: ${m.error}` : `checkpoint failed: ${m.error}`);
    const f = this.inFlight.get(m.id);
    if (!f) return; // id 0: started
    this.inFlight.delete(m.id);
    clearTimeout(f.timer);
    this.last = m.outcome;
    if (m.outcome.ran) this.checkpoints++;
    if (this.writerOn && !this.closed) {
      this.logger.log('the WAL checkpoint worker answers again: the write connection stops checkpointing');
      this.setWriterCheckpoints(false);
    }
    const left = m.outcome.log - m.outcome.checkpointed;
    // A PASSIVE checkpoint never reports busy: frames it could not copy, well past the catch-up point, are what a reader's snapshot pins.
    if (left >= 8 * this.thresholdFrames && Date.now() - this.pinnedWarnedAt > 60_000) {
      this.pinnedWarnedAt = Date.now();
      this.logger.warn(`the WAL holds ${left} frames not yet copied into the database file (a long read's snapshot keeps them); it is copied and starts over once the reader ends`);
    }
    f.settle(m.outcome);
  }

  /** The worker is gone or erred: log, stop it, and give the write connection its auto-checkpoints back. */
  private fail(w: Worker, reason: string): void {
    if (w !== this.worker) return;
    this.worker = null;
    this.mode = 'writer';
    if (!this.closed) this.logger.error(`WAL checkpoints: ${reason}; the write connection checkpoints from now on`);
    this.setWriterCheckpoints(true);
    for (const f of this.inFlight.values()) {
      clearTimeout(f.timer);
      f.settle(null);
    }
    this.inFlight.clear();
    void w.terminate().catch(() => undefined);
  }

  private setWriterCheckpoints(on: boolean): void {
    // Already closed (shutdown): SQLite checkpointed the WAL as that connection closed.
    if (this.writer.open === false) return;
    try {
      this.writer.pragma(`wal_autocheckpoint = ${on ? AUTOCHECKPOINT_PAGES : 0}`);
      this.writerOn = on;
    } catch (e) {
      this.logger.warn(`wal_autocheckpoint on the write connection: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
