/**
 * Issue 12, API contract: plural verify paths (singular ones kept, marked
 * deprecated), Location on every 201, RateLimit-* headers, cursor lists,
 * GET /api/receipts/{id}, and PUT /api/jobs/{id}/timeline as NDJSON.
 */
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { timelineText } from '../../src/cli/generate';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';

const RECEIPT = vector('receipt-core-valid') as { id: string };
const WF = vector('workflow-valid-3') as { workflow: { workflow_id: string }; step_receipts: unknown[] };
const DEPRECATION = '@1796083200';

describe.each(DIALECTS)('API names, lists and NDJSON on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  const send = (method: 'post' | 'put', path: string, body: string, key: string, type = 'application/json') =>
    t.http[method](path).set('Authorization', `Bearer ${key}`).set('Content-Type', type).send(body);
  const rows = (sql: string, params: unknown[] = []) => t.app.get(DatabaseService).query<Record<string, unknown>>(sql, params);

  it('answers 201 with Location on every create, and no Location on 200 for the same bytes again', async () => {
    const r = await send('post', '/api/receipts', JSON.stringify(RECEIPT), t.keys.producer);
    expect(r.status).toBe(201);
    expect(r.headers.location).toBe(`https://ledger.test/api/receipts/${RECEIPT.id}`);
    expect(r.body.verify_url).toBe(`https://ledger.test/api/receipts/${RECEIPT.id}/verify`);
    const again = await send('post', '/api/receipts', JSON.stringify(RECEIPT), t.keys.producer);
    expect(again.status).toBe(200);
    expect(again.headers.location).toBeUndefined();
    const corr = await send('post', `/api/receipts/${RECEIPT.id}/corrections`, JSON.stringify({ ...RECEIPT, id: 'c0ffee00-0000-4000-8000-000000000001' }), t.keys.producer);
    if (corr.status === 201) expect(corr.headers.location).toBe('https://ledger.test/api/receipts/c0ffee00-0000-4000-8000-000000000001');
    else expect(corr.body.error).toBe('verification_failed'); // the correction must verify on its own; Location only on 201

    const tl = buildTimeline('job-loc', EIGHT_STEPS);
    const e = await send('post', '/api/jobs/job-loc/entries', JSON.stringify(tl.slice(0, 2)), t.keys.producer);
    expect([e.status, e.headers.location]).toEqual([201, 'https://ledger.test/api/jobs/job-loc/timeline']);
    const full = buildTimeline('job-loc2', EIGHT_STEPS);
    const imp = await send('put', '/api/jobs/job-loc2/timeline', JSON.stringify(full), t.keys.producer);
    expect([imp.status, imp.headers.location]).toEqual([201, 'https://ledger.test/api/jobs/job-loc2/timeline']);
    const com = await send('post', '/api/jobs/job-loc2/commitments', JSON.stringify(commitmentFor(full)), t.keys.producer);
    expect([com.status, com.headers.location]).toEqual([201, 'https://ledger.test/api/jobs/job-loc2/timeline']);

    for (const s of WF.step_receipts) expect((await send('post', '/api/receipts', JSON.stringify(s), t.keys.producer)).status).toBe(201);
    const wf = await send('post', '/api/workflows', JSON.stringify(WF.workflow), t.keys.producer);
    expect([wf.status, wf.headers.location]).toEqual([201, `https://ledger.test/workflow/${WF.workflow.workflow_id}`]);
    const asm = await send('post', '/api/workflows/assemble', JSON.stringify({ session_id: 's', goal: 'g', status: 'ok', receipt_ids: [RECEIPT.id], output: 'o' }), t.keys.producer);
    expect([asm.status, asm.headers.location]).toEqual([201, asm.body.url]);

    const plan = await send('post', '/api/plans', JSON.stringify(eightStepPlan('job-loc2')), t.keys.compliance);
    expect([plan.status, plan.headers.location]).toEqual([201, `https://ledger.test/api/plans/${plan.body.plan_id}/versions/1`]);
    const am = await send('post', `/api/plans/${plan.body.plan_id}/amendments`, JSON.stringify({ ...eightStepPlan('job-loc2'), supersedes_version: 1 }), t.keys.compliance);
    expect([am.status, am.headers.location]).toEqual([201, `https://ledger.test/api/plans/${plan.body.plan_id}/versions/2`]);
    expect((await t.http.get(new URL(am.headers.location).pathname).set('Authorization', `Bearer ${t.keys.auditor}`)).body.version).toBe(2);
    const cov = await send('post', '/api/coverage-reports', JSON.stringify({ job_id: 'job-loc2' }), t.keys.auditor);
    expect([cov.status, cov.headers.location]).toEqual([201, `https://ledger.test/api/coverage-reports/${cov.body.report_id}`]);
    const key = await send('post', '/api/keys', JSON.stringify({ name: 'loc', role: 'producer' }), t.keys.admin);
    expect([key.status, key.headers.location]).toEqual([201, `https://ledger.test/api/keys/${key.body.id}`]);
    // The Location answers GET (the key without its secret) for an admin, and only for an admin.
    const got = await t.http.get(new URL(key.headers.location).pathname).set('Authorization', `Bearer ${t.keys.admin}`);
    expect([got.status, got.body.id, got.body.name, got.body.role, got.body.revoked_at, 'key' in got.body, JSON.stringify(got.body).includes(key.body.key)]).toEqual([200, key.body.id, 'loc', 'producer', null, false, false]);
    expect((await t.http.get(new URL(key.headers.location).pathname).set('Authorization', `Bearer ${t.keys.auditor}`)).status).toBe(403);
    // A UUID in any case names the same key (as other UUID paths do).
    expect((await t.http.get(`/api/keys/${String(key.body.id).toUpperCase()}`).set('Authorization', `Bearer ${t.keys.admin}`)).body.id).toBe(key.body.id);
    const unknown = await t.http.get('/api/keys/no-such-key').set('Authorization', `Bearer ${t.keys.admin}`);
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
  });

  it('serves the verifiers at plural paths; the singular paths answer the same with Deprecation and a successor Link', async () => {
    const now = await t.http.get(`/api/receipts/${RECEIPT.id}/verify`);
    expect(now.status).toBe(200);
    expect(now.headers.deprecation).toBeUndefined();
    const old = await t.http.get(`/api/receipt/${RECEIPT.id}/verify`);
    expect(old.status).toBe(200);
    expect(old.body).toEqual(now.body);
    expect(old.headers.deprecation).toBe(DEPRECATION);
    expect(old.headers.link).toBe(`<https://ledger.test/api/receipts/${RECEIPT.id}/verify>; rel="successor-version"`);
    const id = WF.workflow.workflow_id;
    const wNow = await t.http.get(`/api/workflows/${id}/verify`);
    expect([wNow.status, wNow.body.verdict, wNow.headers.deprecation]).toEqual([200, 'valid', undefined]);
    const wOld = await t.http.get(`/api/workflow/${id.toUpperCase()}/verify`);
    expect(wOld.status).toBe(200);
    expect(wOld.body.verdict).toBe('valid');
    expect(wOld.headers.deprecation).toBe(DEPRECATION);
    expect(wOld.headers.link).toBe(`<https://ledger.test/api/workflows/${id}/verify>; rel="successor-version"`);
    // Errors on the old paths are marked too (a client learns of the move from any answer).
    const gone = await t.http.get('/api/receipt/00000000-0000-4000-8000-000000000000/verify');
    expect([gone.status, gone.body.error, gone.headers.deprecation]).toEqual([404, 'not_found', DEPRECATION]);
    // An id that is not header-safe is percent-encoded in the Link, never a 500.
    const odd = await t.http.get('/api/receipt/%E2%80%AE/verify');
    expect([odd.status, odd.headers.link]).toEqual([404, '<https://ledger.test/api/receipts/%e2%80%ae/verify>; rel="successor-version"']);
    // `verdict` is the overall result everywhere: the ledger verifier has it too (ok stays, deprecated).
    const lv = await t.http.get('/api/ledger/verify');
    expect([lv.body.verdict, lv.body.ok]).toEqual(['valid', true]);
  });

  it('lists receipts (metadata only), jobs, workflows, plans, coverage reports and batches by cursor', async () => {
    const all = await t.http.get('/api/receipts?limit=1000');
    expect(all.status).toBe(200);
    const ids = (all.body.items as { id: string }[]).map((r) => r.id);
    const stored = await rows('SELECT id FROM receipts ORDER BY position');
    expect(ids).toEqual(stored.map((r) => r.id));
    expect(all.body.next).toBeNull();
    expect(JSON.stringify(all.body)).not.toContain('canonical_bytes');
    // `erased` (issue 29): the listing says which receipts' content was erased.
    expect(Object.keys(all.body.items[0]).sort()).toEqual(['erased', 'id', 'output_hash', 'position', 'provenance_class', 'recorded_at', 'recorded_by', 'status', 'tool', 'url', 'verdict']);
    expect(all.body.items[0].erased).toBe(false);
    // Walk two at a time: the same ids, in order, and the last page says so.
    const walked: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 20; i++) {
      const p: { body: { items: { id: string }[]; next: string | null } } = await t.http.get(`/api/receipts?limit=2${after ? `&after=${after}` : ''}`);
      walked.push(...p.body.items.map((r) => r.id));
      after = p.body.next;
      if (after === null) break;
    }
    expect(walked).toEqual(ids);
    for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'after=-1', 'after=abc']) {
      const r = await t.http.get(`/api/receipts?${bad}`);
      expect([bad, r.status, r.body.error]).toEqual([bad, 400, 'invalid_query']);
    }
    const jobs = await t.http.get('/api/jobs?limit=1');
    expect(jobs.body.items.map((j: { job_id: string }) => j.job_id)).toEqual(['job-loc']);
    const jobs2 = await t.http.get(`/api/jobs?after=${jobs.body.next}`);
    expect(jobs2.body).toMatchObject({ items: [{ job_id: 'job-loc2', source: 'import', entry_count: 8, closed: true }], next: null });
    const wfs = await t.http.get('/api/workflows');
    expect(wfs.body.items).toHaveLength(2);
    expect(wfs.body.items[0]).toMatchObject({ workflow_id: WF.workflow.workflow_id, step_count: 3, assembled: false });
    expect(wfs.body.items[1]).toMatchObject({ step_count: 1, assembled: true });
    // Plans: compliance and auditor keys only.
    expect((await t.http.get('/api/plans')).status).toBe(401);
    expect((await t.http.get('/api/plans').set('Authorization', `Bearer ${t.keys.producer}`)).status).toBe(403);
    const plans = await t.http.get('/api/plans?limit=5').set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(plans.body).toMatchObject({ items: [{ subject: { job_id: 'job-loc2' }, current_version: 2 }], next: null });
    expect((await t.http.get('/api/plans?job_id=job-loc2&limit=5').set('Authorization', `Bearer ${t.keys.auditor}`)).status).toBe(400);
    const reports = await t.http.get('/api/coverage-reports');
    expect(reports.body).toMatchObject({ items: [{ subject: { job_id: 'job-loc2' }, plan_version: 2 }], next: null });
    // One job's or workflow's reports: the subject filter, paged the same way.
    expect((await t.http.get('/api/coverage-reports?job_id=job-loc2&limit=1')).body).toMatchObject({ items: [{ subject: { job_id: 'job-loc2' } }], next: null });
    expect((await t.http.get('/api/coverage-reports?job_id=job-none')).body).toEqual({ items: [], next: null });
    expect((await t.http.get(`/api/coverage-reports?workflow_id=${WF.workflow.workflow_id.toUpperCase()}`)).body).toEqual({ items: [], next: null });
    for (const bad of ['job_id=a&workflow_id=' + WF.workflow.workflow_id, 'workflow_id=not-a-uuid', 'job_id=']) {
      const r = await t.http.get(`/api/coverage-reports?${bad}`);
      expect([bad, r.status, r.body.error]).toEqual([bad, 400, 'invalid_query']);
    }
    // Batches: auditor keys only.
    const b = await send('post', '/api/verification-batches', JSON.stringify({ scope: 'all' }), t.keys.auditor);
    expect(b.status).toBe(202);
    expect((await t.http.get('/api/verification-batches')).status).toBe(401);
    expect((await t.http.get('/api/verification-batches').set('Authorization', `Bearer ${t.keys.producer}`)).status).toBe(403);
    const batches = await t.http.get('/api/verification-batches').set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(batches.body.items.map((x: { batch_id: string }) => x.batch_id)).toEqual([b.body.batch_id]);
  });

  it('GET /api/receipts/{id}: the stored record, withholding canonical bytes of a metadata publication from all but auditors', async () => {
    const r = await t.http.get(`/api/receipts/${RECEIPT.id.toUpperCase()}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: RECEIPT.id, verdict_at_record: 'valid', reasons_at_record: [], canonical_bytes_withheld: false, publication: 'full', form: 'core' });
    expect(r.body.raw).toBe(JSON.stringify(RECEIPT));
    expect(r.body.document).toEqual(RECEIPT);
    expect((await t.http.get('/api/receipts/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await t.http.get('/api/receipts/not-a-uuid')).status).toBe(404);

    const quiet = (await t.app.get(ApiKeysService).create('quiet', 'producer', { publication: 'metadata' })).key;
    const secret = vector('receipt-core-observed') as { id: string; canonical_bytes: string };
    expect((await send('post', '/api/receipts', JSON.stringify(secret), quiet)).status).toBe(201);
    const pub = await t.http.get(`/api/receipts/${secret.id}`);
    expect(pub.body).toMatchObject({ canonical_bytes_withheld: true, raw: null, publication: 'metadata' });
    expect(pub.body.document.canonical_bytes).toBe('(withheld)');
    expect(JSON.stringify(pub.body)).not.toContain(secret.canonical_bytes);
    const aud = await t.http.get(`/api/receipts/${secret.id}`).set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(aud.body).toMatchObject({ canonical_bytes_withheld: false, raw: JSON.stringify(secret) });
    expect(aud.headers.vary).toContain('Authorization');
    const prod = await t.http.get(`/api/receipts/${secret.id}`).set('Authorization', `Bearer ${t.keys.producer}`);
    expect(prod.body.canonical_bytes_withheld).toBe(true);
  });

  describe('PUT /api/jobs/{id}/timeline as NDJSON', () => {
    const entries = buildTimeline('job-nd', EIGHT_STEPS);
    // Each line's exact text is the entry's text: vary the member order and spacing to prove nothing is re-serialized.
    const lines = entries.map((e, k) => (k % 2 === 0 ? JSON.stringify(e) : JSON.stringify(Object.fromEntries(Object.entries(e).reverse()), null, 1).replace(/\n/g, '')));
    const ndjson = lines.join('\r\n') + '\r\n\r\n';

    it('imports the lines byte for byte, like the equivalent JSON array', async () => {
      const r = await send('put', '/api/jobs/job-nd/timeline', ndjson, t.keys.producer, 'application/x-ndjson');
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ job_id: 'job-nd', verdict: 'valid', entry_count: 8, closed: true });
      const stored = await rows('SELECT raw FROM timeline_entries WHERE job_id = ? ORDER BY seq', ['job-nd']);
      expect(stored.map((s) => s.raw)).toEqual(lines);
      const ev = await rows("SELECT data FROM events WHERE stream_id = 'timeline:job-nd'");
      expect(JSON.parse(ev[0].data as string)).toMatchObject({ raw: ndjson, format: 'ndjson', entry_count: 8 });
      // The JSON array of the same entry texts gives the same timeline rows.
      const arr = buildTimeline('job-arr', EIGHT_STEPS);
      expect((await send('put', '/api/jobs/job-arr/timeline', `[${arr.map((e) => JSON.stringify(e)).join(',')}]`, t.keys.producer)).status).toBe(201);
      const a = await t.http.get('/api/jobs/job-arr/verify');
      const n = await t.http.get('/api/jobs/job-nd/verify');
      expect([n.status, n.body.verdict, n.body.entry_count, n.body.closed]).toEqual([a.status, a.body.verdict, a.body.entry_count, a.body.closed]);
      const tl = await t.http.get('/api/jobs/job-nd/timeline');
      expect(tl.body.entries.map((e: { entry_digest: string }) => e.entry_digest)).toEqual((await t.http.get('/api/jobs/job-nd/timeline')).body.entries.map((e: { entry_digest: string }) => e.entry_digest));
      expect(tl.body.head.entry_digest).toBe(n.body.final_entry_digest);
    });

    it('the same NDJSON again is 200; other bytes are 409 timeline_exists; a bad line is 400 naming the entry, nothing written', async () => {
      const again = await send('put', '/api/jobs/job-nd/timeline', ndjson, t.keys.producer, 'application/x-ndjson');
      expect([again.status, again.body.verdict]).toEqual([200, 'valid']);
      const asArray = await send('put', '/api/jobs/job-nd/timeline', `[${lines.join(',')}]`, t.keys.producer);
      expect([asArray.status, asArray.body.error]).toEqual([409, 'timeline_exists']);
      const head = (await t.http.get('/api/ledger/head')).body.position;
      const bad = await send('put', '/api/jobs/job-bad/timeline', `${lines[0]}\n{"seq": 2,\n`, t.keys.producer, 'application/x-ndjson');
      expect([bad.status, bad.body.error, bad.body.entry]).toEqual([400, 'malformed_json', 2]);
      const dup = await send('put', '/api/jobs/job-bad/timeline', `{"seq":1,"seq":1}\n`, t.keys.producer, 'application/x-ndjson');
      expect([dup.status, dup.body.error]).toEqual([400, 'duplicate_member']);
      const empty = await send('put', '/api/jobs/job-bad/timeline', '\n\n', t.keys.producer, 'application/x-ndjson');
      expect([empty.status, empty.body.error]).toEqual([400, 'empty_body']);
      const invalid = await send('put', '/api/jobs/job-bad/timeline', lines.slice(1).join('\n'), t.keys.producer, 'application/x-ndjson');
      expect([invalid.status, invalid.body.error]).toEqual([422, 'verification_failed']);
      expect((await t.http.get('/api/ledger/head')).body.position).toBe(head);
    });

    it('accepts what `aer1 generate timeline` writes, as it writes it', async () => {
      const text = [...timelineText({ entries: 300, job: 'job-gen', format: 'ndjson' })].join('');
      const r = await send('put', '/api/jobs/job-gen/timeline', text, t.keys.producer, 'application/x-ndjson');
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ verdict: 'valid', entry_count: 300, closed: true });
      expect((await t.http.get('/api/jobs/job-gen/verify')).body.verdict).toBe('valid');
    });

    it('coverage reads an NDJSON import, and the projections rebuild to the same rows', async () => {
      for (const e of entries) await send('post', '/api/receipts', JSON.stringify(receiptFor(e)), t.keys.producer);
      expect((await send('post', '/api/plans', JSON.stringify(eightStepPlan('job-nd')), t.keys.compliance)).status).toBe(201);
      const cov = await send('post', '/api/coverage-reports', JSON.stringify({ job_id: 'job-nd' }), t.keys.auditor);
      expect(cov.status).toBe(201);
      const report = (await t.http.get(`/api/coverage-reports/${cov.body.report_id}`)).body.report;
      expect(report.integrity).toMatchObject({ kind: 'timeline', recorded: true, verdict: 'valid', entry_count: 8 });
      expect(report.counts).toMatchObject({ expected_actions: 8, covered: 8, missing: 0 }); // every entry read from the NDJSON text
      const before = await rows('SELECT job_id, seq, raw, entry_digest FROM timeline_entries ORDER BY job_id, seq');
      await t.app.get(LedgerService).rebuildProjections();
      expect(await rows('SELECT job_id, seq, raw, entry_digest FROM timeline_entries ORDER BY job_id, seq')).toEqual(before);
      expect((await t.http.get('/api/ledger/verify')).body.verdict).toBe('valid');
    });
  });
});

describe('RateLimit headers (IETF draft) on public reads', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite', { VERIFY_RATE_LIMIT: '12' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('says the limit, what remains (by weight) and when the window resets; 429 says 0 remain', async () => {
    const a = await t.http.get('/api/ledger/head');
    expect(a.headers['ratelimit-limit']).toBe('12');
    expect(a.headers['ratelimit-remaining']).toBe('11');
    expect(a.headers['ratelimit-policy']).toBe('12;w=60');
    expect(Number(a.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(Number(a.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    const b = await t.http.get('/api/jobs/none/verify'); // weight 5
    expect(b.headers['ratelimit-remaining']).toBe('6');
    await t.http.get('/api/jobs/none/verify');
    const c = await t.http.get('/api/jobs/none/verify');
    expect(c.status).toBe(429);
    expect(c.body.error).toBe('rate_limited');
    expect(c.headers['ratelimit-remaining']).toBe('0');
    expect(Number(c.headers['retry-after'])).toBeGreaterThan(0);
    // Writes are not public reads: no budget headers.
    const w = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(RECEIPT));
    expect(w.status).toBe(201);
    expect(w.headers['ratelimit-limit']).toBeUndefined();
  });
});
