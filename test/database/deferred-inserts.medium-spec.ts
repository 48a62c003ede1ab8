/**
 * Deferred inserts (issue 17, Tx.insertLater): rows a write call queues are
 * written as multi-row INSERTs (single-row statements on SQLite) before anything else runs on its Tx (so a read
 * sees them), in order, chunked under the driver's parameter limit, and before
 * the call's hooks and savepoint release, so a row the database refuses fails
 * its call alone inside a commit group, as an INSERT run at once would.
 * On SQLite (in memory) and on a throwaway PostgreSQL database.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { DataSource, QueryFailedError } from 'typeorm';
import { dataSourceOptions } from '../../src/database/database-url';
import { DatabaseService, StorageInputError, Tx } from '../../src/database/database.service';
import { chunkSizes, EAGER_ROWS, MAX_PARAMETERS, mergedInsertSql, multiRowInsertSql, rowsPerStatement, updateSql } from '../../src/database/deferred-inserts';
import { insertRow, updateRow } from '../../src/database/rows';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { recordPgStatements } from '../helpers/pg-statements';

describe('multi-row INSERT text', () => {
  it('numbers PostgreSQL placeholders across rows and repeats `?` rows on SQLite', () => {
    expect(multiRowInsertSql('postgres', 't', ['a', 'b'], 3)).toBe('INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ($5, $6)');
    expect(multiRowInsertSql('sqlite', 't', ['a', 'b'], 2)).toBe('INSERT INTO t (a, b) VALUES (?, ?), (?, ?)');
  });

  it('keeps a statement under the parameter limit and the row cap, in a few fixed sizes', () => {
    expect(rowsPerStatement('postgres', 11)).toBe(1024);
    expect(rowsPerStatement('sqlite', 17)).toBe(1); // SQLite: one-row statements, whatever the limit allows
    expect(rowsPerStatement('postgres', 3, { rows: 1_000_000 })).toBe(16_384); // 21,845 by the limit
    expect(rowsPerStatement('sqlite', 3, { rows: 1_000_000 })).toBe(8192); // 10,922 by the limit
    expect(rowsPerStatement('postgres', 100)).toBe(512); // 655 by the limit
    expect(rowsPerStatement('sqlite', 40_000)).toBe(1);
    expect(chunkSizes('postgres', 11, 1000)).toEqual([512, 256, 128, 64, 32, 8]);
    expect(chunkSizes('postgres', 11, 2500)).toEqual([1024, 1024, 256, 128, 64, 4]);
    expect(chunkSizes('sqlite', 17, 513)).toEqual(Array(513).fill(1));
    expect(chunkSizes('sqlite', 17, 0)).toEqual([]);
    for (const n of [1, 255, 256, 1000, 4097]) expect(chunkSizes('sqlite', 5, n).reduce((a, b) => a + b, 0)).toBe(n);
  });
});

describe('merged INSERT text (PostgreSQL)', () => {
  it('numbers placeholders run after run, the last run the main statement', () => {
    expect(
      mergedInsertSql([
        { table: 'e', columns: ['a', 'b'], rows: 1 },
        { table: 'r', columns: ['c'], rows: 2 },
        { table: 's', columns: ['d', 'e'], rows: 1 },
      ]),
    ).toBe('WITH w1 AS (INSERT INTO e (a, b) VALUES ($1, $2)), w2 AS (INSERT INTO r (c) VALUES ($3), ($4)) INSERT INTO s (d, e) VALUES ($5, $6)');
  });
});

describe('row UPDATE text', () => {
  it('numbers PostgreSQL placeholders, set values first, then the key', () => {
    expect(updateSql('postgres', 't', ['a', 'b'], ['k'])).toBe('UPDATE t SET a = $1, b = $2 WHERE k = $3');
    expect(updateSql('sqlite', 't', ['a'], ['k', 'j'])).toBe('UPDATE t SET a = ? WHERE k = ? AND j = ?');
  });
});

describe.each(DIALECTS)('Tx.insertLater on %s', (dialect) => {
  jest.setTimeout(120_000);
  let ds: DataSource;
  let db: DatabaseService;
  let drop: (() => Promise<void>) | undefined;
  /** Every statement run on the connection (SQLite) or sent to pg (PostgreSQL), in order. */
  let sent: string[] = [];
  let table: string;
  let other: string;

  beforeAll(async () => {
    let url = 'sqlite::memory:';
    if (dialect === 'postgres') ({ url, drop } = await createPgDatabase());
    ds = new DataSource(dataSourceOptions(url, []));
    await ds.initialize();
    // Calls queued within 200 ms share one group (one transaction, a savepoint each).
    db = new DatabaseService(ds, undefined, { max: 64, maxWaitMs: 200 });
    // What reaches the driver: on SQLite every statement run on the connection (TypeORM's and the queued rows', run
    // directly); on PostgreSQL the queued rows go to pg as named statements.
    if (dialect === 'sqlite') {
      const prepare = Database.prototype.prepare;
      jest.spyOn(Database.prototype, 'prepare').mockImplementation(function (this: Database.Database, sql: string) {
        const st = prepare.call(this, sql);
        for (const m of ['run', 'all', 'get'] as const) {
          const f = st[m].bind(st) as (...a: unknown[]) => unknown;
          Object.defineProperty(st, m, { value: (...a: unknown[]) => (sent.push(sql), f(...a)) });
        }
        return st;
      } as never);
    } else {
      recordPgStatements((sql) => sent.push(sql));
    }
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await ds.destroy();
    if (drop) await drop();
  });
  beforeEach(async () => {
    const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
    table = `di_rows_${suffix}`;
    other = `di_other_${suffix}`;
    const serial = dialect === 'postgres' ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
    await db.unsafeQuery(`CREATE TABLE ${table} (seq ${serial}, n INTEGER NOT NULL UNIQUE, a TEXT, b TEXT)`);
    await db.unsafeQuery(`CREATE TABLE ${other} (seq ${serial}, k TEXT NOT NULL)`);
    await db.unsafeQuery(`CREATE INDEX ${table}_a ON ${table} (a)`);
    sent = [];
  });

  const cols = ['n', 'a', 'b'] as const;
  const ns = async (): Promise<number[]> => (await db.query<{ n: number | string }>(`SELECT n FROM ${table} ORDER BY seq`)).map((r) => Number(r.n));
  const inserts = (t: string): string[] => sent.filter((s) => s.startsWith(`INSERT INTO ${t} `));

  it('writes queued rows in one statement before the next statement of the Tx, which sees them', async () => {
    const seen = await db.write(async (tx) => {
      for (let i = 1; i <= 4; i++) tx.insertLater(table, cols, [i, `a${i}`, null]);
      expect(inserts(table)).toEqual([]); // queued, nothing sent yet
      const rows = await tx.query<{ n: number | string; a: string; b: string | null }>(`SELECT n, a, b FROM ${table} ORDER BY seq`);
      return rows.map((r) => [Number(r.n), r.a, r.b]);
    });
    expect(seen).toEqual([
      [1, 'a1', null],
      [2, 'a2', null],
      [3, 'a3', null],
      [4, 'a4', null],
    ]);
    expect(inserts(table)).toEqual(chunkSizes(dialect, cols.length, 4).map((k) => multiRowInsertSql(dialect, table, cols, k)));
    expect(inserts(table)).toHaveLength(dialect === 'sqlite' ? 4 : 1);
    // The INSERT went before the read that needed it.
    expect(sent.indexOf(inserts(table)[0])).toBeLessThan(sent.findIndex((s) => s.startsWith(`SELECT n, a, b FROM ${table}`)));
    expect(await ns()).toEqual([1, 2, 3, 4]);
  });

  it('writes rows still queued when the call returns, and a before-commit hook reads them', async () => {
    const fromHook: number[] = [];
    await db.write(async (tx) => {
      tx.insertLater(table, cols, [7, 'x', 'y']);
      tx.beforeCommit(async () => {
        fromHook.push(...(await tx.query<{ n: number | string }>(`SELECT n FROM ${table}`)).map((r) => Number(r.n)));
        tx.insertLater(table, cols, [8, 'hook', null]); // queued by the last hook: written before the call ends
      });
    });
    expect(fromHook).toEqual([7]);
    expect(await ns()).toEqual([7, 8]);
  });

  it('keeps row order and chunks past the parameter limit (25,000 rows of 3 values)', async () => {
    const n = 25_000;
    expect(n * cols.length).toBeGreaterThan(MAX_PARAMETERS[dialect]);
    await db.write(async (tx) => {
      for (let i = 0; i < n; i++) tx.insertLater(table, cols, [i, `v${n - i}`, i % 7 === 0 ? null : 'b']);
    });
    // PostgreSQL sends every EAGER_ROWS rows as they are queued, the rest at the end; SQLite all at the end.
    const e = EAGER_ROWS[dialect];
    const sizes = e > 0 ? [...(Array(Math.floor(n / e)).fill(e) as number[]), ...chunkSizes(dialect, cols.length, n % e)] : chunkSizes(dialect, cols.length, n);
    expect(sizes.length).toBeGreaterThan(1);
    expect(inserts(table)).toEqual(sizes.map((k) => multiRowInsertSql(dialect, table, cols, k)));
    for (const k of sizes) expect(k * cols.length).toBeLessThanOrEqual(MAX_PARAMETERS[dialect]);
    const rows = await db.query<{ n: number | string; a: string; b: string | null }>(`SELECT n, a, b FROM ${table} ORDER BY seq`);
    expect(rows).toHaveLength(n);
    rows.forEach((r, i) => {
      expect([Number(r.n), r.a, r.b]).toEqual([i, `v${n - i}`, i % 7 === 0 ? null : 'b']);
    });
  });

  it('writes each table in the order it was first queued, rows of a table in order', async () => {
    await db.write(async (tx) => {
      tx.insertLater(table, cols, [1, null, null]);
      tx.insertLater(other, ['k'], ['x']);
      tx.insertLater(table, cols, [2, null, null]);
      tx.insertLater(other, ['k'], ['y']);
    });
    if (dialect === 'sqlite') {
      expect(sent.filter((s) => s.startsWith('INSERT INTO'))).toEqual([...[1, 1].map(() => multiRowInsertSql(dialect, table, cols, 1)), ...[1, 1].map(() => multiRowInsertSql(dialect, other, ['k'], 1))]);
    } else {
      // PostgreSQL: both tables in one statement (data-modifying CTEs), in first-queued order.
      expect(sent.filter((s) => /^(INSERT INTO|WITH)/.test(s))).toEqual([mergedInsertSql([{ table, columns: cols, rows: 2 }, { table: other, columns: ['k'], rows: 2 }])]);
    }
    expect(await ns()).toEqual([1, 2]);
    expect((await db.query<{ k: string }>(`SELECT k FROM ${other} ORDER BY seq`)).map((r) => r.k)).toEqual(['x', 'y']);
  });

  it('a refused queued row fails its call alone in a group: nothing of it stays, its group-mates commit and see only their own and earlier rows', async () => {
    await db.write(async (tx) => void tx.insertLater(table, cols, [100, 'there before', null]));
    const log: string[] = [];
    const a = db.write(async (tx) => {
      tx.insertLater(table, cols, [1, 'a', null]);
      log.push('a');
    });
    // 2 is written, then 100 (already stored) is refused when the queue is flushed, after the call's own code returned.
    const b = db.write(async (tx) => {
      tx.insertLater(table, cols, [2, 'b', null]);
      tx.insertLater(table, cols, [100, 'b again', null]);
      tx.beforeCommit(async () => void log.push('b hook ran'));
      log.push('b');
    });
    const c = db.write(async (tx) => {
      tx.insertLater(table, cols, [3, 'c', null]);
      const seen = (await tx.query<{ n: number | string }>(`SELECT n FROM ${table} ORDER BY n`)).map((r) => Number(r.n));
      log.push(`c saw ${seen.join(',')}`);
    });
    const [ra, rb, rc] = await Promise.allSettled([a, b, c]);
    expect([ra.status, rb.status, rc.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // The database's own refusal, as an INSERT run at once gives it.
    expect((rb as PromiseRejectedResult).reason).toBeInstanceOf(QueryFailedError);
    expect(log).toEqual(['a', 'b', 'c saw 1,3,100']);
    expect(await ns()).toEqual([100, 1, 3]);
    // One group: one BEGIN..COMMIT with a savepoint per call, b's rolled back.
    const steps = sent.flatMap((s) => s.split('; ')).filter((s) => /^(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT)/.test(s));
    expect(steps).toEqual(['SAVEPOINT aer1_call_0', 'RELEASE SAVEPOINT aer1_call_0', 'SAVEPOINT aer1_call_1', 'ROLLBACK TO SAVEPOINT aer1_call_1', 'RELEASE SAVEPOINT aer1_call_1', 'SAVEPOINT aer1_call_2', 'RELEASE SAVEPOINT aer1_call_2']);
    // PostgreSQL: each SAVEPOINT rides with the statement before it (the advisory lock, the previous call's RELEASE or rollback).
    const messages = sent.filter((s) => /SAVEPOINT/.test(s));
    if (dialect === 'postgres') {
      expect(messages).toEqual([
        'SELECT pg_advisory_xact_lock(1095062065); SAVEPOINT aer1_call_0',
        'RELEASE SAVEPOINT aer1_call_0; SAVEPOINT aer1_call_1',
        'ROLLBACK TO SAVEPOINT aer1_call_1; RELEASE SAVEPOINT aer1_call_1; SAVEPOINT aer1_call_2',
        'RELEASE SAVEPOINT aer1_call_2',
      ]);
    } else {
      expect(messages).toEqual(steps);
    }
  });

  it('a queued row refused while the call goes on (sent early on PostgreSQL) fails the call with the database\'s error, at its next statement', async () => {
    await db.write(async (tx) => void tx.insertLater(table, cols, [5, 'there before', null]));
    let readError: unknown;
    const [ok, bad] = await Promise.allSettled([
      db.write(async (tx) => void tx.insertLater(table, cols, [1000, 'fine', null])),
      db.write(async (tx) => {
        for (let i = 0; i < 300; i++) tx.insertLater(table, cols, [i, null, null]); // 5 is refused
        await new Promise((resolve) => setTimeout(resolve, 50)); // an early write has failed by now on PostgreSQL
        try {
          await tx.query(`SELECT n FROM ${table}`);
        } catch (e) {
          readError = e;
          throw e;
        }
      }),
    ]);
    expect(ok.status).toBe('fulfilled');
    expect(readError).toBeInstanceOf(QueryFailedError);
    expect((readError as QueryFailedError).message).not.toMatch(/aborted/); // the refusal itself, not "current transaction is aborted"
    expect((bad as PromiseRejectedResult).reason).toBe(readError);
    expect(await ns()).toEqual([5, 1000]);
  });

  it('a call that throws while its early write is still running leaves nothing, alone in a group and on its own', async () => {
    for (const target of [db, new DatabaseService(ds, undefined, { max: 1, maxWaitMs: 0 })]) {
      const [before, failing, after] = await Promise.allSettled([
        target.write(async (tx) => void tx.insertLater(table, cols, [-1, 'before', null])),
        target.write(async (tx) => {
          for (let i = 0; i < 512; i++) tx.insertLater(table, cols, [i, null, null]); // sent at once on PostgreSQL, not awaited
          throw new Error('refused after queueing');
        }),
        target.write(async (tx) => void tx.insertLater(table, cols, [-2, 'after', null])),
      ]);
      expect([before.status, failing.status, after.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((failing as PromiseRejectedResult).reason).toMatchObject({ message: 'refused after queueing' });
      expect(await ns()).toEqual([-1, -2]);
      await db.unsafeQuery(`DELETE FROM ${table}`);
    }
  });

  // SQLite has no index entry size limit.
  (dialect === 'postgres' ? it : it.skip)('fails a call alone on a flushed row the database cannot index (PostgreSQL 54000), with the 400 an immediate INSERT gives', async () => {
    const huge = randomBytes(12_000).toString('base64'); // incompressible: over the 2,704-byte btree entry limit
    const immediate = await db.write(async (tx) => void (await tx.query(`INSERT INTO ${table} (n, a, b) VALUES (?, ?, ?)`, [1, huge, null]))).catch((e: unknown) => e);
    expect(immediate).toBeInstanceOf(StorageInputError);
    const [ok, bad] = await Promise.allSettled([
      db.write(async (tx) => void tx.insertLater(table, cols, [5, 'fine', null])),
      db.write(async (tx) => {
        tx.insertLater(table, cols, [6, 'fine too', null]);
        tx.insertLater(table, cols, [7, huge, null]);
      }),
    ]);
    expect(ok.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    const e = (bad as PromiseRejectedResult).reason as StorageInputError;
    expect(e).toBeInstanceOf(StorageInputError);
    expect([e.code, e.message]).toEqual([(immediate as StorageInputError).code, (immediate as StorageInputError).message]);
    expect(await ns()).toEqual([5]);
  });

  it('refuses NUL at once, and a flush failure of a call alone (group commit off) stores nothing', async () => {
    await expect(db.write(async (tx) => void tx.insertLater(table, cols, [1, 'a\u0000b', null]))).rejects.toMatchObject({ code: 'unsupported_character' });
    const alone = new DatabaseService(ds, undefined, { max: 1, maxWaitMs: 0 });
    await alone.write(async (tx) => void tx.insertLater(table, cols, [9, null, null]));
    await expect(
      alone.write(async (tx) => {
        tx.insertLater(table, cols, [10, null, null]);
        tx.insertLater(table, cols, [9, null, null]);
      }),
    ).rejects.toBeInstanceOf(QueryFailedError);
    expect(await ns()).toEqual([9]);
  });

  it('throws for a row queued after its call ended, or outside a write', async () => {
    let kept: Tx | undefined;
    await db.write(async (tx) => {
      kept = tx;
    });
    expect(() => kept!.insertLater(table, cols, [1, null, null])).toThrow('insertLater after its write call ended');
    // Outside a write, a repository's insert runs at once.
    await insertRow(db, table, cols, [11, 'now', null]);
    expect(await ns()).toEqual([11]);
  });

  it('updateLater: one UPDATE per row with its last values, after the queued inserts (a row queued in the same call), before the next statement', async () => {
    const upd = (): string[] => sent.filter((x) => x.startsWith(`UPDATE ${table} `));
    await db.write(async (tx) => void tx.insertLater(table, cols, [1, 'stored', null]));
    sent = [];
    const seen = await db.write(async (tx) => {
      tx.insertLater(table, cols, [2, 'queued', null]);
      for (let i = 1; i <= 50; i++) {
        tx.updateLater(table, ['a', 'b'], [`one-${i}`, String(i)], ['n'], [1]);
        tx.updateLater(table, ['a', 'b'], [`two-${i}`, null], ['n'], [2]);
      }
      expect(upd()).toEqual([]); // queued, nothing sent yet
      return (await tx.query<{ n: number | string; a: string; b: string | null }>(`SELECT n, a, b FROM ${table} ORDER BY n`)).map((r) => [Number(r.n), r.a, r.b]);
    });
    expect(seen).toEqual([
      [1, 'one-50', '50'],
      [2, 'two-50', null],
    ]);
    // Two UPDATEs (one a row), after the INSERT of the row queued in the same call, before the read.
    expect(upd()).toEqual([updateSql(dialect, table, ['a', 'b'], ['n']), updateSql(dialect, table, ['a', 'b'], ['n'])]);
    const at = (s: string): number => sent.indexOf(s);
    expect(at(inserts(table)[0])).toBeLessThan(at(upd()[0]));
    expect(sent.lastIndexOf(upd()[1])).toBeLessThan(sent.findIndex((x) => x.startsWith(`SELECT n, a, b FROM ${table}`)));
    // Queued at the end of a call: written before it commits; NUL refused at once; outside a write, at once.
    await db.write(async (tx) => void tx.updateLater(table, ['a'], ['last'], ['n'], [2]));
    await expect(db.write(async (tx) => void tx.updateLater(table, ['a'], ['a\u0000b'], ['n'], [2]))).rejects.toMatchObject({ code: 'unsupported_character' });
    await updateRow(db, table, ['b'], ['now'], ['n'], [1]);
    expect((await db.query<{ a: string; b: string | null }>(`SELECT a, b FROM ${table} ORDER BY n`)).map((r) => [r.a, r.b])).toEqual([
      ['one-50', 'now'],
      ['last', null],
    ]);
    let kept: Tx | undefined;
    await db.write(async (tx) => {
      kept = tx;
    });
    expect(() => kept!.updateLater(table, ['a'], ['x'], ['n'], [1])).toThrow('updateLater after its write call ended');
  });
});
