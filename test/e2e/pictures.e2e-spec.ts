/**
 * The coverage report as a picture and a PDF, and the verify badges, over
 * HTTP on SQLite and PostgreSQL: `GET /coverage/{id}` (inline SVG),
 * `GET /coverage/{id}.pdf` (text extracted with pdf-parse),
 * `GET /badge/{receipt|job|workflow}/{id}.svg` (verdicts, caching, the
 * checkpoint seam).
 */
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointLocator } from '../../src/log/checkpoint-locator';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import { FIVE_PLAN, FIVE_STEPS } from '../coverage/picture-fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { pdfTextOf } from '../helpers/pdf-text';

type Vector = { id: string; input: unknown };
const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: Vector[] };
const vector = <T = Record<string, unknown>>(id: string): T => corpus.vectors.find((v) => v.id === id)!.input as T;
const valid3 = vector<{ workflow: Record<string, unknown> & { workflow_id: string }; step_receipts: { id: string }[] }>('workflow-valid-3');
const core = vector<{ id: string }>('receipt-core-valid');
const CHECKPOINT = { size: 4242, root: 'q1w2e3r4t5y6u7i8o9p0AAAAAAAAAAAAAAAAAAAAAAA=', leaf_index: 4100, url: 'https://ledger.example/checkpoint' };

