/**
 * Erasure (issue 29), on SQLite and PostgreSQL: a job with personal data in
 * its tool outputs is recorded (receipts, timeline, commitment, an outcome),
 * then erased one by one and by job. Afterwards nothing of the content is in
 * the events, the chain, the tree and the projections still verify, and the
 * erased records say so.
 */
import { DatabaseService } from '../../src/database/database.service';
import { buildTimeline, commitmentFor, receiptFor, StepSpec } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';

describe.each(DIALECTS)('erasure on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let payments: string;
  beforeAll(async () => {
    t = await startApp(dialect);
    payments = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));

  async function execute(job: string, steps: StepSpec[] = PAYMENT_STEPS) {
    expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, steps);
    const receipts = tl.map((e, i) => receiptFor(e, steps[i].status ?? 'ok'));
    for (const r of receipts) expect((await post('/api/receipts', r, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    const outcome = outcomeFor({ name: job, job_id: job, receipt_id: tl[1].id, observation: JSON.stringify({ customer: 'Ada Lovelace', iban: 'GB33BUKB20201555555555', job }) });
    expect((await post('/api/outcomes', outcome, payments)).status).toBe(201);
    return { tl, receipts, outcome };
  }

  const db = () => t.app.get(DatabaseService);

  it('writes every new event in format 3, with no content in the leaf', async () => {
    const { receipts } = await execute('job-f3');
    const rows = await db().query<{ format: number | string; payload_salt: string | null; payload_commitment: string | null; public_ids: string | null; stream_prev: number | string | null }>('SELECT format, payload_salt, payload_commitment, public_ids, stream_prev FROM events');
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows) {
      expect(Number(r.format)).toBe(3);
      expect(r.payload_salt).toMatch(/^[0-9a-f]{64}$/);
      expect(r.payload_commitment).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    const id = (receipts[0] as { id: string }).id.toLowerCase();
    const leaf = await t.http.get(`/api/ledger/leaves?start=0&count=100`);
    expect(leaf.status).toBe(200);
    const text = (leaf.body.leaves as { leaf: string | null }[]).map((l) => (l.leaf ? Buffer.from(l.leaf, 'base64').toString('utf8') : '')).join('\n');
    expect(text).toContain(`"receipt_id":"${id}"`);
    expect(text).not.toContain('"raw"');
    expect(text).not.toContain('output_hash');
  });

  it('a privacy key erases one receipt: its content is gone, every check still passes and names it', async () => {
    const { receipts } = await execute('job-erase-one');
    const r0 = receipts[0] as { id: string; output?: string };
    const id = r0.id.toLowerCase();
    const raw = JSON.stringify(receipts[0]);
    // Other roles may not.
    for (const role of ['producer', 'auditor', 'compliance'] as const) {
      const no = await post('/api/erasures', { receipt_ids: [id], reason: 'customer request', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys[role]);
      expect([no.status, no.body.error]).toEqual([403, 'forbidden_role']);
    }
    const unknown = await post('/api/erasures', { receipt_ids: [id, '00000000-0000-4000-8000-00000000dead'], reason: 'x', legal_basis: 'y' }, t.keys.privacy);
    expect([unknown.status, unknown.body.error, unknown.body.unknown.receipt_ids]).toEqual([404, 'erasure_target_not_found', ['00000000-0000-4000-8000-00000000dead']]);
    const before = await db().query<{ data: string }>(`SELECT data FROM events WHERE stream_id = ?`, [`receipt:${id}`]);
    expect(before[0].data.length).toBeGreaterThan(10);

    const e = await post('/api/erasures', { receipt_ids: [id], reason: 'customer request 4711', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect(e.status).toBe(201);
    expect(e.body).toMatchObject({ erasure_id: expect.any(String), positions: [expect.any(Number)], erased_at: expect.any(String), erasure_position: expect.any(Number) });
    const again = await post('/api/erasures', { receipt_ids: [id], reason: 'again', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect([again.status, again.body.error]).toEqual([409, 'already_erased']);

    const after = await db().query<{ data: string; payload_salt: string | null }>(`SELECT data, payload_salt FROM events WHERE stream_id = ?`, [`receipt:${id}`]);
    expect(after).toEqual([{ data: '', payload_salt: null }]);
    const row = await db().query<{ raw: string; output_hash: string | null }>(`SELECT raw, output_hash FROM receipts WHERE id = ?`, [id]);
    expect(row).toEqual([{ raw: '', output_hash: null }]);
    // Nothing of the receipt's bytes in any event.
    const all = await db().query<{ data: string }>('SELECT data FROM events');
    expect(all.some((x) => x.data.includes(raw.slice(1, 60)))).toBe(false);

    const v = await t.http.get('/api/ledger/verify').set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(v.status).toBe(200);
    expect(v.body.ok).toBe(true);
    expect(v.body.chain?.erased?.payload_erased ?? v.body.erased?.payload_erased).toEqual({ count: 1, positions: e.body.positions });
    const g = await t.http.get(`/api/erasures/${e.body.erasure_id}`);
    expect(g.body).toMatchObject({ erased_by: 'test-privacy', reason: 'customer request 4711', legal_basis: 'GDPR Art. 17(1)(a)', positions: e.body.positions });
  });

  it('erasing a job erases its entries, commitment, the receipts they name and its outcomes; projections still audit clean', async () => {
    const { tl } = await execute('job-erase-all');
    const e = await post('/api/erasures', { job_ids: ['job-erase-all'], reason: 'retention exceeded for this customer', legal_basis: 'GDPR Art. 17(1)(d)' }, t.keys.privacy);
    expect(e.status).toBe(201);
    // Each receipt, one event per entry, both commitments (the producer's and the one the ledger issues on close), the outcome.
    const types = await db().query<{ type: string }>(`SELECT type FROM events WHERE position IN (${e.body.positions.join(',')}) ORDER BY position`);
    expect(types.map((x) => x.type).sort()).toEqual([...tl.map(() => 'ReceiptRecorded'), ...tl.map(() => 'TimelineEntryAppended'), 'EndpointCommitmentRecorded', 'EndpointCommitmentRecorded', 'OutcomeReported'].sort());
    const entries = await db().query<{ raw: string; entry_digest: string | null }>(`SELECT raw, entry_digest FROM timeline_entries WHERE job_id = ?`, ['job-erase-all']);
    expect(entries.every((x) => x.raw === '' && x.entry_digest === null)).toBe(true);
    const audit = await t.http.get('/api/ledger/verify').set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(audit.status).toBe(200);
    expect(audit.body.ok).toBe(true);
  });
});
