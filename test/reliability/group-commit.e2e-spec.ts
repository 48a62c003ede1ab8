/**
 * Group commit (issue 17): concurrent writes share one database transaction,
 * each in its own savepoint. A write that fails (here a storage refusal raised
 * after its statements ran, so its event, projection rows and pending tree
 * leaf exist when it fails) fails alone; its group-mates commit, and the
 * chain, the tree and the projections still verify. Competing next-seq
 * appends in one group still give one 201 and 409s. The groups are made
 * large on purpose (GROUP_COMMIT_MAX_WAIT_MS 300) so the requests of a round
 * land in one group; the metrics show it.
 */
import { randomUUID } from 'node:crypto';
import { ZERO_DIGEST } from '../../src/core/aer1';
import { DatabaseService } from '../../src/database/database.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { parseProm, Sample, value } from '../metrics/prom-text';
import { call, listen, makeEntry, vector, poisonWrites } from './helpers';

const TOKEN = 'metrics-scrape-token-0123456789';
const receiptText = (id: string): string => JSON.stringify({ ...(vector('receipt-core-valid') as Record<string, unknown>), id });

describe.each(DIALECTS)('group commit on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let base: string;
  /** Receipt ids whose write is refused by storage after its statements ran. */
  const poisoned = new Set<string>();

  beforeAll(async () => {
    t = await startApp(dialect, { GROUP_COMMIT_MAX_WAIT_MS: '300', GROUP_COMMIT_MAX: '64', METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN });
    base = await listen(t.app);
    poisonWrites(t.app.get(DatabaseService), poisoned);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  const scrape = async (): Promise<Sample[]> => parseProm((await call(base, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text);
  const head = async (): Promise<number> => ((await call(base, 'GET', '/api/ledger/head')).body as { position: number }).position;

  it('one bad request in a group fails alone; its group-mates commit; chain, tree and projections verify', async () => {
    const before = await scrape();
    const p0 = await head();
    const ids = Array.from({ length: 6 }, () => randomUUID());
    const bad = ids[2];
    poisoned.add(bad);
    const job = `gc-${randomUUID()}`;
    const entries = [makeEntry(job, 1, ZERO_DIGEST, { nonce: 'a' }), makeEntry(job, 1, ZERO_DIGEST, { nonce: 'b' })];
    const [receipts, appended] = await Promise.all([
      Promise.all(ids.map((id) => call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: receiptText(id) }))),
      Promise.all(entries.map((e) => call(base, 'POST', `/api/jobs/${encodeURIComponent(job)}/entries`, { key: t.keys.producer, body: JSON.stringify(e) }))),
    ]);
    expect(receipts.map((r) => r.status)).toEqual([201, 201, 400, 201, 201, 201]);
    expect(receipts[2].body.error).toBe('value_too_large');
    expect(appended.map((r) => r.status).sort()).toEqual([201, 409]);
    for (const id of ids) expect((await call(base, 'GET', `/api/receipts/${id}`)).status).toBe(id === bad ? 404 : 200);
    // Five receipts and one entry: the refused receipt left no event (positions stay gapless).
    expect(await head()).toBe(p0 + 6);
    const positions = receipts.filter((r) => r.status === 201).map((r) => r.body.position as number);
    expect(new Set(positions).size).toBe(5);
    for (const p of positions) expect(p).toBeGreaterThan(p0);

    const after = await scrape();
    const d = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    expect(d('aer1_append_group_size_sum')).toBe(6);
    // Grouped: fewer commits than events (the round's requests arrive within the 300 ms wait).
    expect(d('aer1_append_group_size_count')).toBeGreaterThanOrEqual(1);
    expect(d('aer1_append_group_size_count')).toBeLessThan(6);
    expect(d('aer1_append_group_size_bucket', { le: '1' })).toBeLessThan(d('aer1_append_group_size_count'));
    expect(d('aer1_write_transaction_seconds_count', { outcome: 'rollback' })).toBeGreaterThanOrEqual(2);

    const v = await call(base, 'GET', '/api/ledger/verify');
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ verdict: 'valid', ok: true, checked: p0 + 6, first_failure: null, tree: { ok: true, leaves_checked: p0 + 6, node_failure: null, extra_leaves: 0 }, projections: { ok: true } });
  });

  it('competing requests for one job\'s next seq in one group: exactly one 201, the rest 409, then the next seq works', async () => {
    const job = `gc-${randomUUID()}`;
    const bodies = Array.from({ length: 12 }, (_, i) => makeEntry(job, 1, ZERO_DIGEST, { nonce: String(i) }));
    const replies = await Promise.all(bodies.map((b) => call(base, 'POST', `/api/jobs/${encodeURIComponent(job)}/entries`, { key: t.keys.producer, body: JSON.stringify(b) })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBe(1);
    expect(statuses.filter((s) => s === 409).length).toBe(11);
    const winner = replies.find((r) => r.status === 201)!;
    const next = makeEntry(job, 2, winner.body.head.entry_digest as string);
    expect((await call(base, 'POST', `/api/jobs/${encodeURIComponent(job)}/entries`, { key: t.keys.producer, body: JSON.stringify(next) })).status).toBe(201);
    const v = await call(base, 'GET', '/api/ledger/verify');
    expect([v.status, v.body.ok, v.body.tree.ok, v.body.projections.ok]).toEqual([200, true, true, true]);
  });

  it('inside a group: calls run in arrival order, a failed call\'s work is invisible to the next, hooks fire only for committed calls and only after COMMIT', async () => {
    const db = t.app.get(DatabaseService);
    const table = `gc_probe_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await db.unsafeQuery(`CREATE TABLE ${table} (n INTEGER NOT NULL)`);
    const log: string[] = [];
    const a = db.write(async (tx) => {
      await tx.query(`INSERT INTO ${table} (n) VALUES (1)`);
      tx.beforeCommit(async () => void log.push('a before-commit'));
      tx.whenKept(() => log.push('a kept'));
      tx.beforeGroupCommit(async () => void log.push('group before-commit (added by a)'));
      db.afterCommit(tx, () => log.push('a after-commit'));
      log.push('a ran');
      return 'a';
    });
    const b = db.write(async (tx) => {
      await tx.query(`INSERT INTO ${table} (n) VALUES (2)`);
      tx.whenKept(() => log.push('b kept'));
      db.afterCommit(tx, () => log.push('b after-commit'));
      log.push('b ran');
      throw new Error('b fails');
    });
    const c = db.write(async (tx) => {
      const seen = (await tx.query<{ n: number | string }>(`SELECT n FROM ${table} ORDER BY n`)).map((r) => Number(r.n));
      log.push(`c saw ${seen.join(',')}`);
      await tx.query(`INSERT INTO ${table} (n) VALUES (3)`);
      db.afterCommit(tx, () => log.push('c after-commit'));
      return 'c';
    });
    const settled = Promise.allSettled([a.then((v) => (log.push('a resolved'), v)), b, c]);
    const [ra, rb, rc] = await settled;
    expect(ra).toEqual({ status: 'fulfilled', value: 'a' });
    expect(rb).toMatchObject({ status: 'rejected', reason: { message: 'b fails' } });
    expect(rc).toEqual({ status: 'fulfilled', value: 'c' });
    // One group: c ran before a's promise resolved (a resolves only after the group's COMMIT and its after-commit hooks), and saw a's row but not b's.
    // b was rolled back to its savepoint: never kept. The group's hook ran once, after every call, before COMMIT.
    expect(log).toEqual(['a ran', 'a before-commit', 'a kept', 'b ran', 'c saw 1', 'group before-commit (added by a)', 'a after-commit', 'c after-commit', 'a resolved']);
    expect((await db.query<{ n: number | string }>(`SELECT n FROM ${table} ORDER BY n`)).map((r) => Number(r.n))).toEqual([1, 3]);
    await db.unsafeQuery(`DROP TABLE ${table}`);
  });

  it('background writes (erasure pages) yield: every other call queued meanwhile runs first, background calls keep their order', async () => {
    const db = t.app.get(DatabaseService);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // Hold the queue with one running call, then queue background and ordinary calls behind it, interleaved.
    const holder = db.write(async () => {
      await gate;
      order.push('holder');
    });
    await new Promise((r) => setImmediate(r));
    const calls = [
      db.write(async () => void order.push('bg1'), { background: true }),
      db.write(async () => void order.push('w1')),
      db.write(async () => void order.push('bg2'), { background: true }),
      db.write(async () => void order.push('w2')),
    ];
    release();
    await Promise.all([holder, ...calls]);
    expect(order).toEqual(['holder', 'w1', 'w2', 'bg1', 'bg2']);
  });

  it('a group hook that throws fails the whole group: every call rejects and nothing is stored', async () => {
    const db = t.app.get(DatabaseService);
    const p0 = await head();
    const table = `gc_probe_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await db.unsafeQuery(`CREATE TABLE ${table} (n INTEGER NOT NULL)`);
    const seen: string[] = [];
    const calls = [1, 2, 3].map((n) =>
      db.write(async (tx) => {
        await tx.query(`INSERT INTO ${table} (n) VALUES (?)`, [n]);
        if (n === 2) tx.beforeGroupCommit(async (g) => {
          seen.push(`rows before COMMIT: ${(await g.query<{ n: number | string }>(`SELECT n FROM ${table} ORDER BY n`)).map((r) => Number(r.n)).join(',')}`);
          throw new Error('group hook fails');
        });
        return n;
      }),
    );
    const results = await Promise.allSettled(calls);
    expect(seen).toEqual(['rows before COMMIT: 1,2,3']);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : r.value))).toEqual(['group hook fails', 'group hook fails', 'group hook fails']);
    expect(await db.query(`SELECT n FROM ${table}`)).toEqual([]);
    expect(await head()).toBe(p0);
    const v = await call(base, 'GET', '/api/ledger/verify');
    expect([v.status, v.body.ok, v.body.tree.ok, v.body.projections.ok]).toEqual([200, true, true, true]);
    await db.unsafeQuery(`DROP TABLE ${table}`);
  });

  it('a group whose COMMIT fails fails whole: every call rejects and nothing of the group is stored', async () => {
    const db = t.app.get(DatabaseService);
    const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
    const [probe, parent, child] = [`gc_probe_${suffix}`, `gc_parent_${suffix}`, `gc_child_${suffix}`];
    await db.unsafeQuery(`CREATE TABLE ${probe} (n INTEGER NOT NULL)`);
    await db.unsafeQuery(`CREATE TABLE ${parent} (id INTEGER PRIMARY KEY)`);
    // A deferred foreign key is checked at COMMIT: the COMMIT of the group fails, not the statement.
    await db.unsafeQuery(`CREATE TABLE ${child} (pid INTEGER NOT NULL REFERENCES ${parent} (id) DEFERRABLE INITIALLY DEFERRED)`);
    const calls = [
      db.write(async (tx) => void (await tx.query(`INSERT INTO ${probe} (n) VALUES (1)`))),
      db.write(async (tx) => void (await tx.query(`INSERT INTO ${child} (pid) VALUES (42)`))),
      db.write(async (tx) => void (await tx.query(`INSERT INTO ${probe} (n) VALUES (3)`))),
    ];
    const results = await Promise.allSettled(calls);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await db.query(`SELECT n FROM ${probe}`)).toEqual([]);
    expect(await db.query(`SELECT pid FROM ${child}`)).toEqual([]);
    // The next write works (the failed transaction is gone).
    await db.write(async (tx) => void (await tx.query(`INSERT INTO ${probe} (n) VALUES (4)`)));
    expect((await db.query<{ n: number | string }>(`SELECT n FROM ${probe}`)).map((r) => Number(r.n))).toEqual([4]);
    for (const x of [child, parent, probe]) await db.unsafeQuery(`DROP TABLE ${x}`);
  });
});
