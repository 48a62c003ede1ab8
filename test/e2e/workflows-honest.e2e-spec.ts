/**
 * Honest answers issue (workflows): findings beside the verdict (S8.2 step 5),
 * the S8.3 link, the loopback verify_url refusal, the start warning, and the
 * same reason codes from the server and `aer1 verify` for the same document.
 */
import { Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { cli, TmpDir } from '../cli/helpers';
import { merkleRoot } from '../../src/core/aer1';

const example = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');
const FAILED = JSON.parse(example('receipt-transport-provider-failure.json')) as { id: string; output_hash: string; tool: string; timestamp: string };
const OK = JSON.parse(example('receipt-transport.json')) as { id: string; output_hash: string; tool: string; timestamp: string };
const ZEROS = '0'.repeat(64);

/** A workflow over the two example transport receipts; `over` replaces members, `steps` members of steps. */
function workflow(workflowId: string, verifyUrl: string, steps: [Record<string, unknown>, Record<string, unknown>]): Record<string, unknown> {
  const base = [FAILED, OK].map((r, i) => ({ seq: i + 1, tool: r.tool, receipt_id: r.id, receipt_hash: r.output_hash.replace(/^sha256:/, ''), started_at: r.timestamp, ended_at: r.timestamp, status: 'ok', ...steps[i] }));
  return {
    type: 'verifiable-workflow-receipt',
    version: '1',
    workflow_id: workflowId,
    receipt_id: workflowId.replace(/^.{8}/, 'aaaaaaaa'),
    session_id: 's-honest',
    goal: 'honest answers',
    status: 'ok',
    steps: base,
    merkle_root: merkleRoot(base.map((s) => s.receipt_id)),
    output_hash: ZEROS.replace(/0$/, '1'),
    verify_url: verifyUrl,
  };
}

describe.each(DIALECTS)('Honest answers issue (workflows) on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
    for (const r of ['receipt-transport-provider-failure.json', 'receipt-transport.json']) {
      const res = await post('/api/receipts', example(r));
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
  });
  const post = (path: string, body: string, key = t.keys.producer) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(body);

  it('reports step_status_mismatch, step_receipt_hash_mismatch and verify_url_foreign beside an unchanged verdict', async () => {
    const id = '7a1b2c3d-0000-4000-8000-000000000001';
    // Step 1 says "ok" over a receipt recorded as provider_unavailable; step 2's receipt_hash is 64 zeros; the verify_url is another host's.
    const w = workflow(id, `https://elsewhere.example/workflow/${id}`, [{}, { receipt_hash: ZEROS }]);
    const r = await post('/api/workflows', JSON.stringify(w));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ verdict: 'valid', reasons: [] });
    const v = await t.http.get(`/api/workflows/${id}/verify`);
    expect(v.status).toBe(200);
    expect(v.body.verdict).toBe('valid');
    expect(v.body.reasons).toEqual([]);
    expect(v.body.findings).toEqual([
      { code: 'step_status_mismatch', step: 1, message: 'step 1 declares status "ok" but its step receipt records status "provider_unavailable"' },
      { code: 'step_receipt_hash_mismatch', step: 2, message: `step 2 declares receipt_hash ${ZEROS} but its step receipt's output hash is ${OK.output_hash.replace(/^sha256:/, '')}` },
      { code: 'verify_url_foreign', step: null, message: 'verify_url points at https://elsewhere.example, not at this ledger (https://ledger.test)' },
    ]);
    const page = await t.http.get(`/workflow/${id}`);
    expect(page.status).toBe(200);
    const section = /<section class="box" id="findings">([\s\S]*?)<\/section>/.exec(page.text)?.[1] ?? '';
    expect([...section.matchAll(/<code><bdi>([a-z_]+)<\/bdi><\/code>( \(step \d\))?/g)].map((m) => `${m[1]}${m[2] ?? ''}`)).toEqual([
      'step_status_mismatch (step 1)',
      'step_receipt_hash_mismatch (step 2)',
      'verify_url_foreign',
    ]);
    // Issue 27: findings beside the verdict keep the headline from being green (as on the badge), and it names them.
    expect(page.text).toContain('<section class="verdict warn" id="verdict"><div class="line warn" id="verdict-line"><span aria-hidden="true"><bdi>⚠</bdi></span> Workflow VERIFIED, <bdi>3 FINDINGS: step status mismatch (step 1); step receipt hash mismatch (step 2); verify url foreign</bdi></div>');
  });

  it('reports no finding when the steps agree with their receipts and verify_url is this ledger', async () => {
    const id = '7a1b2c3d-0000-4000-8000-000000000002';
    const w = workflow(id, `https://ledger.test/workflow/${id}`, [{ status: 'provider_unavailable' }, {}]);
    expect((await post('/api/workflows', JSON.stringify(w))).status).toBe(201);
    const v = await t.http.get(`/api/workflows/${id}/verify`);
    expect(v.body).toMatchObject({ verdict: 'valid', reasons: [], findings: [] });
    const page = (await t.http.get(`/workflow/${id}`)).text;
    expect(page).not.toContain('id="findings"');
    // Issue 27: a step that did not succeed leads the headline in red; the verdict on the record follows, smaller.
    expect(page).toContain('<section class="verdict bad" id="verdict"><div class="line bad" id="execution-outcome"><span aria-hidden="true"><bdi>✗</bdi></span> Execution outcome: 1 of 2 step(s) did not succeed (<bdi>step 1: provider_unavailable</bdi>)</div><div class="line ok sub" id="verdict-line"><span aria-hidden="true"><bdi>✓</bdi></span> Workflow VERIFIED</div>');
  });

  it("links 'Part of workflow' to the declared verify_url (S8.3), with a link to this ledger's page beside it", async () => {
    const page = (await t.http.get(`/run/${FAILED.id}`)).text;
    const section = /<section class="box" id="workflows">([\s\S]*?)<\/section>/.exec(page)?.[1] ?? '';
    const items = section.match(/<li>[\s\S]*?<\/li>/g) ?? [];
    expect(items).toHaveLength(2);
    expect(items[0]).toContain('<a href="https://elsewhere.example/workflow/7a1b2c3d-0000-4000-8000-000000000001" data-link-to="declared_verify_url">');
    expect(items[0]).toContain("links to the workflow's declared verify_url");
    expect(items[0]).toContain('<a href="/workflow/7a1b2c3d-0000-4000-8000-000000000001">this ledger\'s page</a>');
    expect(items[1]).toContain('<a href="https://ledger.test/workflow/7a1b2c3d-0000-4000-8000-000000000002" data-link-to="declared_verify_url">');
  });

  it('gives the draft example the same reason codes as `aer1 verify --json` (none of its step receipts recorded)', async () => {
    const text = example('workflow-draft-example.json');
    const tmp = new TmpDir();
    try {
      const c = await cli(['verify', '--json', tmp.write('w.json', JSON.parse(text) as object)]);
      const offline = JSON.parse(c.out) as { verdict: string; reasons: string[] };
      expect(offline).toMatchObject({ verdict: 'incomplete', reasons: ['step_receipts_unavailable'] });
      const r = await post('/api/workflows', text);
      expect(r.status).toBe(201);
      expect(r.body.reasons).toEqual(offline.reasons);
      const v = await t.http.get(`/api/workflows/${(JSON.parse(text) as { workflow_id: string }).workflow_id}/verify`);
      expect(v.body).toMatchObject({ verdict: offline.verdict, reasons: offline.reasons });
      expect(v.body.steps.map((s: { receipt: string }) => s.receipt)).toEqual(v.body.steps.map(() => 'missing'));
    } finally {
      tmp.cleanup();
    }
  });

  it('keeps step_receipt_missing when some but not all step receipts are recorded (as aer1 verify with some given)', async () => {
    const id = '7a1b2c3d-0000-4000-8000-000000000003';
    const absent = '11111111-2222-4333-8444-555555555555';
    const w = workflow(id, `https://ledger.test/workflow/${id}`, [{ status: 'provider_unavailable' }, { receipt_id: absent }]);
    w.merkle_root = merkleRoot([FAILED.id, absent]);
    const r = await post('/api/workflows', JSON.stringify(w));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ verdict: 'incomplete', reasons: ['step_receipt_missing'] });
    const tmp = new TmpDir();
    try {
      const c = await cli(['verify', '--json', tmp.write('w.json', { workflow: w, step_receipts: [JSON.parse(example('receipt-transport-provider-failure.json')) as object] })]);
      expect((JSON.parse(c.out) as { reasons: string[] }).reasons).toEqual(r.body.reasons);
    } finally {
      tmp.cleanup();
    }
  });
});

