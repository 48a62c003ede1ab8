import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WalSync } from '../../src/database/wal-sync';

/** The fsyncs a WalSync runs, counted on its open handle (after a first sync opened it). */
async function counted(w: WalSync): Promise<{ started: () => number }> {
  await w.sync();
  const file = (w as unknown as { handle: { file: FileHandle } }).handle.file;
  const sync = file.sync.bind(file);
  let n = 0;
  file.sync = () => {
    n++;
    return sync();
  };
  return { started: () => n };
}

describe('WalSync: a write is acknowledged once an fsync that began after it has completed', () => {
  let dir: string;
  let wal: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wal-sync-'));
    wal = join(dir, 'db.sqlite-wal');
    writeFileSync(wal, 'frames');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('given no fsync running, when one caller waits, then one fsync runs for it', async () => {
    const w = new WalSync(wal);
    const c = await counted(w);
    await w.sync();
    expect(c.started()).toBe(1);
    expect(w.busy).toBe(false);
    await w.close();
  });

  it('given an fsync running, when two more callers arrive, then they share one new fsync after it (never the running one)', async () => {
    const w = new WalSync(wal);
    const c = await counted(w);
    const first = w.sync(); // starts fsync 1
    const second = w.sync(); // fsync 1 began before it: waits for fsync 2
    const third = w.sync(); // shares fsync 2
    expect(w.busy).toBe(true);
    await first;
    await Promise.all([second, third]);
    expect(c.started()).toBe(2);
    expect(w.busy).toBe(false);
    await w.close();
  });

  it('given a checkpointer, when groups wait and the WalSync closes, then each wait nudges it and the close closes it before the descriptor', async () => {
    const seen: string[] = [];
    const w = new WalSync(wal, { nudge: () => void seen.push('nudge'), close: async () => void seen.push('close') });
    await Promise.all([w.sync(), w.sync()]);
    await w.close();
    expect(seen).toEqual(['nudge', 'nudge', 'close']);
  });

  it('given a WAL file that cannot be synced, when a caller waits, then it is refused with the error (nothing acknowledged)', async () => {
    const w = new WalSync(join(dir, 'missing-wal'));
    await expect(w.sync()).rejects.toMatchObject({ code: 'ENOENT' });
    expect(w.busy).toBe(false);
  });
});
