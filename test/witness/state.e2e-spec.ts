/** The witness's durable per-origin store: atomic replacement, reload, refusal of unusable state, the directory lock. */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { originHash, parseCheckpoint, parseNote } from '../../src/core/tlog';
import { parseStateFile, StoredCheckpoint, WITNESS_STATE_FORMAT, WitnessStateError, WitnessStateStore } from '../../src/witness/state';
import { tempDir, TestLog } from './helpers';

const log = new TestLog('log.example/state');
log.grow(9);

function record(size: number): StoredCheckpoint {
  return { origin: log.origin, size, rootHash: log.root(size), note: log.checkpoint(size) };
}

describe('WitnessStateStore', () => {
  let dir: { path: string; cleanup(): void };
  let store: WitnessStateStore | undefined;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    store?.close();
    store = undefined;
    dir.cleanup();
  });

  it('put writes one file per origin (mode 0600, no temp file left) and a reopened store reads it back', async () => {
    store = await WitnessStateStore.open(join(dir.path, 'state'));
    expect(statSync(join(dir.path, 'state')).mode & 0o777).toBe(0o700);
    expect(store.get(log.origin)).toBeNull();
    await store.put(record(4));
    await store.put(record(9));
    const file = join(dir.path, 'state', `${originHash(log.origin)}.json`);
    expect(readdirSync(join(dir.path, 'state')).sort()).toEqual([`${originHash(log.origin)}.json`, 'LOCK']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const onDisk = JSON.parse(readFileSync(file, 'utf8'));
    expect(onDisk).toEqual({ format: WITNESS_STATE_FORMAT, origin: log.origin, size: 9, root_hash: log.root(9).toString('base64'), note: log.checkpoint(9) });
    store.close();
    expect(existsSync(join(dir.path, 'state', 'LOCK'))).toBe(false);
    store = await WitnessStateStore.open(join(dir.path, 'state'));
    const r = store.get(log.origin);
    expect(r && { size: r.size, root: r.rootHash.toString('hex'), note: r.note }).toEqual({ size: 9, root: log.root(9).toString('hex'), note: log.checkpoint(9) });
    expect(store.origins()).toEqual([log.origin]);
  });

  it('a temp file a crash left behind is removed at open and the previous record stands', async () => {
    store = await WitnessStateStore.open(dir.path);
    await store.put(record(4));
    store.close();
    const final = join(dir.path, `${originHash(log.origin)}.json`);
    writeFileSync(`${final}.tmp-99999-abcdef`, '{"format":"aer1-witness-state/v1","origin":"log.exa'); // torn write of a newer record
    store = await WitnessStateStore.open(dir.path);
    expect(store.get(log.origin)?.size).toBe(4);
    expect(readdirSync(dir.path).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('refuses to start on a record that does not parse or does not match its note or file name', async () => {
    const final = join(dir.path, `${originHash(log.origin)}.json`);
    const good = JSON.parse(JSON.stringify({ format: WITNESS_STATE_FORMAT, origin: log.origin, size: 4, root_hash: log.root(4).toString('base64'), note: log.checkpoint(4) }));
    const cases: [string, string][] = [
      ['truncated', JSON.stringify(good).slice(0, 40)],
      ['size not in the note', JSON.stringify({ ...good, size: 5 })],
      ['root not in the note', JSON.stringify({ ...good, root_hash: log.root(5).toString('base64') })],
      ['other format', JSON.stringify({ ...good, format: 'x' })],
      ['note not a checkpoint', JSON.stringify({ ...good, note: 'hello\n\n— x AAAAAAA=\n' })],
    ];
    for (const [what, text] of cases) {
      writeFileSync(final, text);
      await expect(WitnessStateStore.open(dir.path)).rejects.toThrow(WitnessStateError);
      expect([what, existsSync(join(dir.path, 'LOCK'))]).toEqual([what, false]);
    }
    rmSync(final);
    writeFileSync(join(dir.path, `${'0'.repeat(64)}.json`), JSON.stringify(good));
    await expect(WitnessStateStore.open(dir.path)).rejects.toThrow(/not the SHA-256 of the origin/);
  });

  it('parseStateFile reads what put wrote', () => {
    const r = parseStateFile(JSON.stringify({ format: WITNESS_STATE_FORMAT, origin: log.origin, size: 0, root_hash: log.root(0).toString('base64'), note: log.checkpoint(0) }));
    expect(r.size).toBe(0);
    expect(parseCheckpoint(parseNote(r.note).text).size).toBe(0);
  });

  it('one process per directory: a live holder is refused, a dead one (SIGKILL) is taken over', async () => {
    store = await WitnessStateStore.open(dir.path);
    // While held, a second open of the same directory (by this or any live process) is refused.
    await expect(WitnessStateStore.open(dir.path)).rejects.toThrow(WitnessStateError);
    store.close(); // removes LOCK
    writeFileSync(join(dir.path, 'LOCK'), `${process.ppid}\n`); // a live process that is not us
    await expect(WitnessStateStore.open(dir.path)).rejects.toThrow(new RegExp(`in use by process ${process.ppid}`));
    // A pid that no longer exists: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir.path, 'LOCK'), `${dead.stdout}\n`);
    store = await WitnessStateStore.open(dir.path);
    expect(readFileSync(join(dir.path, 'LOCK'), 'utf8')).toBe(`${process.pid}\n`);
  });

  it('a failed put leaves the record unchanged in memory and on disk', async () => {
    store = await WitnessStateStore.open(join(dir.path, 's'));
    await store.put(record(4));
    rmSync(join(dir.path, 's'), { recursive: true }); // the directory vanished: the temp file cannot be created
    await expect(store.put(record(9))).rejects.toThrow(/ENOENT/);
    expect(store.get(log.origin)?.size).toBe(4);
  });

  it('withOriginLock runs the calls of one origin one after another, in order; other origins do not wait', async () => {
    store = await WitnessStateStore.open(dir.path);
    const events: string[] = [];
    const slow = (name: string, ms: number) => async () => {
      events.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      events.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      store.withOriginLock('a', slow('a1', 40)),
      store.withOriginLock('a', slow('a2', 1)),
      store.withOriginLock('b', slow('b1', 10)),
      store.withOriginLock('a', async () => {
        throw new Error('a3 failed');
      }).catch((e: Error) => e.message),
      store.withOriginLock('a', slow('a4', 1)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1', 'a3 failed', 'a4']);
    const a = events.filter((e) => e.includes(' a'));
    expect(a).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a4', 'end a4']);
    expect(events.indexOf('end b1')).toBeLessThan(events.indexOf('end a1'));
  });

  it('keeps evidence of a refused signed checkpoint once per body', async () => {
    store = await WitnessStateStore.open(dir.path);
    const body = Buffer.from(log.request(0, 9));
    const a = await store.saveEvidence(log.origin, body);
    const b = await store.saveEvidence(log.origin, body);
    expect(a).toBe(b);
    expect(readdirSync(join(dir.path, 'evidence'))).toEqual([a]);
    expect(readFileSync(join(dir.path, 'evidence', a as string))).toEqual(body);
  });
});
