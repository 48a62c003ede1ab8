/**
 * What an erased record shows (issue 29), on SQLite and PostgreSQL: the
 * receipt, job and outcome pages and their machine verifiers after erasure
 * say "Content erased on <date> by <key name> (<legal basis>): <reason>",
 * name the erasure and its PayloadsErased event, keep the verdict recorded at
 * ingestion, show nothing green that cannot be re-checked (410 Gone from the
 * verifiers), and serve nothing of the erased content. Hostile erasure text
 * (markup, RTL override) stays escaped.
 */
import { createHash } from 'node:crypto';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { DatabaseService } from '../../src/database/database.service';
import { uuidFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

/** The personal data in every tool output of these jobs. */
const PERSONAL = 'Grace Brewster Hopper, IBAN DE89370400440532013000';
const REASON = 'customer request <script>alert(1)</script> \u202Egnp.exe';
const BASIS = 'GDPR Art. 17(1)(a) <b>bold</b>';

interface Built {
  entries: Record<string, unknown>[];
  receipts: Record<string, unknown>[];
  /** Every form of the content that must not be served once erased: the text, its base64, its output hash. */
  secrets: string[];
}

function build(job: string, n: number): Built {
  const entries: Record<string, unknown>[] = [];
  const receipts: Record<string, unknown>[] = [];
  const secrets: string[] = [PERSONAL];
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= n; seq++) {
    const bytes = Buffer.from(JSON.stringify({ customer: PERSONAL, job, seq }), 'utf8');
    const b64 = bytes.toString('base64');
    const hex = createHash('sha256').update(bytes).digest('hex');
    secrets.push(b64, hex);
    const id = uuidFor(`${job}/${seq}`);
    const e: Record<string, unknown> = { seq, job_id: job, id, tool: seq === 1 ? 'fetch_customer' : 'send_payment', provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: b64, prev_digest: prev };
    if (seq === n) e.close = true;
    prev = entryDigest(e)!;
    entries.push(e);
    receipts.push({ id, tool: e.tool, timestamp: '2026-10-01T12:00:00Z', canonical_bytes: b64, canonical_byte_length: bytes.length, hash_algorithm: 'sha256', output_hash: `sha256:${hex}`, provenance_class: 'EXECUTED BY LEDGER', status: 'ok', verification_status: 'execution_observed' });
  }
  return { entries, receipts, secrets };
}

