import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { walIndex } from '../../src/database/wal-checkpoint-worker';
import { walDatabase } from '../helpers/wal-db';

/** A TRUNCATE checkpoint of `file` from another process (as a ledger CLI command's connection would run). */
function truncateFromAnotherProcess(file: string): { busy: number; log: number; checkpointed: number } {
  const script = `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)}, { timeout: 0 });
    console.log(JSON.stringify(db.pragma('wal_checkpoint(TRUNCATE)')[0])); db.close();`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: process.cwd(), encoding: 'utf8' })) as { busy: number; log: number; checkpointed: number };
}

// SQLite's wal-index locks are POSIX locks, owned by the process: walIndex (run in a thread of the API's process) must
// never close a descriptor of the -shm file, or every lock of the process's connections on it is dropped.
describe('walIndex keeps the process\'s SQLite locks on the wal-index', () => {
  let dir: string;
  let file: string;
  let db: Database.Database;

  beforeEach(() => {
    ({ dir, file, db } = walDatabase('aer1-walindex-', 'l.sqlite', ['wal_autocheckpoint = 0'], 'CREATE TABLE t (x INTEGER)'));
    const ins = db.prepare('INSERT INTO t (x) VALUES (?)');
    for (let i = 0; i < 50; i++) ins.run(i);
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a reader of this process still holds back another process\'s TRUNCATE checkpoint after walIndex reads', () => {
    db.exec('BEGIN');
    expect(db.prepare('SELECT count(*) AS c FROM t').get()).toEqual({ c: 50 });
    db.prepare('INSERT INTO t (x) VALUES (?)').run(99); // the reader becomes a writer: its snapshot and write lock are held
    const before = walIndex(file);
    expect(before).not.toBeNull();
    for (let i = 0; i < 5; i++) walIndex(file);
    const other = truncateFromAnotherProcess(file);
    // The open transaction keeps the WAL: the other process's checkpoint cannot finish, and the WAL is not emptied.
    expect(other.busy).toBe(1);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
    expect(statSync(`${file}-shm`).size).toBeGreaterThanOrEqual(32768);
    db.exec('COMMIT');
    expect(db.prepare('SELECT count(*) AS c FROM t').get()).toEqual({ c: 51 });
    expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  });
});
