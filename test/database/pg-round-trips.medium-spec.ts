/**
 * Fewer round trips per write on PostgreSQL (issue 34): a call's queued rows
 * for several tables go as ONE statement of data-modifying CTEs, and each
 * SAVEPOINT rides with the statement before it (the advisory lock, the
 * previous call's RELEASE or rollback) in one simple-protocol message. What a
 * failed call leaves behind is unchanged: nothing of it (in any table), its
 * group-mates kept; a message whose RELEASE succeeded but whose SAVEPOINT
 * failed fails the whole group. On a throwaway PostgreSQL database.
 */
import { randomUUID } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import { dataSourceOptions } from '../../src/database/database-url';
import { DatabaseService } from '../../src/database/database.service';
import { mergedInsertSql, multiRowInsertSql } from '../../src/database/deferred-inserts';
import { MAX_MERGED_SHAPES } from '../../src/database/statement-runner';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { recordPgStatements } from '../helpers/pg-statements';

(DIALECTS.includes('postgres') ? describe : describe.skip)('round trips of a write on PostgreSQL', () => {
  jest.setTimeout(120_000);
  let ds: DataSource;
  let db: DatabaseService;
  let drop: () => Promise<void>;
  /** Every text sent to pg, in order. */
  let sent: string[] = [];
  /** Rewrites a text before pg sends it (to make one message fail); identity by default. */
  let rewrite: (text: string) => string = (t) => t;
  let a: string;
  let b: string;

  beforeAll(async () => {
    let url: string;
    ({ url, drop } = await createPgDatabase());
    ds = new DataSource(dataSourceOptions(url, []));
    await ds.initialize();
    // Calls queued within 200 ms share one group.
    db = new DatabaseService(ds, undefined, { max: 64, maxWaitMs: 200 });
    recordPgStatements((sql) => sent.push(sql), (sql) => rewrite(sql));
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await ds.destroy();
    await drop();
  });
  beforeEach(async () => {
    const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
    a = `rt_a_${suffix}`;
    b = `rt_b_${suffix}`;
    await db.unsafeQuery(`CREATE TABLE ${a} (n INTEGER PRIMARY KEY, t TEXT)`);
    await db.unsafeQuery(`CREATE TABLE ${b} (k TEXT PRIMARY KEY, n INTEGER NOT NULL)`);
    sent = [];
    rewrite = (t) => t;
  });

  const rows = async (): Promise<{ a: number[]; b: string[] }> => ({
    a: (await db.query<{ n: number }>(`SELECT n FROM ${a} ORDER BY n`)).map((r) => r.n),
    b: (await db.query<{ k: string }>(`SELECT k FROM ${b} ORDER BY k`)).map((r) => r.k),
  });
  /** One call queueing a row in each table (n, `k${n}`). */
  const write = (n: number, k = `k${n}`): Promise<void> =>
    db.write(async (tx) => {
      tx.insertLater(a, ['n', 't'], [n, `row ${n}`]);
      tx.insertLater(b, ['k', 'n'], [k, n]);
    });

  it('a group of writes to two tables: one statement and one savepoint message per write, rows in both tables', async () => {
    await Promise.all([1, 2, 3].map((n) => write(n)));
    expect(await rows()).toEqual({ a: [1, 2, 3], b: ['k1', 'k2', 'k3'] });
    const merged = mergedInsertSql([
      { table: a, columns: ['n', 't'], rows: 1 },
      { table: b, columns: ['k', 'n'], rows: 1 },
    ]);
    const inGroup = sent.slice(sent.indexOf('START TRANSACTION'), sent.indexOf('COMMIT') + 1);
    expect(inGroup).toEqual([
      'START TRANSACTION',
      'SELECT pg_advisory_xact_lock(1095062065); SAVEPOINT aer1_call_0',
      merged,
      'RELEASE SAVEPOINT aer1_call_0; SAVEPOINT aer1_call_1',
      merged,
      'RELEASE SAVEPOINT aer1_call_1; SAVEPOINT aer1_call_2',
      merged,
      'RELEASE SAVEPOINT aer1_call_2',
      'COMMIT',
    ]);
  });

  for (const [where, bad] of [
    ['the first table (a CTE)', (n: number) => write(1, `k${n}`)],
    ['the last table (the main statement)', (n: number) => write(n, 'k1')],
  ] as const) {
    it(`a row refused in ${where} of a merged statement fails its call alone: nothing of it in either table, its group-mates kept`, async () => {
      await write(1);
      sent = [];
      const [x, y, z] = await Promise.allSettled([write(2), bad(3), write(4)]);
      expect([x.status, y.status, z.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const e = (y as PromiseRejectedResult).reason as QueryFailedError & { driverError: { code: string } };
      expect(e).toBeInstanceOf(QueryFailedError);
      expect(e.driverError.code).toBe('23505'); // the database's own unique violation, as a lone INSERT gives it
      expect(await rows()).toEqual({ a: [1, 2, 4], b: ['k1', 'k2', 'k4'] });
      expect(sent.filter((s) => s.includes('SAVEPOINT aer1_call_1'))).toEqual(['RELEASE SAVEPOINT aer1_call_0; SAVEPOINT aer1_call_1', 'ROLLBACK TO SAVEPOINT aer1_call_1; RELEASE SAVEPOINT aer1_call_1; SAVEPOINT aer1_call_2']);
    });
  }

  it('a message whose RELEASE succeeded but whose next SAVEPOINT failed fails the whole group: every call rejects, nothing stored', async () => {
    rewrite = (t) => (t === 'RELEASE SAVEPOINT aer1_call_1; SAVEPOINT aer1_call_2' ? 'RELEASE SAVEPOINT aer1_call_1; SELECT 1/0' : t);
    const out = await Promise.allSettled([1, 2, 3, 4].map((n) => write(n)));
    expect(out.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(await rows()).toEqual({ a: [], b: [] });
    expect(sent).toContain('ROLLBACK');
    expect(sent).not.toContain('COMMIT');
  });

  it('a message that fails before its RELEASE ran fails that call alone (rolled back to its savepoint), as a lone RELEASE that failed did', async () => {
    rewrite = (t) => (t === 'RELEASE SAVEPOINT aer1_call_1; SAVEPOINT aer1_call_2' ? 'SELECT 1/0; RELEASE SAVEPOINT aer1_call_1; SAVEPOINT aer1_call_2' : t);
    const out = await Promise.allSettled([1, 2, 3, 4].map((n) => write(n)));
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(((out[1] as PromiseRejectedResult).reason as Error).message).toMatch(/division by zero/);
    expect(await rows()).toEqual({ a: [1, 3, 4], b: ['k1', 'k3', 'k4'] });
  });

  it(`merged statements come in at most ${MAX_MERGED_SHAPES} shapes; past that, one statement per table`, async () => {
    const fresh = new DatabaseService(ds, undefined, { max: 1, maxWaitMs: 0 });
    let n = 0;
    const sizes = [1, 2, 4, 8, 16, 32, 64];
    for (const ra of sizes) {
      for (const rb of sizes) {
        sent = [];
        await fresh.write(async (tx) => {
          for (let i = 0; i < ra; i++) tx.insertLater(a, ['n', 't'], [++n, null]);
          for (let i = 0; i < rb; i++) tx.insertLater(b, ['k', 'n'], [`k${++n}`, n]);
        });
        const shape = sizes.indexOf(ra) * sizes.length + sizes.indexOf(rb);
        const expected =
          shape < MAX_MERGED_SHAPES
            ? [mergedInsertSql([{ table: a, columns: ['n', 't'], rows: ra }, { table: b, columns: ['k', 'n'], rows: rb }])]
            : [multiRowInsertSql('postgres', a, ['n', 't'], ra), multiRowInsertSql('postgres', b, ['k', 'n'], rb)];
        expect(sent.filter((s) => /^(WITH|INSERT)/.test(s))).toEqual(expected);
      }
    }
    const counts = await db.query<{ a: string; b: string }>(`SELECT (SELECT COUNT(*) FROM ${a}) AS a, (SELECT COUNT(*) FROM ${b}) AS b`);
    const total = sizes.reduce((s, x) => s + x, 0) * sizes.length;
    expect(counts).toEqual([{ a: String(total), b: String(total) }]);
  });
});
