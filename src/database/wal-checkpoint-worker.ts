/**
 * The WAL checkpointer's worker thread (issue 34): a connection of its own to
 * a SQLite file, which copies the WAL's frames into the database with
 * `PRAGMA wal_checkpoint(PASSIVE)` off the API's event loop. Started by
 * {@link WalCheckpointer} with `workerData: WalCheckpointWorkerData`; answers
 * each {@link WalCheckpointRequest} with one {@link WalCheckpointReply}.
 *
 * A PASSIVE checkpoint takes no writer lock and never waits: it copies the
 * frames no reader still needs, while the write connection goes on
 * committing. SQLite syncs the WAL before it copies and the database file
 * after (this connection never runs with `synchronous = OFF`), and the writer
 * restarts the WAL only once every frame is in the database file.
 */
import { fstatSync, openSync, readSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

/** The database file and the WAL size (frames not yet copied) from which a check runs a checkpoint. */
export interface WalCheckpointWorkerData {
  role: 'wal-checkpoint';
  file: string;
  thresholdFrames: number;
}

/**
 * `check`: a PASSIVE checkpoint if the WAL holds at least the threshold's
 * frames not yet copied; `passive`: one now; `final`: checkpoint everything
 * and truncate the WAL (shutdown, no writer left), then close.
 */
export interface WalCheckpointRequest {
  id: number;
  type: 'check' | 'passive' | 'final';
}

/** What a checkpoint left: frames in the WAL (`log`), of which copied (`checkpointed`); `busy` when it could not finish (a reader, another checkpoint). */
export interface CheckpointOutcome {
  ran: boolean;
  busy: boolean;
  log: number;
  checkpointed: number;
  ms: number;
}

/** The request's outcome, or its error's message (the checkpointer then falls back to the writer's own checkpoints). */
export type WalCheckpointReply = { id: number; outcome: CheckpointOutcome } | { id: number; error: string };

/**
 * Descriptors of `<file>-shm` opened by {@link walIndex}, by path, never
 * closed. SQLite's locks on the wal-index are POSIX advisory locks, which
 * belong to the process: closing ANY descriptor of the file in this process
 * (this worker is a thread of the API's process) drops every lock its
 * connections hold on it, the wal-index's DMS lock and readers' marks
 * included (sqlite.org/howtocorrupt.html, 2.2). Another process (a ledger
 * CLI command) then takes the wal-index as its own, truncates and rebuilds
 * it under the live connections, and checkpoints past their snapshots: the
 * API hung and the CLI failed with "locking protocol". So the descriptor
 * stays open until the process exits (a new file at the path gets one more).
 */
const shmFds = new Map<string, number>();

/**
 * The WAL's frames (`log`, mxFrame) and how many of them are copied into the
 * database (`checkpointed`, nBackfill), read from the wal-index header in
 * `<file>-shm` (sqlite.org/walformat.html, 2.2: two copies of the 48-byte
 * header, mxFrame at byte 16, nBackfill at byte 96, native byte order). Null
 * when it cannot be read or the two copies differ (a writer was updating
 * it): the caller then checkpoints. The file is read through a descriptor
 * this process keeps open (see {@link shmFds}).
 */
export function walIndex(file: string): { log: number; checkpointed: number } | null {
  const path = `${file}-shm`;
  const buf = Buffer.alloc(100);
  let fd = shmFds.get(path);
  try {
    // A new file at the path (the old one deleted as its last connection closed): open it too; the old descriptor stays open.
    if (fd === undefined || fstatSync(fd).ino !== statSync(path).ino) {
      fd = openSync(path, 'r');
      shmFds.set(path, fd);
    }
    if (readSync(fd, buf, 0, 100, 0) < 100) return null;
  } catch {
    return null;
  }
  if (!buf.subarray(0, 48).equals(buf.subarray(48, 96))) return null;
  const le = endianness() === 'LE';
  const log = le ? buf.readUInt32LE(16) : buf.readUInt32BE(16);
  const checkpointed = le ? buf.readUInt32LE(96) : buf.readUInt32BE(96);
  return { log, checkpointed: Math.min(log, checkpointed) };
}

/** SQLITE_BUSY and SQLITE_LOCKED: the checkpoint lock or the database is held by another connection; try again later. */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const data = workerData as WalCheckpointWorkerData;
  const Database = (await import('better-sqlite3')).default;
  // Read-write: a checkpoint writes the database file. This connection writes no transaction of its own.
  const db = new Database(data.file, { fileMustExist: true, timeout: 0 });
  // Checkpoints sync the WAL before copying and the database after, unless synchronous is OFF: never OFF here.
  db.pragma('synchronous = FULL');
  db.pragma('wal_autocheckpoint = 0');
  // Like every connection (database-url.ts); this one copies pages and writes no rows of its own.
  db.pragma('secure_delete = ON');
  const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE'): CheckpointOutcome => {
    const t = performance.now();
    try {
      const [r] = db.pragma(`wal_checkpoint(${mode})`) as { busy: number; log: number; checkpointed: number }[];
      return { ran: true, busy: r.busy !== 0, log: r.log, checkpointed: r.checkpointed, ms: performance.now() - t };
    } catch (e) {
      if (!isBusy(e)) throw e;
      return { ran: true, busy: true, log: -1, checkpointed: -1, ms: performance.now() - t };
    }
  };
  port.on('message', (m: WalCheckpointRequest) => {
    try {
      let outcome: CheckpointOutcome;
      if (m.type === 'final') {
        // Shutdown: the writes are drained; wait a little for readers, then empty the WAL file.
        db.pragma('busy_timeout = 2000');
        outcome = checkpoint('TRUNCATE');
        db.close();
      } else if (m.type === 'passive') {
        outcome = checkpoint('PASSIVE');
      } else {
        const w = walIndex(data.file);
        outcome = w && w.log - w.checkpointed < data.thresholdFrames ? { ran: false, busy: false, ...w, ms: 0 } : checkpoint('PASSIVE');
      }
      port.postMessage({ id: m.id, outcome } satisfies WalCheckpointReply);
    } catch (e) {
      port.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies WalCheckpointReply);
    }
  });
  port.postMessage({ id: 0, outcome: { ran: false, busy: false, log: 0, checkpointed: 0, ms: 0 } } satisfies WalCheckpointReply);
}

if (parentPort && (workerData as Partial<WalCheckpointWorkerData> | null)?.role === 'wal-checkpoint') void main().catch((e: unknown) => {
  // Opening failed: report it as the answer to the start (id 0), then end.
  parentPort?.postMessage({ id: 0, error: e instanceof Error ? e.message : String(e) } satisfies WalCheckpointReply);
});
