import { merkleRoot } from '../../src/core/aer1';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';

const valid3 = vector('workflow-valid-3') as { workflow: Record<string, unknown> & { workflow_id: string }; step_receipts: { id: string }[] };

describe.each(DIALECTS)('workflows on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  const post = (path: string, body: string, key = t.keys.producer) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(body);

  it('records workflow-valid-3 after its step receipts and verifies it', async () => {
    for (const r of valid3.step_receipts) expect((await post('/api/receipts', JSON.stringify(r))).status).toBe(201);
    const text = JSON.stringify(valid3.workflow, null, 1);
    const r = await post('/api/workflows', text);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ workflow_id: valid3.workflow.workflow_id, verdict: 'valid', reasons: [], url: `https://ledger.test/workflow/${valid3.workflow.workflow_id}` });
    expect((await post('/api/workflows', text)).status).toBe(200);
    const conflict = await post('/api/workflows', JSON.stringify(valid3.workflow));
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe('workflow_id_conflict');

    const v = await t.http.get(`/api/workflow/${valid3.workflow.workflow_id.toUpperCase()}/verify`);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ workflow_id: valid3.workflow.workflow_id, verification_status: 'verified', verdict: 'valid' });
    expect(v.body.merkle_root).toMatchObject({ declared: valid3.workflow.merkle_root, computed: valid3.workflow.merkle_root, confirmed: true });
    expect(v.body.merkle_root.construction).toContain('S8.1');
    expect(v.body.output_hash.confirmed).toBeNull();
    expect(v.body.steps).toHaveLength(3);
    expect(v.body.steps[0]).toMatchObject({ seq: 1, receipt: 'verified', provenance_class: 'EXECUTED BY LEDGER', url: `https://ledger.test/run/${valid3.step_receipts[0].id}` });

    const db = t.app.get((await import('../../src/database/database.service')).DatabaseService);
    const steps = await db.query<{ receipt_id: string; seq: number }>('SELECT receipt_id, seq FROM workflow_steps WHERE workflow_id = ? ORDER BY seq', [valid3.workflow.workflow_id]);
    expect(steps.map((s) => s.receipt_id)).toEqual(valid3.step_receipts.map((s) => s.id.toLowerCase()));
    const rows = await db.query<{ raw: string }>('SELECT raw FROM workflows WHERE workflow_id = ?', [valid3.workflow.workflow_id]);
    expect(rows[0].raw).toBe(text);
  });

  it('records the draft example as incomplete and says so on verify', async () => {
    const w = vector('workflow-draft-example') as { workflow_id: string };
    const r = await post('/api/workflows', JSON.stringify(w));
    expect(r.status).toBe(201);
    expect(r.body.verdict).toBe('incomplete');
    expect(r.body.reasons).toEqual(['step_receipts_unavailable']);
    const v = await t.http.get(`/api/workflow/${w.workflow_id}/verify`);
    expect(v.status).toBe(422);
    expect(v.body).toMatchObject({ verification_status: 'incomplete', verdict: 'incomplete', reasons: ['step_receipts_unavailable'] });
    expect(v.body.merkle_root.confirmed).toBe(true);
    expect(v.body.steps.every((s: { receipt: string }) => s.receipt === 'missing')).toBe(true);
    const page = await t.http.get(`/workflow/${w.workflow_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Incomplete:');
  });

  it.each([
    ['workflow-duplicate-last', 'duplicate_step_receipt_id'],
    ['workflow-reordered', 'merkle_root_mismatch'],
  ])('rejects %s with 422 %s and records nothing', async (id, reason) => {
    const head = (await t.http.get('/api/ledger/head')).body;
    const w = vector(id) as Record<string, unknown>;
    // Same workflow_id as the draft example: a fresh one so the conflict check is not what answers.
    const r = await post('/api/workflows', JSON.stringify({ ...w, workflow_id: '0b0a0f1e-0000-4000-8000-00000000000' + (id.length % 10) }));
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('verification_failed');
    expect(r.body.reasons).toContain(reason);
    expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
  });

  it('assembles a workflow from recorded receipts', async () => {
    const ids = valid3.step_receipts.map((r) => r.id);
    const output = 'BTC 64210.55 — reconciled ✓';
    const r = await post('/api/workflows/assemble', JSON.stringify({ session_id: 's-1', goal: 'reconcile <invoices>', status: 'ok', receipt_ids: ids, output }));
    expect(r.status).toBe(201);
    expect(r.body.verdict).toBe('valid');
    expect(r.body.merkle_root).toBe(merkleRoot(ids));
    expect(r.body.workflow).toMatchObject({ type: 'verifiable-workflow-receipt', version: '1', merkle_root: merkleRoot(ids), verify_url: `https://ledger.test/workflow/${r.body.workflow_id}` });
    expect(r.body.workflow.output_hash).toBe((await import('node:crypto')).createHash('sha256').update(output, 'utf8').digest('hex'));
    expect(r.body.workflow.steps[0]).toMatchObject({ seq: 1, tool: 'live_price', receipt_id: ids[0], receipt_hash: '3f8dfebc3bdf8445321ba564aa800a906b41852559493ea4b8af557b5ec85581', started_at: '2026-09-23T23:45:20.760Z', status: 'ok' });
    expect(r.body.workflow.receipt_id).not.toBe(r.body.workflow_id);

    const v = await t.http.get(`/api/workflow/${r.body.workflow_id}/verify`);
    expect(v.status).toBe(200);
    expect(v.body.output_hash).toMatchObject({ declared: r.body.workflow.output_hash, computed: r.body.workflow.output_hash, confirmed: true });
    expect(v.body.output_hash.construction).toContain('UTF-8 bytes of the `output` string');

    const page = await t.http.get(`/workflow/${r.body.workflow_id}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('UTF-8 bytes of the `output` string');
    expect(page.text).toContain('leaf = SHA-256(UTF-8 bytes of the step receipt_id string)');
    expect(page.text).toContain('reconcile &lt;invoices&gt;');
    for (const id of ids) expect(page.text).toContain(`href="/run/${id}"`);
  });

  it('answers 422 for missing or repeated step receipts and 400 for a malformed assemble body', async () => {
    const ids = valid3.step_receipts.map((r) => r.id);
    const absent = '11111111-2222-4333-8444-555555555555';
    const missing = await post('/api/workflows/assemble', JSON.stringify({ session_id: 's', goal: 'g', status: 'ok', receipt_ids: [ids[0], absent], output: '' }));
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe('step_receipt_missing');
    expect(missing.body.missing).toEqual([absent]);
    const dup = await post('/api/workflows/assemble', JSON.stringify({ session_id: 's', goal: 'g', status: 'ok', receipt_ids: [ids[0], ids[0].toUpperCase()], output: '' }));
    expect(dup.status).toBe(422);
    expect(dup.body.error).toBe('duplicate_step_receipt_id');
    const bad = await post('/api/workflows/assemble', JSON.stringify({ session_id: 's', goal: 'g', status: 'ok', receipt_ids: ids, output: { not: 'a string' } }));
    expect(bad.status).toBe(400);
    expect((await post('/api/workflows/assemble', '{"x":')).status).toBe(400);
    expect((await post('/api/workflows', JSON.stringify(valid3.workflow), t.keys.auditor)).status).toBe(403);
  });

  it('answers 404 for an unknown workflow', async () => {
    const r = await t.http.get('/api/workflow/00000000-0000-0000-0000-000000000000/verify');
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
  });
});