describe.each(DIALECTS)('erased records\' pages and verifiers on %s', (dialect) => {
  jest.setTimeout(90_000);
  let t: TestApp;
  let payments: string;
  beforeAll(async () => {
    t = await startApp(dialect);
    payments = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const json = (path: string) => t.http.get(path).set('Accept', 'application/json');
  const page = (path: string) => t.http.get(path).set('Accept', 'text/html');
  /** An SVG badge's markup. */
  const svgOf = async (path: string): Promise<string> => {
    const r = await t.http.get(path).buffer(true).parse((res, cb) => {
      let d = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (d += c));
      res.on('end', () => cb(null, d));
    });
    expect(r.status).toBe(200);
    return r.body as string;
  };

  async function record(job: string, n: number, outcome = false): Promise<Built & { outcomeId: string | null; outcomeSecrets: string[] }> {
    const b = build(job, n);
    for (const r of b.receipts) expect((await post('/api/receipts', r, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, b.entries, t.keys.producer)).status).toBe(201);
    if (!outcome) return { ...b, outcomeId: null, outcomeSecrets: [] };
    const bytes = Buffer.from(JSON.stringify({ payee: PERSONAL, state: 'settled' }), 'utf8');
    const hex = createHash('sha256').update(bytes).digest('hex');
    const o = { outcome_id: uuidFor(`outcome/${job}`), job_id: job, receipt_id: b.entries[n - 1].id, effect: 'payment.settled', result: 'confirmed', observed_at: '2026-10-01T12:01:00Z', system: 'PAYMENTS', canonical_bytes: bytes.toString('base64'), output_hash: `sha256:${hex}` };
    expect((await post('/api/outcomes', o, payments)).status).toBe(201);
    return { ...b, outcomeId: o.outcome_id, outcomeSecrets: [bytes.toString('base64'), hex] };
  }

  /** No form of the erased content in any of `texts`. */
  function expectNoSecrets(texts: string[], secrets: string[]): void {
    for (const text of texts) for (const s of secrets) expect(text.includes(s) ? `${s.slice(0, 40)} served` : 'absent').toBe('absent');
  }

  /** The verdict block that leads a page: its lines, none green. */
  function expectNoGreenHeadline(html: string): void {
    const block = /<section class="verdict ([a-z]+)" id="verdict">([\s\S]*?)<\/section>/.exec(html);
    expect(block).not.toBeNull();
    // One page verdict: the log section's block has an id of its own.
    expect(html.match(/ id="verdict"/g)).toHaveLength(1);
    expect(block![1]).not.toBe('ok');
    expect(block![2]).not.toMatch(/class="line ok/);
  }

  const statement = (erasedAt: string) => `Content erased on ${erasedAt.slice(0, 10)} by test-privacy (${BASIS}): ${REASON}`;

  it('an erased receipt: verifier 410 `erased` with recorded_verdict and the erasure; page, record, raw and badge honest; no content', async () => {
    const b = await record('job-erased-receipt', 2);
    const id = (b.receipts[0].id as string).toLowerCase();
    const e = await post('/api/erasures', { receipt_ids: [id], reason: REASON, legal_basis: BASIS }, t.keys.privacy);
    expect(e.status).toBe(201);
    const sentence = statement(e.body.erased_at);

    const v = await t.http.get(`/api/receipts/${id}/verify`);
    expect(v.status).toBe(410);
    expect(v.body).toMatchObject({ id, verdict: 'erased', recorded_verdict: 'valid', recorded_reasons: [], reasons: [], checks: [], output_hash: null, declared_output_hash: null, position: expect.any(Number) });
    expect(v.body.erasure).toMatchObject({ erasure_id: e.body.erasure_id, url: `https://ledger.test/api/erasures/${e.body.erasure_id}`, erased_at: e.body.erased_at, erased_by: { name: 'test-privacy' }, reason: REASON, legal_basis: BASIS, erasure_position: e.body.erasure_position, statement: sentence });
    expect(v.body.erasure.erasure_log).toMatchObject({ position: e.body.erasure_position, leaf_index: e.body.erasure_position - 1 });
    expect(v.body.log).toMatchObject({ position: e.body.positions[0] });
    expect(v.body.statement.startsWith(sentence)).toBe(true);
    const old = await t.http.get(`/api/receipt/${id}/verify`);
    expect([old.status, old.body.verdict, old.headers.deprecation !== undefined]).toEqual([410, 'erased', true]);

    const rec = await t.http.get(`/api/receipts/${id}`);
    expect(rec.status).toBe(200);
    expect(rec.body).toMatchObject({ id, document: null, raw: null, erased: true, verdict_at_record: 'valid', output_hash: null });
    expect(rec.body.erasure.statement).toBe(sentence);
    const raw = await t.http.get(`/api/receipts/${id}/raw`);
    expect([raw.status, raw.body.error, raw.body.erasure?.erasure_id]).toEqual([410, 'content_erased', e.body.erasure_id]);
    // The listing says which receipts were erased (a new user read "verdict": "valid" there for an erased receipt).
    const listed = (await t.http.get('/api/receipts?limit=1000')).body.items as { id: string; erased: boolean; verdict: string; output_hash: string | null }[];
    expect(listed.find((x) => x.id === id)).toMatchObject({ erased: true, verdict: 'valid', output_hash: null });
    expect(listed.find((x) => x.id === (b.receipts[1].id as string).toLowerCase())).toMatchObject({ erased: false });

    const pj = await json(`/run/${id}`);
    expect(pj.status).toBe(200);
    expect(pj.body).toMatchObject({ receipt: null, raw: null, recorded_verdict: 'valid', verification: { verdict: 'erased', verification_status: 'erased', computed_output_hash: null, declared_output_hash: null, checks: [] } });
    expect(pj.body.erased).toMatchObject({ erasure_id: e.body.erasure_id, statement: sentence, erasure_position: e.body.erasure_position });
    const ph = await page(`/run/${id}`);
    expect(ph.status).toBe(200);
    expectNoGreenHeadline(ph.text);
    // Escaped: the markup and the override are text, never elements.
    expect(ph.text).not.toContain('<script>alert');
    expect(ph.text).not.toContain('<b>bold</b>');
    expect(ph.text).toContain('customer request &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(ph.text).toContain('GDPR Art. 17(1)(a) &lt;b&gt;bold&lt;/b&gt;');
    expect(ph.text).toMatch(/id="recorded-verdict">(<bdi>)?valid</);
    expect(ph.text).toContain(`ledger position ${e.body.erasure_position}`);
    expect(ph.text).toContain(`/api/erasures/${e.body.erasure_id}`);
    expect(ph.text).not.toMatch(/Commitment: VALID/);

    const svg = await svgOf(`/badge/receipt/${id}.svg`);
    expect(svg).toContain('content ERASED');
    expect(svg).not.toContain('\u2713');

    // A workflow cannot be assembled from an erased receipt: 422 content_erased, never a 500.
    const w = await post('/api/workflows/assemble', { session_id: 's-1', goal: 'pay', status: 'completed', receipt_ids: [id, (b.receipts[1].id as string).toLowerCase()], output: 'done' }, t.keys.producer);
    expect([w.status, w.body.error, w.body.erased]).toEqual([422, 'content_erased', [id]]);

    expectNoSecrets([JSON.stringify(v.body), JSON.stringify(old.body), JSON.stringify(w.body), JSON.stringify(rec.body), JSON.stringify(raw.body), JSON.stringify(pj.body), ph.text, svg], b.secrets.filter((s) => s !== b.secrets[3] && s !== b.secrets[4]));
  });

  it('a job with one erased entry: PARTLY ERASED, every link it can re-checked, the others named; never valid', async () => {
    const job = 'job-erased-entry';
    await record(job, 4);
    const [{ position }] = await db<{ position: number | string }>(`SELECT position FROM timeline_entries WHERE job_id = ? AND seq = 2`, [job]);
    const e = await post('/api/erasures', { positions: [Number(position)], reason: REASON, legal_basis: BASIS }, t.keys.privacy);
    expect(e.status).toBe(201);
    const sentence = statement(e.body.erased_at);
    const headline = 'Chain: PARTLY ERASED \u2014 1 of 4 entries erased; links checked: 1, not re-checkable: 2';

    const v = await t.http.get(`/api/jobs/${job}/verify`);
    expect(v.status).toBe(410);
    expect(v.body).toMatchObject({ assessment: 'partly_erased', verdict: 'partly_erased', headline, entry_count: 4, reasons: [], closed: true, final_entry_digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(v.body.erased).toMatchObject({ entries: 1, entry_count: 4, seqs: [2], links_rechecked: 1, links_not_rechecked: 2, commitments: [] });
    // The commitment the ledger issued on close matches count and final digest, but binds nothing: the chain cannot be re-checked whole.
    expect([v.body.truncation_excluded, v.body.commitment_assessment]).toEqual([false, 'non_binding']);
    expect(v.body.erased.erasures.map((x: { statement: string }) => x.statement)).toEqual([sentence]);
    expect(v.body.erased.statement).toContain('still prove that every entry was recorded, in order');
    const links = v.body.checks.find((c: { name: string }) => c.name === 'links');
    expect(links).toEqual({ name: 'links', ok: null, detail: '1 links recomputed under S7.1 and hold; not re-checkable (an entry they join was erased): entry 2, entry 3' });
    expect(v.body.checks.find((c: { name: string }) => c.name === 'erased')).toEqual({ name: 'erased', ok: null, detail: 'content erased (issue 29), not re-checked: entry 2 (seq 2)' });
    // The content checks hold for the entries still held only, and say so.
    expect(v.body.checks.find((c: { name: string }) => c.name === 'entries.canonical_bytes')).toEqual({ name: 'entries.canonical_bytes', ok: true, detail: 'holds for the 3 entries still held; 1 erased entry not re-checked' });

    const pj = await json(`/jobs/${job}`);
    expect(pj.status).toBe(200);
    expect(pj.body).toMatchObject({ verdict: 'partly_erased', assessment: 'partly_erased', erased: { entries: 1, links_rechecked: 1, links_not_rechecked: 2 } });
    expect(pj.body.entries.map((x: { seq: number; erased: boolean }) => [x.seq, x.erased])).toEqual([[1, false], [2, true], [3, false], [4, false]]);
    expect(pj.body.erasures.map((x: { statement: string }) => x.statement)).toEqual([sentence]);
    const ph = await page(`/jobs/${job}`);
    expect(ph.status).toBe(200);
    expectNoGreenHeadline(ph.text);
    expect(ph.text).toContain('Chain: PARTLY ERASED \u2014 1 of 4 entries erased; links checked: 1, not re-checkable: 2');
    expect(ph.text).not.toMatch(/Chain valid|Chain VALID/);
    expect(ph.text).toContain('customer request &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(ph.text).not.toContain('<script>alert');

    const tl = await t.http.get(`/api/jobs/${job}/timeline`);
    expect(tl.status).toBe(200);
    expect(tl.body.entries[1]).toMatchObject({ seq: 2, erased: true, entry_digest: null, tool: 'send_payment', erasure: { erasure_id: e.body.erasure_id, statement: sentence } });
    expect(tl.body.entries[1].canonical_bytes).toBeUndefined();
    expect(await svgOf(`/badge/job/${job}.svg`)).toContain('PARTLY ERASED');
    const secrets = build(job, 4).secrets;
    // Entry 2's bytes and hash are gone everywhere (entries 1, 3 and 4 keep theirs: only entry 2 was erased).
    expectNoSecrets([JSON.stringify(v.body), JSON.stringify(pj.body), ph.text, JSON.stringify(tl.body)], [secrets[3], secrets[4]]);
  });

  it('a job erased by id: entries, commitment, receipts and outcome all say so; outcome verifier 410', async () => {
    const job = 'job-erased-all';
    const b = await record(job, 3, true);
    const e = await post('/api/erasures', { job_ids: [job], reason: REASON, legal_basis: BASIS }, t.keys.privacy);
    expect(e.status).toBe(201);
    const sentence = statement(e.body.erased_at);

    const v = await t.http.get(`/api/jobs/${job}/verify`);
    expect(v.status).toBe(410);
    expect(v.body).toMatchObject({ assessment: 'partly_erased', verdict: 'partly_erased', headline: 'Chain: ERASED \u2014 3 of 3 entries erased; links checked: 0, not re-checkable: 2', final_entry_digest: null });
    expect(v.body.erased.seqs).toEqual([1, 2, 3]);
    // Its endpoint says why it cannot be given (was: 409 timeline_not_valid, "does not verify").
    const end = await t.http.get(`/api/jobs/${job}/endpoint`);
    expect([end.status, end.body.error, end.body.message]).toEqual([410, 'content_erased', `3 of 3 entries of job ${job} were erased: its endpoint can no longer be recomputed (see /api/jobs/${job}/verify)`]);
    // The commitment the ledger issued on close was erased with the job: named apart, not judged.
    expect(v.body.erased.commitments).toEqual([{ id: expect.any(String), recorded_at: expect.any(String), position: expect.any(Number) }]);
    expect(v.body.commitments).toEqual([]);
    // Recorded, then erased: never "none is recorded".
    expect(v.body.statement).toBe('Truncation is not excluded (S7.3): 1 endpoint commitment(s) were recorded for this job and their content was erased, so none can be judged.');
    const ph = await page(`/jobs/${job}`);
    expect(ph.status).toBe(200);
    expectNoGreenHeadline(ph.text);
    expect(ph.text).toContain('3 of 3 entries erased');
    expect(ph.text).toContain('1 endpoint commitment(s) were recorded for this job; their content was erased');
    expect(ph.text).not.toContain('No endpoint commitment is recorded for this job.');

    const o = await t.http.get(`/api/outcomes/${b.outcomeId}/verify`);
    expect(o.status).toBe(410);
    expect(o.body).toMatchObject({ outcome_id: b.outcomeId, verdict: 'erased', recorded_verdict: 'valid', output_hash: null, result: 'confirmed', system: 'PAYMENTS', erasure: { erasure_id: e.body.erasure_id, statement: sentence, erasure_position: e.body.erasure_position } });
    const oj = await json(`/outcome/${b.outcomeId}`);
    expect(oj.status).toBe(200);
    expect(oj.body).toMatchObject({ raw: null, verification: { verdict: 'erased', computed_output_hash: null, declared_output_hash: null }, erased: { statement: sentence } });
    const oh = await page(`/outcome/${b.outcomeId}`);
    expect(oh.status).toBe(200);
    expectNoGreenHeadline(oh.text);
    expect(oh.text).toContain('customer request &lt;script&gt;alert(1)&lt;/script&gt;');

    const answers = [JSON.stringify(v.body), ph.text, JSON.stringify(o.body), JSON.stringify(oj.body), oh.text];
    for (const r of b.receipts) {
      const id = (r.id as string).toLowerCase();
      const rv = await t.http.get(`/api/receipts/${id}/verify`);
      expect([rv.status, rv.body.verdict, rv.body.erasure?.erasure_id]).toEqual([410, 'erased', e.body.erasure_id]);
      const rp = await page(`/run/${id}`);
      expectNoGreenHeadline(rp.text);
      answers.push(JSON.stringify(rv.body), rp.text);
    }
    const tl = await t.http.get(`/api/jobs/${job}/timeline`);
    expect(tl.status).toBe(200);
    answers.push(JSON.stringify(tl.body));
    expectNoSecrets(answers, [...b.secrets, ...b.outcomeSecrets]);
  });

  const db = <T>(sql: string, params: unknown[]) => t.app.get(DatabaseService).query<T>(sql, params);

  it('a workflow verified, then a step receipt erased: verified again, the step is erased (410 partly_erased), never the cached verified answer', async () => {
    const b = await record('job-erased-workflow-step', 2);
    const ids = b.receipts.map((r) => (r.id as string).toLowerCase());
    const w = await post('/api/workflows/assemble', { session_id: 's-2', goal: 'pay', status: 'completed', receipt_ids: ids, output: 'done' }, t.keys.producer);
    expect(w.status).toBe(201);
    const wid = w.body.workflow_id as string;
    const before = await json(`/api/workflows/${wid}/verify`);
    expect([before.status, before.body.verdict, before.body.steps.map((s: { receipt: string }) => s.receipt)]).toEqual([200, 'valid', ['verified', 'verified']]);
    const e = await post('/api/erasures', { receipt_ids: [ids[0]], reason: 'customer request 31', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect(e.status).toBe(201);
    const after = await json(`/api/workflows/${wid}/verify`);
    expect([after.status, after.body.verdict, after.body.verification_status, after.body.reasons, after.body.steps.map((s: { receipt: string }) => s.receipt)]).toEqual([410, 'partly_erased', 'erased', [], ['erased', 'verified']]);
    const check = after.body.checks.find((c: { name: string }) => c.name === 'step_receipts.erased');
    expect(check).toEqual({ name: 'step_receipts.erased', ok: null, detail: `content erased (issue 29), not re-checked: step 1 (receipt ${b.receipts[0].id as string}): Content erased on ${(e.body.erased_at as string).slice(0, 10)} by test-privacy (GDPR Art. 17(1)(a)): customer request 31` });
    const p = await page(`/workflow/${wid}`);
    expect(p.status).toBe(200);
    expect(p.text).toContain('Workflow PARTLY ERASED: 1 step receipt(s) erased, not re-checked');
    expect(p.text).toContain('erased: not re-checked');
    expectNoGreenHeadline(p.text);
    expect(await svgOf(`/badge/workflow/${wid}.svg`)).toContain('PARTLY ERASED');
    // A workflow naming the erased receipt is not recorded (422 content_erased), never a 500.
    const again = await post('/api/workflows', { ...w.body.workflow, workflow_id: uuidFor('wf-again'), receipt_id: uuidFor('wf-again-r') }, t.keys.producer);
    expect([again.status, again.body.error, again.body.erased]).toEqual([422, 'content_erased', [ids[0]]]);
  });
});