/** The superagent parser for binary answers (PDF, SVG as a Buffer). */
function binary(res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

/** supertest's `parse` takes a superagent parser; the Node response is a stream. */
const bin = binary as unknown as (res: unknown, cb: (err: Error | null, body: unknown) => void) => void;

describe.each(DIALECTS)('coverage pictures, PDF and badges on %s', (dialect) => {
  let t: TestApp;
  const job = `job-pic-${dialect}`;
  const timeline = buildTimeline(job, FIVE_STEPS);
  let reportId: string;
  let digest: string;

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));

  beforeAll(async () => {
    t = await startApp(dialect);
    expect((await post('/api/plans', { ...FIVE_PLAN, job_id: job }, t.keys.compliance)).status).toBe(201);
    for (let i = 0; i < timeline.length; i++) expect((await post('/api/receipts', receiptFor(timeline[i], FIVE_STEPS[i].status ?? 'ok'), t.keys.producer)).status).toBe(201);
    expect((await t.http.put(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(timeline))).status).toBe(201);
    const issued = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(issued.status).toBe(201);
    reportId = issued.body.report_id;
    digest = issued.body.digest;
    for (const r of valid3.step_receipts) expect((await post('/api/receipts', r, t.keys.producer)).status).toBe(201);
    expect((await post('/api/workflows', valid3.workflow, t.keys.producer)).status).toBe(201);
    expect((await post('/api/receipts', core, t.keys.producer)).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  it('the coverage page shows the picture inline (SVG, escaped, no script) and "not yet proven against a signed checkpoint"', async () => {
    const r = await t.http.get(`/coverage/${reportId}`).set('Accept', 'text/html');
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/<div class="picture" tabindex="0"><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(r.text).toContain('notify&lt;script&gt;');
    expect(r.text).not.toMatch(/<script/i);
    for (const word of ['covered', 'OUT OF ORDER', 'REPORTED ONLY', 'FAILED', 'MISSING', '1 FLAGGED']) expect(r.text).toContain(word);
    expect(r.text).toContain('not yet proven against a signed checkpoint');
    expect(r.text).toContain(`href="/coverage/${reportId}.pdf"`);
  });

  it('GET /coverage/{id}.pdf: a PDF whose text holds each status, the digest, the plan, the URL and the checkpoint statement', async () => {
    const r = await t.http.get(`/coverage/${reportId}.pdf`).buffer(true).parse(bin);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/pdf');
    expect(r.headers['content-disposition']).toBe(`inline; filename="coverage-${reportId}.pdf"`);
    const { text } = await pdfTextOf(r.body as Buffer);
    expect(text).toMatch(/COVERED\s+fetch \(tool fetch_customer\)/);
    expect(text).toMatch(/OUT OF ORDER\s+screen \(tool check_sanctions\)/);
    expect(text).toMatch(/REPORTED ONLY\s+score \(tool score_risk\)/);
    expect(text).toMatch(/FAILED\s+decide \(tool record_decision\)/);
    expect(text).toMatch(/MISSING\s+notify<script> \(tool notify_customer\)/);
    expect(text).toContain(`Report digest: ${digest} (recomputed: matches)`);
    expect(text).toContain(`/coverage/${reportId}`);
    expect(text).toContain('Checkpoint: not yet proven against a signed checkpoint');
    // The timeline closed, so the ledger issued its own commitment (issue 15): it binds.
    expect(text).toContain('Endpoint commitment: binding, truncation excluded');
    expect(text).toContain('issued by this ledger when the timeline closed, signed with its log key ledger.test');
    expect(text).toMatch(/unplanned: seq 5, .*tool delete_records/);
    expect(text).toContain('Recorded by: test-producer (keys test-producer); the plan names no recorded_by_owner');
  });

  it('an unknown report is 404 for the PDF too', async () => {
    const r = await t.http.get('/coverage/00000000-0000-4000-8000-000000000000.pdf');
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
  });

  it('receipt badge: verified in green only for a valid current receipt; a failed call and a superseded receipt are amber; ETag and 304', async () => {
    await t.app.get(CheckpointSigner).tick(); // the receipt's event is then in a signed checkpoint, which the badge names
    const ok = await t.http.get(`/badge/receipt/${timeline[1].id}.svg`).buffer(true).parse(bin);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(ok.headers['cache-control']).toBe('public, max-age=60');
    const svg = (ok.body as Buffer).toString('utf8');
    expect(svg).toContain('\u2713 verified</text>');
    expect(svg).toContain('fill="#1a7f37"');
    expect(svg).toMatch(/<text[^>]*>checkpoint \d+<\/text>/);
    expect(svg.length).toBeLessThan(2000);
    const etag = ok.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await t.http.get(`/badge/receipt/${timeline[1].id}.svg`).set('If-None-Match', etag);
    expect(again.status).toBe(304);

    const failedCall = (await t.http.get(`/badge/receipt/${timeline[3].id}.svg`).buffer(true).parse(bin)).body.toString('utf8');
    expect(failedCall).toContain('! verified, call status provider_unavailable');
    expect(failedCall).not.toContain('#1a7f37');

    const corrected = await post(`/api/receipts/${core.id}/corrections`, { ...core, id: '5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11' }, t.keys.producer);
    expect(corrected.status).toBe(201);
    const superseded = (await t.http.get(`/badge/receipt/${core.id}.svg`).buffer(true).parse(bin)).body.toString('utf8');
    expect(superseded).toContain('! verified, SUPERSEDED');
    expect(superseded).not.toContain('#1a7f37');
    const latest = (await t.http.get('/badge/receipt/5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11.svg').buffer(true).parse(bin)).body.toString('utf8');
    expect(latest).toContain('\u2713 verified</text>');

    expect((await t.http.get('/badge/receipt/not-a-uuid.svg')).status).toBe(404);
    expect((await t.http.get('/badge/receipt/00000000-0000-4000-8000-000000000000.svg')).body.error).toBe('not_found');
  });

  it('job badge: green once a binding commitment the ledger stands behind excludes truncation (its own, issued at close); a self-asserted one adds nothing', async () => {
    // The timeline was closed: the ledger issued its own endpoint commitment then (issue 15), and it binds.
    const before = (await t.http.get(`/badge/job/${job}.svg`).buffer(true).parse(bin)).body.toString('utf8');
    expect(before).toContain('\u2713 verified, truncation excluded');
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(timeline), t.keys.producer)).status).toBe(201);
    const after = await t.http.get(`/badge/job/${job}.svg`).buffer(true).parse(bin);
    expect(after.body.toString('utf8')).toContain('\u2713 verified, truncation excluded');
    // A new verdict is a new tag: a cached badge is not revalidated as unchanged.
    const stale = await t.http.get(`/badge/job/${job}.svg`).set('If-None-Match', '"not-the-tag"');
    expect(stale.status).toBe(200);
    expect((await t.http.get('/badge/job/no-such-job.svg')).status).toBe(404);
  });

  it('a historical (-06) job is never green', async () => {
    const hist = vector<{ job_id: string }[]>('chain-historical-06');
    const put = await t.http.put(`/api/jobs/${hist[0].job_id}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(hist));
    expect(put.status).toBe(201);
    const svg = (await t.http.get(`/badge/job/${hist[0].job_id}.svg`).buffer(true).parse(bin)).body.toString('utf8');
    expect(svg).toContain('! HISTORICAL (-06)');
    expect(svg).not.toContain('#1a7f37');
  });

  it('workflow badge: verified, but not green while verifyWorkflow states a finding beside the verdict', async () => {
    const verify = await t.http.get(`/api/workflows/${valid3.workflow.workflow_id}/verify`);
    expect(verify.body.verification_status).toBe('verified');
    expect(verify.body.findings.map((f: { code: string }) => f.code)).toEqual(['verify_url_foreign']);
    const svg = (await t.http.get(`/badge/workflow/${valid3.workflow.workflow_id.toUpperCase()}.svg`).buffer(true).parse(bin)).body.toString('utf8');
    expect(svg).toContain('AER-1 workflow');
    expect(svg).toContain('! verified, 1 FINDING</text>');
    expect(svg).not.toContain('#1a7f37');
    expect((await t.http.get('/badge/workflow/00000000-0000-4000-8000-000000000000.svg')).status).toBe(404);
  });

  const example = (f: string): string => readFileSync(join(__dirname, '../../examples/outcomes', f), 'utf8');

  it('issue 27, job-pay-7 (examples/outcomes) confirmed, then charged back: the headline names the finding; the payment\'s row and picture say CONTRADICTED in red, never a green "covered"; the PDF says the same', async () => {
    const payments = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
    expect((await post('/api/plans', example('plan.json'), t.keys.compliance)).status).toBe(201);
    for (const l of example('receipts.ndjson').split('\n').filter(Boolean)) expect((await post('/api/receipts', l, t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-pay-7/entries', example('timeline.json'), t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-pay-7/commitments', example('commitment.json'), t.keys.producer)).status).toBe(201);
    expect((await post('/api/outcomes', example('outcome-settled.json'), payments)).status).toBe(201);
    const full = await post('/api/coverage-reports', { job_id: 'job-pay-7' }, t.keys.auditor);
    expect([full.status, full.body.result]).toEqual([201, 'full_coverage']);
    expect((await post('/api/outcomes', example('outcome-reversed.json'), payments)).status).toBe(201);
    const issued = await post('/api/coverage-reports', { job_id: 'job-pay-7' }, t.keys.auditor);
    expect([issued.status, issued.body.result]).toEqual([201, 'findings']);

    const ok = (await t.http.get(`/coverage/${full.body.report_id}`).set('Accept', 'text/html')).text;
    expect(ok).toContain('<div class="line ok" id="verdict-line"><span aria-hidden="true"><bdi>✓</bdi></span> <bdi>Coverage: FULL (2/2 expected actions covered)</bdi></div>');
    expect(ok).toMatch(/<tr id="action-pay">.*?<td class="s-covered"><bdi>covered<\/bdi><\/td>/s);

    const page = (await t.http.get(`/coverage/${issued.body.report_id}`).set('Accept', 'text/html')).text;
    // The headline names the finding in words, in red.
    expect(page).toContain('<div class="line bad" id="verdict-line"><span aria-hidden="true"><bdi>✗</bdi></span> <bdi>Coverage: 1 FINDING: pay: outcome CONTRADICTED (PAYMENTS reports reversed) (2/2 expected actions covered)</bdi></div>');
    // The payment's row: the outcome status in red words, no green "covered" cell; the lookup stays covered.
    const row = /<tr id="action-pay">(.*?)<\/tr>/s.exec(page)![1];
    expect(row).not.toContain('s-covered');
    expect(row).toContain('<td class="s-outcome" data-outcome="contradicted">outcome <bdi>CONTRADICTED</bdi><br><small>the call is recorded (covered by its receipt); <bdi>PAYMENTS reports reversed</bdi></small></td>');
    expect(row).toContain("agent's receipt: <bdi>success</bdi> (<bdi>ok</bdi>); owning system: <span class=\"o-contradicted\"><bdi>CONTRADICTED</bdi></span>");
    expect(/<tr id="action-lookup">(.*?)<\/tr>/s.exec(page)![1]).toContain('<td class="s-covered"><bdi>covered</bdi></td>');
    // The picture: the payment's row label is a red "✗ CONTRADICTED", its mark the slashed ring, not the green dot.
    const svgRow = /<g class="row" data-status="covered" data-outcome="contradicted">.*?<\/g>/s.exec(page)![0];
    expect(svgRow).toContain('fill="#cf222e" font-weight="600">✗ CONTRADICTED</text>');
    expect(page).toContain('<title>seq 2: accepted evidence, owning system did not confirm</title>');
    expect(page).not.toContain('<title>seq 2: accepted evidence, succeeded</title>');
    expect(page.match(/data-outcome="contradicted"/g)).toHaveLength(2);
    // The ratio line under the headline says it too.
    expect(page).toContain('<p id="coverage-ratio">Coverage <bdi>2/2</bdi> expected actions covered (<bdi>100.0</bdi>%); <span class="bad">1 of them with the required outcome not confirmed</span> (<code class="id"><bdi>pay</bdi></code>: <bdi>CONTRADICTED</bdi>), as of ledger position');

    const pdf = await t.http.get(`/coverage/${issued.body.report_id}.pdf`).buffer(true).parse(bin);
    const { text } = await pdfTextOf(pdf.body as Buffer);
    expect(text).toContain('Coverage: 1 FINDING: pay: outcome CONTRADICTED (PAYMENTS reports reversed) (2/2 expected actions covered, 100.0%)');
    expect(text).toMatch(/OUTCOME CONTRADICTED\s+pay \(tool send_payment\)/);
    expect(text).not.toMatch(/COVERED\s+pay \(tool send_payment\)/);
    expect(text).not.toMatch(/tool send_payment, outcome success \(ok\)/);
    expect(text).toMatch(/Outcome evidence Required outcomes: 1; confirmed 0, contradicted 1/);
  }, 60_000);

  it('issue 27: every value the headline names is escaped (an action id and a system with markup in them)', async () => {
    const SYSTEM = 'PAY<img src=x onerror=alert(1)>"ments';
    const ACTION = 'pay<script>alert(1)</script>';
    const key = (await t.app.get(ApiKeysService).create('hostile payments', 'outcome', { systems: [SYSTEM] })).key;
    const job = 'job-pay-hostile';
    const plan = paymentPlan(job, { effect: 'payment.settled', from_system: SYSTEM }) as { expected_actions: { action_id: string }[] };
    plan.expected_actions[1].action_id = ACTION;
    expect((await post('/api/plans', plan, t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, PAYMENT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post('/api/outcomes', outcomeFor({ name: 'hostile-reversed', job_id: job, receipt_id: tl[1].id, system: SYSTEM, result: 'reversed' }), key)).status).toBe(201);
    const issued = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(issued.status).toBe(201);
    const page = (await t.http.get(`/coverage/${issued.body.report_id}`).set('Accept', 'text/html')).text;
    const head = /<div class="line bad" id="verdict-line">(.*?)<\/div>/s.exec(page)![1];
    expect(head).toContain('pay&lt;script&gt;alert(1)&lt;/script&gt;: outcome CONTRADICTED (PAY&lt;img src=x onerror=alert(1)&gt;&quot;ments reports reversed)');
    expect(page).not.toMatch(/<script|<img/i);
    const { text } = await pdfTextOf((await t.http.get(`/coverage/${issued.body.report_id}.pdf`).buffer(true).parse(bin)).body as Buffer);
    expect(text).toContain(`${ACTION}: outcome CONTRADICTED (${SYSTEM} reports reversed)`);
  }, 60_000);

  it('with a signed checkpoint (the seam): the badge shows its size, the PDF and the page state it', async () => {
    const locator = t.app.get(CheckpointLocator);
    const spy = jest.spyOn(locator, 'locate').mockResolvedValue(CHECKPOINT);
    try {
      const svg = (await t.http.get(`/badge/receipt/${timeline[1].id}.svg`).buffer(true).parse(bin)).body.toString('utf8');
      expect(svg).toContain('checkpoint 4242</text>');
      const page = await t.http.get(`/coverage/${reportId}`).set('Accept', 'text/html');
      expect(page.text).toContain('proven against the signed checkpoint of tree size <bdi>4242</bdi>');
      const pdf = await t.http.get(`/coverage/${reportId}.pdf`).buffer(true).parse(bin);
      const { text } = await pdfTextOf(pdf.body as Buffer);
      expect(text).toContain('proven against the signed checkpoint of tree size 4242, leaf index 4100');
      expect(spy).toHaveBeenCalledWith({ kind: 'coverage_report', id: reportId, position: expect.any(Number) });
    } finally {
      spy.mockRestore();
    }
  });
});

describe('badges and the PDF spend the public read budget (VERIFY_RATE_LIMIT=10)', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each([
    ['/badge/receipt/00000000-0000-4000-8000-000000000000.svg', 10],
    ['/badge/workflow/00000000-0000-4000-8000-000000000000.svg', 10],
    ['/badge/job/no-such-job.svg', 2],
    ['/coverage/00000000-0000-4000-8000-000000000000.pdf', 2],
  ])('%s: %d answers, then 429', async (path, allowed) => {
    t = await startApp('sqlite', { VERIFY_RATE_LIMIT: '10' });
    const statuses: number[] = [];
    for (let i = 0; i < allowed + 2; i++) statuses.push((await t.http.get(path)).status);
    expect(statuses).toEqual([...Array(allowed).fill(404), 429, 429]);
  });
});
