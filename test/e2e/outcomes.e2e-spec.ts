/**
 * Outcome evidence over HTTP (issue 18), on SQLite and PostgreSQL: the
 * compliance team registers a plan whose payment requires `payment.settled`
 * from PAYMENTS, the agent platform records the timeline and receipts, the
 * payment system reports outcomes with its own `outcome` key, the auditor
 * issues the report. Each scenario is its own job with exact statuses.
 */
import Ajv from 'ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { CoverageReportContent } from '../../src/core/coverage/reconcile';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { OutcomesRepository } from '../../src/outcomes/outcomes.repository';
import { canonicalDigest } from '../../src/core/coverage/canonical';
import { buildTimeline, commitmentFor, Entry, receiptFor, StepSpec } from '../coverage/fixtures';
import { cli, TmpDir } from '../cli/helpers';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { outcomeFor, OutcomeSpec, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';

/** The headline verdict block of a page: its frame's tone and its lines as text (tags stripped). */
function headline(page: string): { tone: string; lines: string[] } {
  const block = /<section class="verdict (ok|bad|warn|na)" id="verdict">([\s\S]*?)<\/section>/.exec(page);
  if (!block) throw new Error('no verdict block');
  const strip = (x: string) => x.replace(/<[^>]*>/g, '').replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();
  return { tone: block[1], lines: [...block[2].matchAll(/<div class="line [^"]*" id="[^"]*">([\s\S]*?)<\/div>/g)].map((m) => strip(m[1])) };
}

/** A supertest parser that keeps the body as bytes (the badges are SVG). */
function binary(res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}
const bin = binary as unknown as (res: unknown, cb: (err: Error | null, body: unknown) => void) => void;

describe.each(DIALECTS)('outcome evidence on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let payments: string;
  let crm: string;
  let tmp: TmpDir;
  beforeAll(async () => {
    t = await startApp(dialect);
    tmp = new TmpDir();
    const keys = t.app.get(ApiKeysService);
    payments = (await keys.create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
    crm = (await keys.create('crm', 'outcome', { systems: ['CRM'] })).key;
  });
  afterAll(async () => {
    tmp.cleanup();
    await t.close();
  });

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const head = async (): Promise<number> => (await t.http.get('/api/ledger/head')).body.position as number;

  /** Compliance registers the plan; the agent platform records receipts, the timeline and its endpoint commitment. */
  async function execute(job: string, opts: { steps?: StepSpec[]; outcome?: Record<string, unknown> } = {}): Promise<Entry[]> {
    const steps = opts.steps ?? PAYMENT_STEPS;
    expect((await post('/api/plans', paymentPlan(job, opts.outcome), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, steps);
    for (let i = 0; i < tl.length; i++) expect((await post('/api/receipts', receiptFor(tl[i], steps[i].status ?? 'ok'), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    return tl;
  }

  /** The payment system reports an outcome for the payment call (entry 2). */
  async function report(tl: Entry[], spec: Omit<OutcomeSpec, 'job_id' | 'receipt_id'>, key = payments, expected = 201): Promise<Record<string, string>> {
    const doc = outcomeFor({ job_id: tl[0].job_id, receipt_id: tl[1].id, ...spec });
    const r = await post('/api/outcomes', doc, key);
    expect([r.status, r.body.error]).toEqual([expected, undefined]);
    return doc;
  }

  async function issue(job: string): Promise<{ digest: string; report: CoverageReportContent }> {
    const r = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    const g = await t.http.get(`/api/coverage-reports/${r.body.report_id}`).set('Accept', 'application/json');
    expect(g.body.digest_verified).toBe(true);
    return { digest: r.body.digest, report: g.body.report };
  }

  const example = (f: string): string => readFileSync(join(__dirname, '../../examples/outcomes', f), 'utf8');
  const svg = async (path: string): Promise<string> => {
    const r = await t.http.get(path).buffer(true).parse(bin);
    expect([r.status, r.headers['content-type']]).toEqual([200, expect.stringContaining('image/svg+xml')]);
    return (r.body as Buffer).toString('utf8');
  };

  const pay = (r: CoverageReportContent) => r.actions.find((a) => a.action_id === 'pay')!;
  const outcomeFindings = (r: CoverageReportContent) => r.findings.map((f) => f.code).filter((c) => c.startsWith('outcome_'));

  it('confirmed: PAYMENTS confirms the payment; full coverage; the outcome has a page and a verifier; the receipt page lists it', async () => {
    const tl = await execute('job-out-confirmed');
    const doc = outcomeFor({ name: 'confirmed', job_id: 'job-out-confirmed', receipt_id: tl[1].id });
    const text = JSON.stringify(doc, null, 2);
    const r = await post('/api/outcomes', text, payments);
    expect(r.status).toBe(201);
    const id = doc.outcome_id.toLowerCase();
    expect(r.body).toEqual({ outcome: 'created', outcome_id: id, receipt_id: tl[1].id.toLowerCase(), system: 'PAYMENTS', effect: 'payment.settled', result: 'confirmed', url: `https://ledger.test/outcome/${id}`, verify_url: `https://ledger.test/api/outcomes/${id}/verify`, position: expect.any(Number) });
    expect(r.headers.location).toBe(`https://ledger.test/api/outcomes/${id}/verify`);
    // The same bytes again answer the record; other bytes under the id are refused (never edited).
    const again = await post('/api/outcomes', text, payments);
    expect([again.status, again.body.outcome, again.body.position]).toEqual([200, 'existing', r.body.position]);
    const before = await head();
    const edited = await post('/api/outcomes', { ...doc, result: 'failed' }, payments);
    expect([edited.status, edited.body.error]).toEqual([409, 'outcome_id_conflict']);
    expect(await head()).toBe(before);

    const { report } = await issue('job-out-confirmed');
    expect(pay(report).status).toBe('covered');
    expect(pay(report).outcome).toMatchObject({ status: 'confirmed', evidence: [{ seq: 2, status: 'confirmed', deciding_outcome: id, elapsed_ms: 60_000 }] });
    expect(report.outcomes!.counts).toEqual({ required: 1, confirmed: 1, contradicted: 0, unconfirmed: 0, wrong_system: 0, outcomes_matched: 1 });
    expect(report.findings).toEqual([]);
    expect(report.result).toBe('full_coverage');

    const v = await t.http.get(`/api/outcomes/${id}/verify`);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ outcome_id: id, verdict: 'valid', reasons: [], output_commitment: { matches: true, declared: doc.output_hash, computed: doc.output_hash }, system: 'PAYMENTS', result: 'confirmed', superseded_by: null, reported_by: { name: 'payments-ledger' } });
    const page = await t.http.get(`/outcome/${id}`).set('Accept', 'text/html');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Commitment: VALID');
    expect(page.text).toContain('key <code><bdi>payments-ledger</bdi></code>');
    const receiptPage = await t.http.get(`/run/${tl[1].id}`).set('Accept', 'application/json');
    expect(receiptPage.body.outcomes).toEqual([expect.objectContaining({ outcome_id: id, system: 'PAYMENTS', result: 'confirmed', reported_by: expect.objectContaining({ name: 'payments-ledger' }), superseded_by: null })]);
    expect((await t.http.get(`/outcome/00000000-0000-4000-8000-000000000000`).set('Accept', 'application/json')).status).toBe(404);
  });

  it('contradicted: the agent says ok, the payment system says failed', async () => {
    const tl = await execute('job-out-contradicted');
    await report(tl, { name: 'contradicted', result: 'failed' });
    const { report: r } = await issue('job-out-contradicted');
    expect(pay(r).status).toBe('covered');
    expect(pay(r).outcome!.status).toBe('contradicted');
    expect(outcomeFindings(r)).toEqual(['outcome_contradicted']);
    expect(r.result).toBe('findings');
  });

  it('settled, then reversed: the reversal supersedes the confirmation (contradicted); pages show it newest first', async () => {
    const tl = await execute('job-out-reversed');
    const settled = await report(tl, { name: 'settled', observed_at: '2026-10-01T12:01:00Z' });
    const asOf = await head();
    const reversed = await report(tl, { name: 'reversed', result: 'reversed', observed_at: '2026-10-02T09:00:00Z' });
    const { report: r } = await issue('job-out-reversed');
    expect(pay(r).outcome!.status).toBe('contradicted');
    expect(pay(r).outcome!.evidence[0].outcomes.map((o) => [o.outcome_id, o.result, o.note, o.superseded_by])).toEqual([
      [settled.outcome_id, 'confirmed', 'superseded', reversed.outcome_id],
      [reversed.outcome_id, 'reversed', 'latest', null],
    ]);
    expect(outcomeFindings(r)).toEqual(['outcome_contradicted']);
    // As of the position before the reversal, the confirmation stood.
    const earlier = await post('/api/coverage-reports', { job_id: 'job-out-reversed', as_of_position: asOf }, t.keys.auditor);
    const g = await t.http.get(`/api/coverage-reports/${earlier.body.report_id}`).set('Accept', 'application/json');
    expect(pay(g.body.report).outcome!.status).toBe('confirmed');
    expect(g.body.report.result).toBe('full_coverage');
    // The receipt page lists both, newest first; the settled one is superseded.
    const page = await t.http.get(`/run/${tl[1].id}`).set('Accept', 'application/json');
    expect(page.body.outcomes.map((o: { outcome_id: string; superseded_by: string | null }) => [o.outcome_id, o.superseded_by])).toEqual([
      [reversed.outcome_id, null],
      [settled.outcome_id, reversed.outcome_id],
    ]);
    expect((await t.http.get(`/api/outcomes/${settled.outcome_id}/verify`)).body.superseded_by).toBe(reversed.outcome_id);
  });

  it('job-pay-7 (examples/outcomes) charged back: the receipt page leads with the reversal in red, the receipt\'s claim second; badges and the job page are red', async () => {
    const receipt = '81f7a3a2-7faf-5ab1-b9f7-dbe9cbaf4630';
    expect((await post('/api/plans', example('plan.json'), t.keys.compliance)).status).toBe(201);
    for (const l of example('receipts.ndjson').split('\n').filter(Boolean)) expect((await post('/api/receipts', l, t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-pay-7/entries', example('timeline.json'), t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-pay-7/commitments', example('commitment.json'), t.keys.producer)).status).toBe(201);
    const receiptBadge = () => svg(`/badge/receipt/${receipt}.svg`);
    const jobBadge = () => svg('/badge/job/job-pay-7.svg');
    const before = { receipt: await receiptBadge(), job: await jobBadge() };
    expect((await post('/api/outcomes', example('outcome-settled.json'), payments)).status).toBe(201);

    // Confirmed: a green confirmation line beside the receipt's own lines; the receipt badge stays as it was.
    const confirmed = headline((await t.http.get(`/run/${receipt}`)).text);
    expect(confirmed.lines).toContain('\u2713 Outcome: CONFIRMED by PAYMENTS (payment.settled), observed 2026-10-01T12:01:30Z');
    expect(confirmed.lines.some((l) => l.startsWith('\u2717'))).toBe(false);
    expect(await receiptBadge()).toBe(before.receipt);
    expect(before.receipt).toContain('>\u2713 verified</text>');
    expect(await jobBadge()).toBe(before.job);

    // Charged back: the reversal (the latest outcome of PAYMENTS for payment.settled) decides.
    expect((await post('/api/outcomes', example('outcome-reversed.json'), payments)).status).toBe(201);
    const page = await t.http.get(`/run/${receipt}`);
    const h = headline(page.text);
    expect(h.tone).toBe('bad');
    expect(h.lines.slice(0, 3)).toEqual([
      '\u2717 Outcome: REVERSED by PAYMENTS (payment.settled), observed 2026-10-03T08:15:00Z',
      '\u26a0 The receipt reports ok (its status "ok" is the agent\'s claim; the outcome above decides)',
      '\u2713 Commitment: VALID: the stored bytes match the output commitment',
    ]);
    expect(page.text).toContain('<div class="line bad" id="outcome-verdict"><span aria-hidden="true"><bdi>\u2717</bdi></span> Outcome: <a href="/outcome/2b7c81dd-4ff4-5ed7-aa5b-c1a7add87e37">');
    expect(page.text).not.toContain('Execution outcome: OK');
    expect(page.text.indexOf('id="outcome-verdict"')).toBeLessThan(page.text.indexOf('id="execution-outcome"'));
    expect(page.text.indexOf('id="execution-outcome"')).toBeLessThan(page.text.indexOf('id="verdict-line"'));

    const rb = await receiptBadge();
    expect(rb).toContain('>\u2717 outcome REVERSED \u00b7 verified</text>');
    expect(rb).toContain('fill="#cf222e"');
    expect(rb).not.toContain('#1a7f37');
    const jb = await jobBadge();
    expect(jb).toMatch(/>\u2717 outcome REVERSED \u00b7 [^<]+<\/text>/);
    expect(jb).toContain('fill="#cf222e"');
    expect(jb).not.toContain('#1a7f37');

    const job = await t.http.get('/jobs/job-pay-7');
    const jh = headline(job.text);
    expect(jh.tone).toBe('bad');
    expect(jh.lines[0]).toBe('\u2717 Outcome: REVERSED by PAYMENTS (payment.settled) for receipt 81f7a3a2-7faf-5ab1-b9f7-dbe9cbaf4630, observed 2026-10-03T08:15:00Z');
    expect((await t.http.get('/jobs/job-pay-7').set('Accept', 'application/json')).body.outcome_against).toMatchObject({ outcome_id: '2b7c81dd-4ff4-5ed7-aa5b-c1a7add87e37', receipt_id: receipt, result: 'reversed', count: 1 });
  });

  it('an outcome against the call from a system and effect named in markup: shown escaped, leading the receipt page', async () => {
    const tl = await execute('job-out-hostile-names');
    const hostile = (await t.app.get(ApiKeysService).create('hostile', 'outcome', { systems: ['<script>alert(1)</script>'] })).key;
    const doc = outcomeFor({ name: 'hostile', job_id: 'job-out-hostile-names', receipt_id: tl[1].id, system: '<script>alert(1)</script>', effect: '<img src=x onerror=alert(2)>', result: 'failed' });
    expect((await post('/api/outcomes', doc, hostile)).status).toBe(201);
    for (const path of [`/run/${tl[1].id}`, '/jobs/job-out-hostile-names']) {
      const text = (await t.http.get(path)).text;
      expect(text).not.toContain('<script>alert(1)');
      expect(text).not.toContain('<img src=x');
      expect(text).toContain('<bdi>FAILED</bdi> by <bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi> (<bdi>&lt;img src=x onerror=alert(2)&gt;</bdi>)');
      expect(headline(text).lines[0]).toMatch(/^\u2717 Outcome: FAILED by &lt;script&gt;/);
    }
    expect(await svg(`/badge/receipt/${tl[1].id}.svg`)).toContain('>\u2717 outcome FAILED \u00b7 verified</text>');
  });

  it('the outcomes read model is rebuilt from the events exactly as it was', async () => {
    const repo = t.app.get(OutcomesRepository);
    const db = t.app.get(DatabaseService);
    const before = await repo.ofJob(db, 'job-out-reversed');
    expect(before.map((o) => o.result)).toEqual(['confirmed', 'reversed']);
    const r = await t.app.get(LedgerService).rebuildProjections();
    expect(r.projections).toContain('outcomes');
    expect(await repo.ofJob(db, 'job-out-reversed')).toEqual(before);
  });

  it('unconfirmed: nothing from the payment system', async () => {
    await execute('job-out-unconfirmed');
    const { report: r } = await issue('job-out-unconfirmed');
    expect(pay(r).status).toBe('covered');
    expect(pay(r).outcome).toMatchObject({ status: 'unconfirmed', evidence: [{ seq: 2, status: 'unconfirmed', outcomes: [] }] });
    expect(outcomeFindings(r)).toEqual(['outcome_unconfirmed']);
    expect(r.result).toBe('findings');
  });

  it('wrong_system: an outcome from CRM (its own key) is shown, never counted', async () => {
    const tl = await execute('job-out-wrong-system');
    await report(tl, { name: 'crm', system: 'CRM' }, crm);
    const { report: r } = await issue('job-out-wrong-system');
    expect(pay(r).outcome!.status).toBe('wrong_system');
    expect(pay(r).outcome!.evidence[0].outcomes).toEqual([expect.objectContaining({ system: 'CRM', counted: false, note: 'other_system' })]);
    expect(outcomeFindings(r)).toEqual(['outcome_wrong_system']);
    expect(r.result).toBe('findings');
  });

  it('an outcome key speaking for a system it may not: 403 system_not_permitted, nothing written', async () => {
    const tl = await execute('job-out-forbidden');
    const doc = outcomeFor({ name: 'forbidden', job_id: 'job-out-forbidden', receipt_id: tl[1].id });
    const before = await head();
    const r = await post('/api/outcomes', doc, crm);
    expect([r.status, r.body.error, r.body.system, r.body.permitted]).toEqual([403, 'system_not_permitted', 'PAYMENTS', ['CRM']]);
    // Neither an admin nor a producer speaks for a system.
    expect((await post('/api/outcomes', doc, t.keys.admin)).body.error).toBe('system_not_permitted');
    expect((await post('/api/outcomes', doc, t.keys.producer)).body.error).toBe('forbidden_role');
    expect(await head()).toBe(before);
    expect((await t.http.get(`/api/outcomes/${doc.outcome_id}/verify`)).status).toBe(404);
    const { report: rep } = await issue('job-out-forbidden');
    expect(pay(rep).outcome!.status).toBe('unconfirmed');
    // A key of role outcome must name its systems.
    await expect(t.app.get(ApiKeysService).create('no-systems', 'outcome')).rejects.toMatchObject({ code: 'invalid_key_options' });
  });

  it('a bad commitment in an outcome is refused like a bad receipt (422 verification_failed), nothing written', async () => {
    const tl = await execute('job-out-bad-commitment');
    const doc = outcomeFor({ name: 'bad', job_id: 'job-out-bad-commitment', receipt_id: tl[1].id });
    const before = await head();
    const flipped = doc.output_hash.slice(0, -1) + (doc.output_hash.endsWith('0') ? '1' : '0');
    const mismatch = await post('/api/outcomes', { ...doc, output_hash: flipped }, payments);
    expect([mismatch.status, mismatch.body.error, mismatch.body.reasons]).toEqual([422, 'verification_failed', ['output_hash_mismatch']]);
    const base64 = await post('/api/outcomes', { ...doc, canonical_bytes: doc.canonical_bytes.replace(/=*$/, '') + '!' }, payments);
    expect([base64.status, base64.body.reasons]).toEqual([422, ['invalid_base64']]);
    const unknownReceipt = await post('/api/outcomes', { ...doc, receipt_id: '00000000-0000-4000-8000-000000000000' }, payments);
    expect([unknownReceipt.status, unknownReceipt.body.error]).toEqual([422, 'receipt_not_recorded']);
    expect((await post('/api/outcomes', '{"outcome_id": 1, "outcome_id": 2}', payments)).status).toBe(400);
    expect(await head()).toBe(before);
    expect((await t.http.get(`/api/outcomes/${doc.outcome_id}/verify`)).status).toBe(404);
  });

  it('hostile bodies are answered 400, 403 or 422 with a reason code, never 500, and write nothing', async () => {
    const tl = await execute('job-out-hostile');
    const good = outcomeFor({ name: 'hostile', job_id: 'job-out-hostile', receipt_id: tl[1].id });
    const before = await head();
    const values: unknown[] = [null, 0, -1, 1.5, true, '', ' ', 'x'.repeat(70_000), '\u202e', '\ud800', [], {}, { $ne: 1 }, '2026-13-01T00:00:00Z', 'sha256:' + 'g'.repeat(64)];
    const bodies: string[] = ['', 'null', '[]', '"x"', '{', '{"a":1,"a":2}', '\u00ff', JSON.stringify({ ...good, extra: 1 })];
    // A printable string is a valid job id or effect (any identifier): those are left out for these two.
    const printable = (v: unknown): boolean => typeof v === 'string' && /^[\x21-\x7e]+$/.test(v);
    for (const k of Object.keys(good)) for (const v of values) if (!((k === 'job_id' || k === 'effect') && printable(v))) bodies.push(JSON.stringify({ ...good, [k]: v }));
    const seen: Record<string, number> = {};
    for (const b of bodies) {
      const r = await post('/api/outcomes', b, payments);
      seen[r.status] = (seen[r.status] ?? 0) + 1;
      expect([b.slice(0, 80), [400, 403, 413, 422].includes(r.status), typeof r.body.error]).toEqual([b.slice(0, 80), true, 'string']);
    }
    // 403: a printable system this key does not speak for.
    expect(Object.keys(seen).sort()).toEqual(['400', '403', '422']);
    expect(await head()).toBe(before);
  });

  it('required outcome within a window, late: confirmed after within_seconds is unconfirmed (late)', async () => {
    const outcome = { effect: 'payment.settled', from_system: 'PAYMENTS', within_seconds: 300 };
    const tl = await execute('job-out-late', { outcome });
    await report(tl, { name: 'late', observed_at: '2026-10-01T12:10:00Z' });
    const { report: r } = await issue('job-out-late');
    expect(pay(r).outcome).toMatchObject({ status: 'unconfirmed', required: { within_seconds: 300 }, evidence: [{ status: 'unconfirmed', late: true, elapsed_ms: 600_000 }] });
    expect(outcomeFindings(r)).toEqual(['outcome_unconfirmed']);
    expect(r.result).toBe('findings');
  });

  it('the answers of the outcome endpoints validate against their OpenAPI schemas', async () => {
    const doc = (await t.http.get('/docs-json')).body as { paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: Record<string, unknown> };
    const op = (path: string, method: string) => doc.paths[path][method];
    expect(op('/api/outcomes', 'post').operationId).toBe('reportOutcome');
    expect(op('/api/outcomes/{id}/verify', 'get').operationId).toBe('verifyOutcome');
    expect(op('/api/jobs/{job_id}/outcomes', 'get').operationId).toBe('exportJobOutcomes');
    expect(op('/outcome/{id}', 'get').operationId).toBe('getOutcomePage');
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const check = (path: string, method: string, status: number, body: unknown): void => {
      const schema = op(path, method).responses[String(status)]?.content?.['application/json']?.schema;
      expect([path, status, schema === undefined]).toEqual([path, status, false]);
      const validate = ajv.compile({ ...(schema as object), components: doc.components });
      expect([path, status, validate(body) ? null : ajv.errorsText(validate.errors)]).toEqual([path, status, null]);
    };
    const tl = await execute('job-out-contract');
    const outcome = outcomeFor({ name: 'contract', job_id: 'job-out-contract', receipt_id: tl[1].id });
    const created = await post('/api/outcomes', outcome, payments);
    check('/api/outcomes', 'post', 201, created.body);
    check('/api/outcomes', 'post', 200, (await post('/api/outcomes', outcome, payments)).body);
    check('/api/outcomes', 'post', 403, (await post('/api/outcomes', outcome, crm)).body);
    check('/api/outcomes', 'post', 409, (await post('/api/outcomes', { ...outcome, result: 'failed' }, payments)).body);
    check('/api/outcomes', 'post', 422, (await post('/api/outcomes', { ...outcome, output_hash: 'sha256:' + '0'.repeat(64) }, payments)).body);
    check('/api/outcomes/{id}/verify', 'get', 200, (await t.http.get(`/api/outcomes/${outcome.outcome_id}/verify`)).body);
    check('/api/outcomes/{id}/verify', 'get', 404, (await t.http.get('/api/outcomes/00000000-0000-4000-8000-000000000000/verify')).body);
    // The request schema accepts the report and refuses an unknown member.
    const request = ajv.compile({ $ref: '#/components/schemas/OutcomeReport', components: doc.components });
    expect([request(outcome), request({ ...outcome, supersedes: 'x' })]).toEqual([true, false]);
  });

  it('aer1 coverage --outcomes on the exports gives the same outcome evidence and digest of it as the server', async () => {
    const job = 'job-out-cli';
    const tl = await execute(job);
    await report(tl, { name: 'cli-settled' });
    await report(tl, { name: 'cli-reversed', result: 'reversed', observed_at: '2026-10-01T13:00:00Z' });
    const lookup = outcomeFor({ name: 'cli-crm', job_id: job, receipt_id: tl[0].id, system: 'CRM', effect: 'customer.read' });
    expect((await post('/api/outcomes', lookup, crm)).status).toBe(201);
    const { report: server } = await issue(job);

    const exported = await t.http.get(`/api/jobs/${job}/outcomes`).buffer(true).parse((res, cb) => {
      let s = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (s += c));
      res.on('end', () => cb(null, s));
    });
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect((exported.body as string).trimEnd().split('\n')).toHaveLength(3);
    const receipts = tl.map((e) => JSON.stringify(receiptFor(e))).join('\n') + '\n';
    const run = await cli([
      'coverage', '--json',
      '--plan', tmp.write('plan.json', paymentPlan(job)),
      '--timeline', tmp.write('timeline.json', tl),
      '--commitment', tmp.write('commitment.json', commitmentFor(tl)),
      '--receipts', tmp.write('receipts.ndjson', receipts),
      '--outcomes', tmp.write('outcomes.ndjson', exported.body as string),
    ]);
    expect(run.err).toBe('');
    expect(run.code).toBe(1);
    const offline = JSON.parse(run.out) as { report: CoverageReportContent; outcomes: { used: number; rejected: unknown[] } };
    expect(offline.outcomes).toEqual({ used: 3, rejected: [] });
    const outcomePart = (r: CoverageReportContent) => ({ actions: r.actions.map((a) => [a.action_id, a.status, a.outcome ?? null]), outcomes: r.outcomes, findings: r.findings.filter((f) => f.code.startsWith('outcome_')) });
    expect(outcomePart(offline.report)).toEqual(outcomePart(server));
    expect(canonicalDigest(outcomePart(offline.report))).toBe(canonicalDigest(outcomePart(server)));
    expect(pay(offline.report).outcome!.status).toBe('contradicted');
    expect(offline.report.outcomes!.information).toEqual([expect.objectContaining({ seq: 1, action_id: 'lookup' })]);
  });
});
