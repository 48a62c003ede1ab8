import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { WalCheckpointer, type HoldWrites } from '../../src/database/wal-checkpointer';
import { walIndex } from '../../src/database/wal-checkpoint-worker';
import { walDatabase } from '../helpers/wal-db';

// The worker runs the compiled script (dist/src/database/wal-checkpoint-worker.js): `npm run build` first.
describe('WalCheckpointer: WAL checkpoints in a worker thread, off the event loop (SQLite file)', () => {
  let dir: string;
  let file: string;
  let writer: Database.Database;
  let held: Promise<void> | null;
  const open: WalCheckpointer[] = [];

  /** The test's writes, kept waiting while the checkpointer holds them (as DatabaseService.write with alone does). */
  const hold: HoldWrites = async (fn) => {
    let release!: () => void;
    held = new Promise<void>((r) => (release = r));
    try {
      await fn();
    } finally {
      held = null;
      release();
    }
  };
  const insert = (): Database.Statement => writer.prepare('INSERT INTO t (b) VALUES (?)');

  /** `groups` commit groups of two 3 KB rows, each followed by a nudge (as WalSync.sync does); returns the largest WAL seen. */
  async function writeGroups(cp: WalCheckpointer, groups: number): Promise<number> {
    let largest = 0;
    const stmt = insert();
    for (let g = 0; g < groups; g++) {
      while (held) await held;
      writer.transaction(() => {
        stmt.run(randomBytes(3000));
        stmt.run(randomBytes(3000));
      })();
      cp.nudge();
      largest = Math.max(largest, walIndex(file)?.log ?? 0);
      await new Promise((r) => setTimeout(r, 1));
    }
    await cp.idle();
    return largest;
  }

  const start = (options: ConstructorParameters<typeof WalCheckpointer>[2] = {}, at = file): WalCheckpointer => {
    const cp = new WalCheckpointer(at, writer, { thresholdFrames: 100, restartFrames: 400, ...options });
    cp.hold = hold;
    open.push(cp);
    return cp;
  };
  const autocheckpoint = (): number => writer.pragma('wal_autocheckpoint', { simple: true }) as number;

  beforeEach(() => {
    ({ dir, file, db: writer } = walDatabase('wal-checkpointer-', 'db.sqlite', ['synchronous = NORMAL'], 'CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB NOT NULL)'));
    held = null;
  });
  afterEach(async () => {
    for (const cp of open.splice(0)) await cp.close();
    if (writer.open) writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given sustained writes, when the worker checkpoints, then the writer runs none and the WAL stays bounded; a reader holding a snapshot grows it until it ends, then it is bounded again', async () => {
    const cp = start();
    expect(cp.state.mode).toBe('worker');
    expect(autocheckpoint()).toBe(0);

    const unpinned = await writeGroups(cp, 1500); // about 3 frames a group: 4,500 frames without checkpoints
    expect(cp.state.checkpoints).toBeGreaterThan(0);
    expect(cp.state.caughtUp).toBeGreaterThan(0); // the WAL was started over
    expect(unpinned).toBeLessThan(2000);

    const reader = new Database(file, { readonly: true });
    reader.exec('BEGIN');
    const seen = reader.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number };
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const pinned = await writeGroups(cp, 1000);
    expect(pinned).toBeGreaterThan(2000); // PASSIVE cannot copy what the reader's snapshot keeps out of the database file
    // ... and the operator is told why the WAL grows (a PASSIVE checkpoint never reports busy; the frames it left say it).
    expect(warn.mock.calls.map((c) => String(c[0])).filter((m) => /the WAL holds \d+ frames not yet copied into the database file \(a long read's snapshot keeps them\)/.test(m))).toHaveLength(1);
    warn.mockRestore();
    expect(reader.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual(seen);
    reader.exec('COMMIT');
    reader.close();

    const caughtUpBefore = cp.state.caughtUp;
    await writeGroups(cp, 800);
    expect(cp.state.caughtUp).toBeGreaterThan(caughtUpBefore);
    const after = await writeGroups(cp, 600);
    expect(after).toBeLessThan(2000);
    expect(writer.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 2 * (1500 + 1000 + 800 + 600) });
    expect(cp.state.mode).toBe('worker');
  }, 120_000);

  it('given writes in the WAL, when the checkpointer closes, then the WAL is checkpointed and truncated, and the writer checkpoints again', async () => {
    const cp = start({ thresholdFrames: 1000, restartFrames: 4000 });
    await writeGroups(cp, 100);
    expect(walIndex(file)?.log).toBeGreaterThan(100);
    await cp.close();
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(autocheckpoint()).toBe(1000);
    expect(cp.state.mode).toBe('writer');
    writer.close();
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 200 });
    check.close();
  }, 60_000);

  it('given a worker that dies, when writes go on, then the writer checkpoints again (logged) and no write is lost', async () => {
    const cp = start();
    await writeGroups(cp, 50);
    await (cp as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await new Promise((r) => setTimeout(r, 50));
    expect(cp.state.mode).toBe('writer');
    expect(autocheckpoint()).toBe(1000);
    const largest = await writeGroups(cp, 1500); // the writer's own auto-checkpoints: 1,000 pages and a commit's frames
    expect(largest).toBeLessThan(1100);
    expect(writer.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 2 * 1550 });
  }, 60_000);

  it('given a database the worker cannot open, when it starts, then the writer keeps its auto-checkpoints', async () => {
    const cp = start({}, join(dir, 'missing.sqlite'));
    for (let i = 0; i < 200 && cp.state.mode === 'worker'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(cp.state.mode).toBe('writer');
    expect(autocheckpoint()).toBe(1000);
  }, 30_000);

  it('given no compiled worker script, when it starts, then the writer keeps its auto-checkpoints and nudges do nothing', async () => {
    const cp = start({ script: null });
    expect(cp.state.mode).toBe('writer');
    expect(autocheckpoint()).toBe(1000);
    await writeGroups(cp, 10);
    expect(cp.state.checks).toBe(0);
  });
});
