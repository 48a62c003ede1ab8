/**
 * Security review of group commit (2026-12-01: ledger head and tree leaves
 * carried per commit group): two API processes on one PostgreSQL database,
 * each grouping concurrent receipts, plans, timeline entries, commitments,
 * outcomes and coverage reports, with some calls failing after their appends
 * (a storage refusal raised at the end of their own work). Every
 * acknowledged write must be readable and `/api/ledger/verify` ok (chain,
 * tree, projections) on both processes.
 */
import { randomUUID } from 'node:crypto';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { DatabaseService } from '../../src/database/database.service';
import { buildTimeline, commitmentFor, Entry, receiptFor } from '../coverage/fixtures';
import { startApp, TestApp } from '../helpers/app';
import { TreeRepository } from '../../src/log/tree.repository';
import { TreeWriter } from '../../src/log/tree-writer';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import { call, listen, Reply, poisonWrites } from './helpers';

const TOKEN = 'metrics-scrape-token-0123456789';

describe('group commit across two API processes on one PostgreSQL database', () => {
  jest.setTimeout(120_000);
  let a: TestApp;
  let b: TestApp;
  let bases: string[];
  let payments = '';
  /** Ids whose write is refused by storage after its statements ran (on process a only). */
  const poisoned = new Set<string>();

  beforeAll(async () => {
    const env = { GROUP_COMMIT_MAX_WAIT_MS: '40', GROUP_COMMIT_MAX: '64', METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN };
    a = await startApp('postgres', env);
    b = await startApp('postgres', { ...env, DATABASE_URL: a.databaseUrl });
    bases = [await listen(a.app), await listen(b.app)];
    payments = (await a.app.get(ApiKeysService).create(`payments-${randomUUID().slice(0, 8)}`, 'outcome', { systems: ['PAYMENTS'] })).key;
    poisonWrites(a.app.get(DatabaseService), poisoned);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await b.close();
    await a.close();
  });

  /** POST to process `i % 2`. */
  const post = (i: number, path: string, body: unknown, key: string): Promise<Reply> => call(bases[i % 2], 'POST', path, { key, body: JSON.stringify(body) });

  it('mixed concurrent writes, some failing after their appends: every 2xx write is present; chain, tree and projections verify on both', async () => {
    const jobs = Array.from({ length: 8 }, (_, i) => `gc2-${i}-${randomUUID().slice(0, 8)}`);
    const tls = new Map<string, Entry[]>(jobs.map((j) => [j, buildTimeline(j, PAYMENT_STEPS)]));
    // Round 1: receipts and plans (the second receipt of jobs 0 and 1 is refused after its append, on process a).
    for (const j of jobs.slice(0, 2)) poisoned.add(tls.get(j)![0].id);
    const r1 = await Promise.all(
      jobs.flatMap((j, i) => [
        ...tls.get(j)!.map((e, k) => post(k % 2 === 0 ? 0 : i, '/api/receipts', receiptFor(e), a.keys.producer)),
        post(i + 1, '/api/plans', paymentPlan(j), a.keys.compliance),
      ]),
    );
    const refused = r1.filter((r) => r.status === 400);
    expect(refused.map((r) => r.body.error)).toEqual(['value_too_large', 'value_too_large']);
    expect(r1.filter((r) => r.status !== 400).every((r) => r.status === 201)).toBe(true);
    poisoned.clear();
    // The refused receipts again (now accepted), with each job's entries (twice: one wins).
    const r2 = await Promise.all([
      ...jobs.slice(0, 2).map((j, i) => post(i, '/api/receipts', receiptFor(tls.get(j)![0]), a.keys.producer)),
      ...jobs.flatMap((j, i) => [post(i, `/api/jobs/${j}/entries`, tls.get(j), a.keys.producer), post(i + 1, `/api/jobs/${j}/entries`, tls.get(j), a.keys.producer)]),
    ]);
    // The outcomes, concurrently, once the entries naming their receipts are recorded (issue 26: 422 receipt_not_in_job before).
    const r2b = await Promise.all(jobs.map((j, i) => post(i, '/api/outcomes', outcomeFor({ name: `${j}/settled`, job_id: j, receipt_id: tls.get(j)![1].id }), payments)));
    expect(r2.slice(0, 2).map((r) => r.status)).toEqual([201, 201]);
    const entries = r2.slice(2, 2 + 2 * jobs.length);
    for (let i = 0; i < jobs.length; i++) {
      const pair = [entries[2 * i].status, entries[2 * i + 1].status].sort();
      expect(pair[0] === 201 && [200, 409].includes(pair[1])).toBe(true);
    }
    expect(r2b.map((r) => r.status)).toEqual(jobs.map(() => 201));
    // Commitments (half of them poisoned on a: refused after their append), outcomes reversed, coverage reports.
    const poisonJobs = jobs.filter((_, i) => i % 4 === 0);
    for (const j of poisonJobs) poisoned.add(j);
    const r3 = await Promise.all([
      ...jobs.map((j, i) => post(i, `/api/jobs/${j}/commitments`, commitmentFor(tls.get(j)!), a.keys.producer)),
      ...jobs.map((j, i) => post(i + 1, '/api/outcomes', outcomeFor({ name: `${j}/reversed`, job_id: j, receipt_id: tls.get(j)![1].id, result: 'reversed', observed_at: '2026-10-01T12:05:00Z' }), payments)),
      ...jobs.map((j, i) => post(i + 1, '/api/coverage-reports', { job_id: j }, a.keys.auditor)),
    ]);
    poisoned.clear();
    // The poisoned jobs' commitments (posted to a) were refused after their appends; the others recorded.
    expect(jobs.map((j, i) => [j, r3[i].status])).toEqual(jobs.map((j) => [j, poisonJobs.includes(j) ? 400 : 201]));
    const acknowledged = r3.filter((r) => r.status >= 200 && r.status < 300);
    expect(r3.every((r) => r.status < 500)).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(jobs.length * 2);

    // Every acknowledged write is there (read on the other process).
    for (const r of [...r1, ...r2, ...r2b, ...r3].filter((x) => x.status === 201 && typeof x.body?.position === 'number')) {
      const at = await call(bases[1], 'GET', '/api/ledger/head');
      expect(at.body.position as number).toBeGreaterThanOrEqual(r.body.position as number);
    }
    for (const j of jobs) {
      for (const e of tls.get(j)!) expect((await call(bases[1], 'GET', `/api/receipts/${e.id}`)).status).toBe(200);
      const out = await call(bases[0], 'GET', `/api/jobs/${j}/outcomes`, { key: a.keys.auditor });
      expect([out.status, out.text.trimEnd().split('\n').length]).toEqual([200, 2]);
    }
    // The writes were grouped on each process (fewer commits than appending calls).
    for (const base of bases) {
      const m = (await call(base, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text;
      const num = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(m)?.[1] ?? NaN);
      expect(num('aer1_append_group_size_count')).toBeLessThan(num('aer1_append_group_size_sum'));
    }
    const heads = await Promise.all(bases.map((x) => call(x, 'GET', '/api/ledger/head')));
    expect(heads[0].body.position).toBe(heads[1].body.position);
    for (const base of bases) {
      const v = await call(base, 'GET', '/api/ledger/verify');
      expect([v.status, v.body.ok, v.body.first_failure, v.body.tree.ok, v.body.tree.extra_leaves, v.body.projections.ok]).toEqual([200, true, null, true, 0, true]);
      expect(v.body.checked).toBe(heads[0].body.position);
    }
  });

  it("a group whose shared tree integration fails: no call of it is acknowledged or kept; the next writes and verify are fine", async () => {
    // The tree's nodes are written by the log's LeafSink (src/log/tree-writer.ts) in the group's transaction.
    const nodes = (a.app.get(TreeWriter) as unknown as { nodes: TreeRepository }).nodes;
    const insert = nodes.insert.bind(nodes);
    let failures = 1;
    const spy = jest.spyOn(nodes, 'insert').mockImplementation(async (q, batch) => {
      if (failures-- > 0) throw new Error('injected: tree node insert failed');
      return insert(q, batch);
    });
    const p0 = (await call(bases[0], 'GET', '/api/ledger/head')).body.position as number;
    const tl = buildTimeline(`gc2-fail-${randomUUID().slice(0, 8)}`, PAYMENT_STEPS);
    const replies = await Promise.all(tl.map((e) => post(0, '/api/receipts', receiptFor(e), a.keys.producer)));
    // One group (both within the 40 ms wait), failed as a whole: no 2xx, nothing readable, head unchanged.
    expect(replies.map((r) => r.status >= 200 && r.status < 300)).toEqual([false, false]);
    for (const e of tl) expect((await call(bases[1], 'GET', `/api/receipts/${e.id}`)).status).toBe(404);
    expect((await call(bases[1], 'GET', '/api/ledger/head')).body.position).toBe(p0);
    spy.mockRestore();
    // The same writes again, on both processes: recorded; chain and tree verify.
    const again = await Promise.all(tl.map((e, i) => post(i, '/api/receipts', receiptFor(e), a.keys.producer)));
    expect(again.map((r) => r.status)).toEqual([201, 201]);
    for (const base of bases) {
      const v = await call(base, 'GET', '/api/ledger/verify');
      expect([v.status, v.body.ok, v.body.tree.ok, v.body.tree.extra_leaves, v.body.projections.ok, v.body.checked]).toEqual([200, true, true, 0, true, p0 + 2]);
    }
  });
});