describe.each(DIALECTS)('Honest answers issue (workflows): loopback verify_url on %s', (dialect) => {
  const assemble = (t: TestApp) =>
    t.http
      .post('/api/workflows/assemble')
      .set('Authorization', `Bearer ${t.keys.producer}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ session_id: 's', goal: 'g', status: 'ok', receipt_ids: [OK.id], output: 'x' }));
  const record = async (t: TestApp) => {
    const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(example('receipt-transport.json'));
    expect(r.status).toBe(201);
  };

  it.each(['http://localhost:3000', 'http://127.0.0.9:8080', 'http://[::1]:3000'])('refuses to assemble with PUBLIC_BASE_URL %s (422 loopback_verify_url), writing nothing', async (base) => {
    const t = await startApp(dialect, { PUBLIC_BASE_URL: base });
    try {
      await record(t);
      const head = (await t.http.get('/api/ledger/head')).body;
      const r = await assemble(t);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: 'loopback_verify_url', verify_url: base });
      expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
    } finally {
      await t.close();
    }
  });

  it('assembles with a loopback PUBLIC_BASE_URL when ALLOW_LOOPBACK_VERIFY_URL=true', async () => {
    const t = await startApp(dialect, { PUBLIC_BASE_URL: 'http://localhost:3000', ALLOW_LOOPBACK_VERIFY_URL: 'true' });
    try {
      await record(t);
      const r = await assemble(t);
      expect(r.status).toBe(201);
      expect(r.body.workflow.verify_url).toBe(`http://localhost:3000/workflow/${r.body.workflow_id}`);
    } finally {
      await t.close();
    }
  });
});

describe('Honest answers issue (workflows): start warning', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());
  it.each([
    ['production', 1],
    ['development', 0],
  ])('warns at start when PUBLIC_BASE_URL is unset with NODE_ENV=%s: %d warning(s)', async (nodeEnv, count) => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const t = await startApp('sqlite', { NODE_ENV: nodeEnv, PUBLIC_BASE_URL: undefined as unknown as string });
      await t.close();
      const ours = warn.mock.calls.filter((c) => String(c[0]).startsWith('PUBLIC_BASE_URL is unset'));
      expect(ours).toHaveLength(count);
      if (count) expect(String(ours[0][0])).toContain('http://localhost:3000');
    } finally {
      warn.mockRestore();
    }
  });
});
