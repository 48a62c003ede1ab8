/**
 * Durability of a SQLite write connection in WAL mode with `synchronous =
 * NORMAL`, off the event loop (issue 34). With NORMAL a COMMIT writes its
 * frames to the WAL file (write(2), no fsync), so it no longer blocks the
 * event loop for a flush; the frames are made durable by an fsync of the WAL
 * file on libuv's thread pool, and a write is acknowledged only once an
 * fsync that began after its COMMIT has completed. fsync(2) flushes the
 * file, whichever descriptor names it, so one fsync covers every group
 * committed before it began. SQLite itself, with NORMAL, still syncs the WAL
 * before each checkpoint and the database file after it, and the WAL header
 * when the WAL is reused after a checkpoint (sqlite.org/pragma.html#pragma_synchronous),
 * so what one of our fsyncs covered stays durable through checkpoints. The
 * checkpoints run on a connection of their own, in a worker thread, with
 * FULL (wal-checkpointer.ts); the writer reuses the WAL only once a
 * checkpoint has copied every frame into the database file and synced it.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { WalCheckpointer } from './wal-checkpointer';

/** fsyncs of one SQLite database's WAL file, shared by every caller that waits at the same time. */
export class WalSync {
  private handle: { file: FileHandle; ino: number } | null = null;
  private inFlight: Promise<void> | null = null;
  private next: Promise<void> | null = null;
  private pending = 0;

  /**
   * @param walPath the WAL file of the database (`<database>-wal`).
   * @param checkpointer runs the WAL's checkpoints off the event loop: each {@link sync} (a group committed) nudges it, {@link close} stops it.
   */
  constructor(
    readonly walPath: string,
    private readonly checkpointer?: Pick<WalCheckpointer, 'nudge' | 'close'>,
  ) {}

  /**
   * Resolves once an fsync of the WAL file that began after this call has
   * completed: everything committed before the call is then on disk. Rejects
   * with the fsync's error (the write must not be acknowledged).
   */
  sync(): Promise<void> {
    this.checkpointer?.nudge();
    this.pending++;
    const p = this.schedule();
    p.then(
      () => this.pending--,
      () => this.pending--,
    );
    return p;
  }

  /** True while a caller of {@link sync} still waits. */
  get busy(): boolean {
    return this.pending > 0;
  }

  private schedule(): Promise<void> {
    if (!this.inFlight) {
      const p = this.fsync().finally(() => {
        if (this.inFlight === p) this.inFlight = null;
      });
      this.inFlight = p;
      return p;
    }
    // An fsync is running but began before this call: wait for the next one (shared by everyone who arrives meanwhile).
    this.next ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return this.schedule();
      });
    return this.next;
  }

  private async fsync(): Promise<void> {
    // The WAL file is the same file for as long as a connection is open: the writer restarts it after a full checkpoint
    // by writing over it from the start, a TRUNCATE checkpoint or journal_size_limit shortens it in place, and only the
    // last connection's close deletes it. Checked anyway, so that a replaced file is never left unsynced.
    const now = await stat(this.walPath);
    if (this.handle && this.handle.ino !== now.ino) {
      await this.handle.file.close().catch(() => undefined);
      this.handle = null;
    }
    if (!this.handle) this.handle = { file: await open(this.walPath, 'r+'), ino: now.ino };
    await this.handle.file.sync();
  }

  /** After the last {@link sync}: the checkpointer's final checkpoint and stop, then the WAL file's descriptor closed. */
  async close(): Promise<void> {
    await this.checkpointer?.close();
    const h = this.handle;
    this.handle = null;
    await h?.file.close().catch(() => undefined);
  }
}
