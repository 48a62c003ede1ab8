/**
 * Concurrency: competing appends to one job timeline (50 different valid
 * entries all claiming the same next seq, several rounds, two jobs at once)
 * and 20 clients ingesting distinct, identical and conflicting receipts at
 * once. On PostgreSQL the requests are spread over two application instances
 * on one database, so only the advisory lock serializes them.
 */
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { DatabaseService } from '../../src/database/database.service';
import { call, freshReceipt, listen, makeEntry, pool, Reply } from './helpers';

const COMPETITORS = 50;
const ROUNDS = 5;

describe.each(DIALECTS)('concurrency on %s', (dialect) => {
  jest.setTimeout(120_000);
  const apps: TestApp[] = [];
  let bases: string[] = [];
  let key: string;

  beforeAll(async () => {
    const env = { VERIFY_RATE_LIMIT: '100000' };
    const a = await startApp(dialect, env);
    apps.push(a);
    // PostgreSQL: a second instance on the same database (its own pool and in-process queue).
    if (dialect === 'postgres') apps.push(await startApp('postgres', { ...env, DATABASE_URL: a.databaseUrl }));
    bases = [];
    for (const t of apps) bases.push(await listen(t.app));
    key = a.keys.producer;
  });
  afterAll(async () => {
    for (const t of [...apps].reverse()) await t.close();
  });

  const base = (i: number): string => bases[i % bases.length];
  const db = (): DatabaseService => apps[0].app.get(DatabaseService);
  const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await db().query<{ n: number | string }>(sql, params))[0].n);
  const ledgerOk = async (): Promise<number> => {
    const head = (await call(bases[0], 'GET', '/api/ledger/head')).body as { position: number };
    const v = await call(bases[bases.length - 1], 'GET', '/api/ledger/verify');
    expect(v.body).toMatchObject({ ok: true, checked: head.position, first_failure: null });
    return head.position;
  };

  /** One round: `COMPETITORS` different requests extending the same head at once; returns the replies. */
  async function compete(job: string, bodies: unknown[]): Promise<Reply[]> {
    return Promise.all(bodies.map((b, i) => call(base(i), 'POST', `/api/jobs/${encodeURIComponent(job)}/entries`, { key, body: JSON.stringify(b) })));
  }

  async function runJob(job: string): Promise<{ job: string; winners: Record<string, unknown>[]; errors: Record<string, number> }> {
    let head = { seq: 0, digest: ZERO_DIGEST };
    const winners: Record<string, unknown>[] = [];
    const errors: Record<string, number> = {};
    const settle = (replies: Reply[], bodies: unknown[]): number => {
      const won = replies.map((r, i) => (r.status === 201 ? i : -1)).filter((i) => i >= 0);
      expect({ job, statuses: [...new Set(replies.map((r) => r.status))].sort(), winners: won.length }).toEqual({ job, statuses: [201, 409], winners: 1 });
      for (const r of replies) if (r.status === 409) errors[r.body.error] = (errors[r.body.error] ?? 0) + 1;
      const w = won[0];
      const body = bodies[w];
      const list = (Array.isArray(body) ? body : [body]) as Record<string, unknown>[];
      winners.push(...list);
      const last = list[list.length - 1];
      head = { seq: last.seq as number, digest: entryDigest(last)! };
      expect(replies[w].body.head).toEqual({ seq: head.seq, entry_digest: head.digest, closed: last.close === true });
      return w;
    };
    for (let round = 1; round <= ROUNDS; round++) {
      const bodies = Array.from({ length: COMPETITORS }, (_, i) => makeEntry(job, head.seq + 1, head.digest, { nonce: `${round}-${i}` }));
      settle(await compete(job, bodies), bodies);
    }
    // Competing arrays of three entries each: one array wins whole, the others leave nothing.
    const arrays = Array.from({ length: COMPETITORS }, (_, i) => {
      const out: Record<string, unknown>[] = [];
      let prev = head.digest;
      for (let k = 1; k <= 3; k++) {
        const e = makeEntry(job, head.seq + k, prev, { nonce: `array-${i}-${k}` });
        out.push(e);
        prev = entryDigest(e)!;
      }
      return out;
    });
    settle(await compete(job, arrays), arrays);
    // Competing closing entries: one closes the job; then nothing more is accepted.
    const closers = Array.from({ length: COMPETITORS }, (_, i) => makeEntry(job, head.seq + 1, head.digest, { close: true, nonce: `close-${i}` }));
    settle(await compete(job, closers), closers);
    const after = await compete(job, Array.from({ length: 10 }, (_, i) => makeEntry(job, head.seq + 1, head.digest, { nonce: `after-${i}` })));
    expect(after.map((r) => [r.status, r.body.error])).toEqual(Array.from({ length: 10 }, () => [409, 'timeline_closed']));
    return { job, winners, errors };
  }

  it('50 competing appends per seq: exactly one wins each, the others 409, the timeline never forks', async () => {
    const before = await ledgerOk();
    const started = Date.now();
    const jobs = await Promise.all(['job-race-a', 'job race/b ü'].map((j) => runJob(j)));
    const expectedCount = ROUNDS + 3 + 1;
    for (const { job, winners, errors } of jobs) {
      expect(winners).toHaveLength(expectedCount);
      expect(Object.keys(errors).sort()).toEqual(['seq_not_contiguous', 'timeline_closed']);
      const v = await call(base(1), 'GET', `/api/jobs/${encodeURIComponent(job)}/verify`);
      // The chain verifies; issue 15: the winning close issued the ledger's own commitment in its transaction,
      // exactly one (before: no commitment, 422 truncation_not_excluded).
      expect(v.status).toBe(200);
      expect(v.body.commitments.map((c: { attestation: { kind: string } }) => c.attestation.kind)).toEqual(['ledger_issued']);
      expect(v.body).toMatchObject({ assessment: 'clean', binding_attestation: 'ledger_issued', job_id: job, verdict: 'valid', reasons: [], entry_count: expectedCount, closed: true, final_entry_digest: entryDigest(winners[winners.length - 1]) });
      const tl = await call(base(0), 'GET', `/api/jobs/${encodeURIComponent(job)}/timeline`);
      expect(tl.body.entries.map((e: { id: string }) => e.id)).toEqual(winners.map((e) => e.id));
    }
    const after = await ledgerOk();
    // Issue 15: each job's close also appended the ledger-issued commitment (one event per job).
    expect(after - before).toBe(2 * (expectedCount + 1));
    for (const { job } of jobs) {
      expect(await count('SELECT COUNT(*) AS n FROM events WHERE stream_id = ?', [`timeline:${job}`])).toBe(expectedCount + 1);
      expect(await count('SELECT COUNT(DISTINCT stream_position) AS n FROM events WHERE stream_id = ?', [`timeline:${job}`])).toBe(expectedCount + 1);
      expect(await count("SELECT COUNT(*) AS n FROM events WHERE stream_id = ? AND type = 'EndpointCommitmentRecorded'", [`timeline:${job}`])).toBe(1);
      expect(await count('SELECT COUNT(*) AS n FROM timeline_entries WHERE job_id = ?', [job])).toBe(expectedCount);
    }
    process.stdout.write(`concurrency on ${dialect}: ${2 * (ROUNDS + 2) * COMPETITORS + 20} competing appends over ${bases.length} instance(s) in ${Date.now() - started} ms\n`);
  });

  it('20 clients ingesting distinct, identical and conflicting receipts lose nothing and duplicate nothing', async () => {
    const CLIENTS = 20;
    const before = await ledgerOk();
    const distinct = Array.from({ length: CLIENTS }, () => Array.from({ length: 15 }, freshReceipt));
    const shared = Array.from({ length: 25 }, freshReceipt);
    // The same id with different bytes per client (white space inside the document): exactly one is recorded.
    const contested = Array.from({ length: 5 }, freshReceipt);
    type Item = { kind: 'distinct' | 'shared' | 'contested'; id: string; text: string };
    const outcomes = new Map<string, { status: number; text: string; error?: string }[]>();
    const note = (item: Item, status: number, error?: string): void => {
      const k = `${item.kind}:${item.id}`;
      if (!outcomes.has(k)) outcomes.set(k, []);
      outcomes.get(k)!.push({ status, text: item.text, error });
    };
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const items: Item[] = [
          ...distinct[c].map((r) => ({ kind: 'distinct' as const, ...r })),
          ...shared.map((r) => ({ kind: 'shared' as const, ...r })),
          ...contested.map((r) => ({ kind: 'contested' as const, id: r.id, text: r.text.replace(/^\{/, `{${' '.repeat(c)}`) })),
        ];
        // A per-client order (rotation) so clients collide on different receipts at different times.
        const order = items.map((_, i) => items[(i * 7 + c * 3) % items.length]);
        // Every third group of five goes as one NDJSON batch, the rest as single POSTs.
        for (let i = 0, g = 0; i < order.length; i += 5, g++) {
          const group = order.slice(i, i + 5);
          if ((g + c) % 3 === 0) {
            const r = await call(base(c), 'POST', '/api/receipts/batch', { key, body: group.map((x) => x.text).join('\n'), contentType: 'application/x-ndjson' });
            expect(r.status).toBe(200);
            (r.body.results as { status: number; error?: string }[]).forEach((x, k) => note(group[k], x.status, x.error));
          } else {
            for (const item of group) {
              const r = await call(base(c + i), 'POST', '/api/receipts', { key, body: item.text });
              note(item, r.status, r.body?.error);
            }
          }
        }
      }),
    );
    const statuses = (k: string): number[] => (outcomes.get(k) ?? []).map((o) => o.status).sort((a, b) => a - b);
    for (const list of distinct) for (const r of list) expect(statuses(`distinct:${r.id}`)).toEqual([201]);
    for (const r of shared) expect(statuses(`shared:${r.id}`)).toEqual([...Array.from({ length: CLIENTS - 1 }, () => 200), 201]);
    const winners = new Map<string, string>();
    for (const r of contested) {
      const o = outcomes.get(`contested:${r.id}`)!;
      expect(statuses(`contested:${r.id}`)).toEqual([201, ...Array.from({ length: CLIENTS - 1 }, () => 409)]);
      expect(o.filter((x) => x.status === 409).every((x) => x.error === 'receipt_id_conflict')).toBe(true);
      winners.set(r.id, o.find((x) => x.status === 201)!.text);
    }
    const expected = CLIENTS * 15 + shared.length + contested.length;
    const after = await ledgerOk();
    expect(after - before).toBe(expected);
    // Every receipt is stored once, with the bytes of the request that won.
    const allIds = [...distinct.flat().map((r) => r.id), ...shared.map((r) => r.id), ...contested.map((r) => r.id)];
    const missing: string[] = [];
    await pool(allIds, 8, async (id) => {
      const r = await call(base(0), 'GET', `/api/receipt/${id}/verify`);
      if (r.status !== 200) missing.push(`${id}: ${r.status}`);
    });
    expect(missing).toEqual([]);
    expect(await count('SELECT COUNT(*) AS n FROM receipts')).toBe(expected);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE type = 'ReceiptRecorded'")).toBe(expected);
    for (const [id, text] of winners) expect((await db().query<{ raw: string }>('SELECT raw FROM receipts WHERE id = ?', [id]))[0].raw).toBe(text);
    process.stdout.write(`concurrency on ${dialect}: ${CLIENTS} clients, ${expected} receipts recorded exactly once in ${Date.now() - started} ms\n`);
  });
});
