/**
 * Security review of erasure (issue 29), 2026-12-02: POST /api/erasures and
 * GET /api/erasures/:id attacked as a hostile user (roles, bodies, ids,
 * concurrent requests, races with appends, oracles on erased content) on
 * SQLite and PostgreSQL. Each test asserts the correct behaviour; the
 * operator's attacks (rows changed behind the ledger, forged PayloadsErased
 * events, rebuilds) are in erasure-operator-attack.e2e-spec.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { ZERO_DIGEST } from '../../src/core/aer1';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { openSse } from '../helpers/sse';
import { DIALECTS, digestOf, expectNoPartialErasure, Ledger, payloadsErased, startLedger, verify } from './erasure-fixtures';
import { call, freshReceipt, leaksInternals, makeEntry, waitUntil } from './helpers';

const WHY = { reason: 'customer request 4711', legal_basis: 'GDPR Art. 17(1)(a)' };

describe.each(DIALECTS)('erasure under attack on %s', (dialect) => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-erasure-attack-'));
  let l: Ledger;
  beforeAll(async () => {
    l = await startLedger(dialect, dir, 'attack');
  });
  afterAll(async () => {
    await l.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    // Whatever a test did, no payload is gone without a PayloadsErased event naming it, and none is named twice.
    await expectNoPartialErasure(l.db);
  });

  it('only privacy and admin keys erase: producer, compliance, auditor and outcome keys 403, no key or a revoked privacy key 401', async () => {
    const job = await l.execute('roles');
    const body = { receipt_ids: [job.receiptIds[0]], ...WHY };
    for (const key of [l.t.keys.producer, l.t.keys.compliance, l.t.keys.auditor, l.outcomeKey]) {
      const r = await l.erase(body, key);
      expect([r.status, r.body?.error]).toEqual([403, 'forbidden_role']);
    }
    expect((await call(l.base, 'POST', '/api/erasures', { body: JSON.stringify(body) })).status).toBe(401);
    expect((await call(l.base, 'POST', '/api/erasures', { key: 'not-a-key', body: JSON.stringify(body) })).status).toBe(401);
    const keys = l.t.app.get(ApiKeysService);
    const revoked = await keys.create('revoked-dpo', 'privacy');
    await keys.revoke(revoked.id);
    expect((await l.erase(body, revoked.key)).status).toBe(401);
    expect(await payloadsErased(l.db)).toEqual([]);
    const ok = await l.erase(body, l.t.keys.admin);
    expect(ok.status).toBe(201);
    expect((await l.get(`/api/erasures/${ok.body.erasure_id}`)).body.erased_by).toBe('test-admin');
  });

  it('hostile bodies are refused with a reason code, never 500, and erase nothing', async () => {
    const job = await l.execute('hostile-bodies');
    const id = job.receiptIds[0];
    const before = (await payloadsErased(l.db)).length;
    const bodies: [string, string, number[]][] = [
      ['null', 'null', [422]],
      ['array', '[]', [422]],
      ['string', '"x"', [422]],
      ['not JSON', '{"receipt_ids": [', [400]],
      ['position as string', JSON.stringify({ positions: ['5'], ...WHY }), [422]],
      ['position 0', JSON.stringify({ positions: [0], ...WHY }), [422]],
      ['negative position', JSON.stringify({ positions: [-1], ...WHY }), [422]],
      ['fractional position', JSON.stringify({ positions: [1.5], ...WHY }), [422]],
      ['position 1e308', `{"positions":[1e308],"reason":"r","legal_basis":"b"}`, [422]],
      ['position 1e400 (Infinity)', `{"positions":[1e400],"reason":"r","legal_basis":"b"}`, [422]],
      ['position beyond 2^53', `{"positions":[9007199254740993],"reason":"r","legal_basis":"b"}`, [422]],
      ['nested positions', JSON.stringify({ positions: [[1]], ...WHY }), [422]],
      ['receipt id object', JSON.stringify({ receipt_ids: [{ id }], ...WHY }), [422]],
      ['empty receipt id', JSON.stringify({ receipt_ids: [''], ...WHY }), [422]],
      ['job_ids a string', JSON.stringify({ job_ids: 'hostile-bodies', ...WHY }), [422]],
      ['unknown member', JSON.stringify({ receipt_ids: [id], ...WHY, force: true }), [422]],
      ['__proto__ member', `{"receipt_ids":["${id}"],"reason":"r","legal_basis":"b","__proto__":{"positions":[1]}}`, [422]],
      ['no reason', JSON.stringify({ receipt_ids: [id], legal_basis: 'b' }), [422]],
      ['blank reason', JSON.stringify({ receipt_ids: [id], reason: ' \t ', legal_basis: 'b' }), [422]],
      ['reason a number', JSON.stringify({ receipt_ids: [id], reason: 5, legal_basis: 'b' }), [422]],
      ['reason 2001 characters', JSON.stringify({ receipt_ids: [id], reason: 'r'.repeat(2001), legal_basis: 'b' }), [422]],
      ['no targets', JSON.stringify({ receipt_ids: [], ...WHY }), [422]],
      ['1001 distinct positions', JSON.stringify({ positions: Array.from({ length: 1001 }, (_, i) => i + 1), ...WHY }), [422]],
      ['deeply nested junk', `{"positions":${'['.repeat(50_000)}${']'.repeat(50_000)},"reason":"r","legal_basis":"b"}`, [400, 413, 422]],
      ['10 MB reason', JSON.stringify({ receipt_ids: [id], reason: 'r'.repeat(10 * 1024 * 1024), legal_basis: 'b' }), [413]],
      ['1,000,001 receipt ids', JSON.stringify({ receipt_ids: Array.from({ length: 1_000_001 }, (_, i) => `r${i}`), ...WHY }), [413]],
    ];
    for (const [name, text, statuses] of bodies) {
      const r = await l.erase(text);
      expect([name, statuses.includes(r.status) ? 'ok' : r.status]).toEqual([name, 'ok']);
      expect([name, typeof r.body?.error]).toEqual([name, 'string']);
      expect([name, leaksInternals(r.text)]).toEqual([name, null]);
    }
    expect((await payloadsErased(l.db)).length).toBe(before);
    expect((await l.get(`/api/receipts/${id}`)).body.raw).not.toBe('');
  });

  it('1,000,001 copies of one id and the same receipt named in every form are one target: one position erased, named once', async () => {
    const job = await l.execute('duplicates');
    const id = job.receiptIds[0];
    const pos = Number((await l.db.query<{ position: number }>('SELECT position FROM events WHERE stream_id = ?', [`receipt:${id}`]))[0].position);
    const r = await l.erase({ receipt_ids: [id, id.toUpperCase(), id], positions: [pos, pos], ...WHY });
    expect([r.status, r.body.positions]).toEqual([201, [pos]]);
    const copies = await l.erase(JSON.stringify({ receipt_ids: Array.from({ length: 1000 }, () => job.receiptIds[1]), ...WHY }));
    expect([copies.status, copies.body.positions?.length]).toEqual([201, 1]);
  });

  it('the position of a PayloadsErased event is refused as not_erasable (422), naming it; positions beyond the head 404; nothing is erased', async () => {
    const job = await l.execute('not-erasable');
    const first = await l.erase({ receipt_ids: [job.receiptIds[0]], ...WHY });
    expect(first.status).toBe(201);
    const before = (await payloadsErased(l.db)).length;
    const r = await l.erase({ positions: [first.body.erasure_position], receipt_ids: [job.receiptIds[1]], ...WHY });
    expect([r.status, r.body.error, r.body.positions?.[0]?.position]).toEqual([422, 'not_erasable', first.body.erasure_position]);
    const head = (await l.get('/api/ledger/head')).body.position as number;
    const beyond = await l.erase({ positions: [head + 1000, Number.MAX_SAFE_INTEGER], receipt_ids: [job.receiptIds[1]], ...WHY });
    expect([beyond.status, beyond.body.error, beyond.body.unknown?.positions]).toEqual([404, 'erasure_target_not_found', [head + 1000, Number.MAX_SAFE_INTEGER]]);
    expect((await payloadsErased(l.db)).length).toBe(before);
  });

  // Issue 29: "plans and reports are the compliance team's and stay unless named by position". A job's erasure leaves them
  // (a report issued before it keeps unsalted hashes of the evidence it counted); named by position they are erased, and
  // every reader says so: never a 500, never their content.
  it("a job's erasure leaves its plan and coverage report; named by position they are erased and every reader says so", async () => {
    const job = await l.execute('report-kept');
    const rep = await l.post('/api/coverage-reports', { job_id: 'report-kept' }, l.t.keys.auditor);
    expect(rep.status).toBe(201);
    const planId = (await l.get('/api/plans?job_id=report-kept', l.t.keys.auditor)).body.plan_id as string;
    expect((await l.erase({ job_ids: ['report-kept'], ...WHY })).status).toBe(201);
    const texts = async (): Promise<string[]> => [
      (await l.get(`/api/coverage-reports/${rep.body.report_id}`, l.t.keys.auditor)).text,
      (await l.get(`/coverage/${rep.body.report_id}`)).text,
      (await l.get(`/api/plans/${planId}`, l.t.keys.auditor)).text,
      (await l.get(`/api/plans/${planId}/versions/1`, l.t.keys.auditor)).text,
      // Their items in the lists (other tests' jobs have plans of the same title).
      JSON.stringify(((await l.get('/api/plans?limit=1000', l.t.keys.auditor)).body.items as { plan_id: string }[]).find((x) => x.plan_id === planId)),
      JSON.stringify(((await l.get('/api/coverage-reports?limit=1000')).body.items as { report_id: string }[]).find((x) => x.report_id === rep.body.report_id)),
    ];
    const planText = ['Pay supplier invoice', 'fetch_customer', 'send_payment'];
    // The job's erasure left them: the report still states the erased outcome's output_hash and the final entry digest.
    const kept = await texts();
    expect(job.secrets.filter((x) => kept.some((t) => t.includes(x))).length).toBeGreaterThan(0);
    expect(planText.every((x) => kept[2].includes(x))).toBe(true);

    const plan = Number((await l.db.query<{ position: number }>('SELECT position FROM events WHERE stream_id = ?', [`plan:${planId}`]))[0].position);
    const report = Number((await l.db.query<{ position: number }>('SELECT position FROM events WHERE stream_id = ?', [`coverage:${rep.body.report_id}`]))[0].position);
    const e = await l.erase({ positions: [report, plan], ...WHY });
    expect([e.status, e.body.error, e.body.positions]).toEqual([201, undefined, [plan, report]]);
    const after = await texts();
    expect(job.secrets.filter((x) => after.some((t) => t.includes(x)))).toEqual([]);
    expect(planText.filter((x) => after.some((t) => t.includes(x)))).toEqual([]);
    expect([JSON.parse(after[4]).title, JSON.parse(after[5]).digest]).toEqual([null, null]);

    const json = await l.get(`/api/coverage-reports/${rep.body.report_id}`, l.t.keys.auditor);
    expect([json.status, json.body.erased, json.body.report, json.body.digest, json.body.digest_verified, json.body.recorded.result, json.body.erasure.erasure_position]).toEqual([200, true, null, null, null, rep.body.result, e.body.erasure_position]);
    expect(json.body.statement).toMatch(/^Content erased on \d{4}-\d{2}-\d{2} by test-privacy \(GDPR Art\. 17\(1\)\(a\)\): customer request 4711/);
    const page = await l.get(`/coverage/${rep.body.report_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="erasure-statement"');
    expect(page.text).not.toMatch(/badge ok|recomputed: matches/);
    const pdf = await l.get(`/coverage/${rep.body.report_id}.pdf`);
    expect([pdf.status, pdf.body.error]).toEqual([410, 'content_erased']);
    const version = await l.get(`/api/plans/${planId}/versions/1`, l.t.keys.auditor);
    expect([version.status, version.body.erased, version.body.plan, version.body.digest, version.body.erasure.erasure_position]).toEqual([200, true, null, null, e.body.erasure_position]);
    // No report can be issued against an erased plan: 422 naming it, nothing recorded.
    const again = await l.post('/api/coverage-reports', { job_id: 'report-kept' }, l.t.keys.auditor);
    expect([again.status, again.body.error, again.body.position]).toEqual([422, 'plan_erased', plan]);
    // A pack of the job lists the erased plan version and report; nothing in it is their content.
    await l.t.app.get(CheckpointSigner).tick();
    const pack = await l.get('/api/jobs/report-kept/evidence', l.t.keys.auditor);
    expect(pack.status).toBe(200);
    const members = pack.text.split('\n').filter(Boolean).map((x) => JSON.parse(x) as Record<string, unknown>);
    const named = members.filter((m) => m.member === `plan/${planId}/1` || m.member === `report/${rep.body.report_id}`);
    expect(named.map((m) => [m.member, 'plan' in m ? m.plan : m.report, m.digest, (m.erased as { position: number }).position])).toEqual([
      [`plan/${planId}/1`, null, null, e.body.erasure_position],
      [`report/${rep.body.report_id}`, null, null, e.body.erasure_position],
    ]);
    expect(planText.filter((x) => pack.text.includes(x))).toEqual([]);
    // The report's webhook event (coverage.report.issued) keeps no findings or digest either, in the feed a delivery reads.
    const feed = await l.db.query<{ body: string }>("SELECT body FROM webhook_events WHERE type = 'coverage.report.issued' AND event_key = ?", [rep.body.report_id]);
    expect(feed.map((x) => JSON.parse(x.body) as Record<string, unknown>).map((b) => [b.report_id, b.erased, b.digest, b.findings])).toEqual([[rep.body.report_id, true, null, []]]);
    expect(feed.some((x) => x.body.includes(rep.body.digest as string))).toBe(false);
    expect((await verify(l)).ok).toBe(true);
  });

  it('job ids with SQL, LIKE, path and Unicode tricks match no other job: 404 naming them (400 for invisible characters), nothing erased', async () => {
    await l.execute('victim-job');
    const before = (await payloadsErased(l.db)).length;
    const tricks = ['victim-%', 'victim_job', "victim-job' OR '1'='1", '../victim-job', 'victim-job/../victim-job', 'VICTIM-JOB', 'victim\u2011job', 'vict\u0456m-job'];
    const r = await l.erase({ job_ids: tricks, ...WHY });
    expect([r.status, r.body.error]).toEqual([404, 'erasure_target_not_found']);
    expect([...r.body.unknown.job_ids].sort()).toEqual([...tricks].sort());
    expect(leaksInternals(r.text)).toBeNull();
    for (const invisible of ['victim-job\u0000', 'victim-job\u200b', '\u202evictim-job']) {
      const x = await l.erase({ job_ids: [invisible], ...WHY });
      expect([[400, 404, 422].includes(x.status), typeof x.body?.error, leaksInternals(x.text)]).toEqual([true, 'string', null]);
    }
    expect((await payloadsErased(l.db)).length).toBe(before);
  });

  it('GET /api/erasures/:id with hostile ids answers 404 (400 for control characters) with a reason code, never 500', async () => {
    for (const id of ["' OR '1'='1", '..%2F..%2Fetc%2Fpasswd', '%00', 'x'.repeat(5000), '%E2%80%AE', '%F0%9F%92%A9', '00000000-0000-4000-8000-000000000000']) {
      const r = await l.get(`/api/erasures/${id}`);
      expect([id.slice(0, 20), [400, 404].includes(r.status), typeof r.body?.error, leaksInternals(r.text)]).toEqual([id.slice(0, 20), true, 'string', null]);
    }
  });

  it('reason and legal basis are shown on the erased record page escaped, and bidi overrides are refused or never rendered raw', async () => {
    const job = await l.execute('hostile-reason');
    const reason = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    const r = await l.erase({ receipt_ids: [job.receiptIds[0]], reason, legal_basis: 'GDPR <b>17</b>' });
    expect(r.status).toBe(201);
    const page = await l.get(`/run/${job.receiptIds[0]}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).not.toContain('<b>17</b>');
    const rlo = await l.erase({ receipt_ids: [job.receiptIds[1]], reason: 'request of \u202eR7 .trA RPDG', legal_basis: 'GDPR \u2066Art. 17\u2069' });
    if (rlo.status === 201) {
      const p2 = await l.get(`/run/${job.receiptIds[1]}`);
      expect(/[\u202a-\u202e\u2066-\u2069]/.test(p2.text)).toBe(false);
    } else expect([rlo.status, rlo.body.error]).toEqual([422, expect.any(String)]);
  });

  it("an erased receipt's page and verifier say who erased it, when and why, keep recorded_verdict, and call it neither valid nor invalid", async () => {
    const job = await l.execute('honest');
    const id = job.receiptIds[0];
    const e = await l.erase({ receipt_ids: [id], reason: 'customer request 99', legal_basis: 'GDPR Art. 17(1)(a)' });
    expect(e.status).toBe(201);
    const v = await l.get(`/api/receipts/${id}/verify`);
    expect(v.status).toBeLessThan(500);
    // Today: 422, verdict "invalid", reasons ["not_object"]: the empty erased text re-verified as if it were the receipt.
    expect([['valid', 'invalid'].includes(v.body.verdict) ? v.body.verdict : 'neither', v.body.recorded_verdict]).toEqual(['neither', 'valid']);
    expect(JSON.stringify(v.body)).toContain(e.body.erasure_id);
    const page = await l.get(`/run/${id}`);
    expect(page.text).toMatch(/Content erased on \d{4}-\d\d-\d\d[^<]* by [^<]*test-privacy[^<]*GDPR Art\. 17\(1\)\(a\)[^<]*customer request 99/);
    expect(page.text).toContain(String(e.body.erasure_position));
    expect(page.text).not.toMatch(/class="verdict (ok|bad)"/);
  });

  const label = (verdict: unknown): unknown => (verdict === 'valid' || verdict === 'invalid' ? verdict : 'neither');

  it('an erased outcome verifier calls it neither valid nor invalid', async () => {
    const job = await l.execute('outcome-honest');
    expect((await l.erase({ job_ids: ['outcome-honest'], ...WHY })).status).toBe(201);
    const o = await l.get(`/api/outcomes/${job.outcomeId}/verify`);
    expect(o.status).toBeLessThan(500);
    // Today: 422, verdict "invalid", reasons ["not_object"]: the empty erased text re-verified.
    expect(label(o.body.verdict)).toBe('neither');
  });

  it('a verification batch over erased receipts and jobs records none of them as invalid (nor valid)', async () => {
    const job = await l.execute('batch-honest');
    expect((await l.erase({ job_ids: ['batch-honest'], ...WHY })).status).toBe(201);
    const b = await l.post('/api/verification-batches', { scope: 'all' }, l.t.keys.auditor);
    expect(b.status).toBe(202);
    let done: { status: string; results: { id: string; verdict: string }[] } | undefined;
    await waitUntil('the batch', 30_000, async () => {
      done = (await l.get(`/api/verification-batches/${b.body.batch_id}?limit=1000`, l.t.keys.auditor)).body;
      return done?.status === 'completed';
    });
    const erased = [...job.receiptIds, 'batch-honest'];
    // Today: each erased receipt "invalid" (not_object), the job "invalid" (invalid_entry), recorded so in the ledger for good.
    const verdicts = Object.fromEntries(done!.results.filter((r) => erased.includes(r.id)).map((r) => [r.id, label(r.verdict)]));
    expect(verdicts).toEqual(Object.fromEntries(erased.map((id) => [id, 'neither'])));
  });

  it("erasing one owner's job does not erase another owner's receipt that the job's entries merely name", async () => {
    const keys = l.t.app.get(ApiKeysService);
    const acme = (await keys.create('acme-agent', 'producer', { owner: 'acme' })).key;
    const evil = (await keys.create('evil-agent', 'producer', { owner: 'evil' })).key;
    const victim = freshReceipt();
    expect((await l.post('/api/receipts', victim.text, acme)).status).toBe(201);
    const entry = { ...makeEntry('evil-job', 1, ZERO_DIGEST), id: victim.id };
    const appended = await l.post('/api/jobs/evil-job/entries', entry, evil);
    expect(appended.status).toBeLessThan(500);
    if (appended.status !== 201) expect((await l.post('/api/jobs/evil-job/entries', makeEntry('evil-job', 1, ZERO_DIGEST), evil)).status).toBe(201);
    const e = await l.erase({ job_ids: ['evil-job'], ...WHY });
    expect(e.status).toBe(201);
    const held = await l.db.query<{ payload_salt: string | null }>('SELECT payload_salt FROM events WHERE stream_id = ?', [`receipt:${victim.id}`]);
    expect(held[0].payload_salt).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the same receipt erased by 8 concurrent requests: exactly one 201, seven 409 already_erased, one PayloadsErased naming it', async () => {
    const job = await l.execute('concurrent');
    const before = (await payloadsErased(l.db)).length;
    const rs = await Promise.all(Array.from({ length: 8 }, () => l.erase({ receipt_ids: [job.receiptIds[0]], ...WHY })));
    expect(rs.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of rs.filter((x) => x.status === 409)) expect(r.body.error).toBe('already_erased');
    expect((await payloadsErased(l.db)).length).toBe(before + 1);
    // Overlapping requests: each position is erased by one of them only.
    const overlap = await Promise.all([l.erase({ job_ids: ['concurrent'], ...WHY }), l.erase({ receipt_ids: job.receiptIds, ...WHY }), l.erase({ job_ids: ['concurrent'], ...WHY })]);
    expect(overlap.map((r) => r.status)).not.toContain(500);
    expect(overlap.filter((r) => r.status === 201).length).toBeGreaterThanOrEqual(1);
    expect((await verify(l)).ok).toBe(true);
  });

  it('erasing a job while entries are appended to it: every entry is erased or held whole, no 500, and the chain and read models still verify', async () => {
    const job = 'race-job';
    let prev = await l.openJob(job, 3);
    const entries = [4, 5, 6, 7, 8].map((seq) => {
      const e = makeEntry(job, seq, prev);
      prev = digestOf(e);
      return e;
    });
    const appends = (async () => {
      const out: number[] = [];
      for (const e of entries) out.push((await l.post(`/api/jobs/${job}/entries`, e)).status);
      return out;
    })();
    const erasure = l.erase({ job_ids: [job], ...WHY });
    const [statuses, er] = await Promise.all([appends, erasure]);
    expect(er.status).toBe(201);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    for (const s of statuses) expect([201, 409, 422]).toContain(s);
    const v = await verify(l);
    expect([v.ok, v.first_failure]).toEqual([true, null]);
    expect((v.projections as { ok: boolean }).ok).toBe(true);
  });

  it('appending to a job whose head entry was erased answers with a reason code, never 500', async () => {
    const job = 'erased-head';
    const prev = await l.openJob(job, 2);
    expect((await l.erase({ job_ids: [job], ...WHY })).status).toBe(201);
    const next = await l.post(`/api/jobs/${job}/entries`, makeEntry(job, 3, prev));
    expect([201, 409, 422]).toContain(next.status);
    if (next.status !== 201) expect(typeof next.body.error).toBe('string');
    const wrong = await l.post(`/api/jobs/${job}/entries`, makeEntry(job, next.status === 201 ? 4 : 3, 'f'.repeat(64)));
    expect([409, 422]).toContain(wrong.status);
    const tl = await l.get(`/api/jobs/${job}/verify`);
    // 410 when the erasure is all that stops a re-check; 422 when a check fails besides (this open job is not closed).
    expect([410, 422]).toContain(tl.status);
    expect(JSON.stringify(tl.body)).not.toMatch(/"verdict":"valid"/);
  });

  it('re-posting an erased receipt, entry or outcome is no oracle: the exact bytes and altered bytes get the same answer, and no content comes back', async () => {
    const job = await l.execute('oracle');
    const receipt = (await l.db.query<{ data: string }>('SELECT data FROM events WHERE stream_id = ?', [`receipt:${job.receiptIds[0]}`]))[0].data;
    const raw = (JSON.parse(receipt) as { raw: string }).raw;
    expect((await l.erase({ job_ids: ['oracle'], ...WHY })).status).toBe(201);
    const same = await l.post('/api/receipts', raw);
    const altered = JSON.parse(raw) as Record<string, unknown>;
    altered.status = 'error';
    const other = await l.post('/api/receipts', altered);
    expect(same.status).toBeLessThan(500);
    expect([same.status, same.body?.error, same.body?.outcome]).toEqual([other.status, other.body?.error, other.body?.outcome]);
    const rows = await l.db.query<{ data: string }>('SELECT data FROM events WHERE stream_id = ?', [`receipt:${job.receiptIds[0]}`]);
    expect(rows.filter((x) => x.data.includes(String(JSON.parse(raw).canonical_bytes)))).toEqual([]);
    const rec = (await l.get(`/api/receipts/${job.receiptIds[0]}`)).body;
    expect([rec.raw, rec.erased]).toEqual([null, true]);
  });

  it('after a job is erased, no byte of its content is left in the SQLite file or its WAL (PostgreSQL: not in any row)', async () => {
    const job = await l.execute('on-disk');
    const files = [l.target, `${l.target}-wal`];
    const onDisk = (): string[] => job.secrets.filter((x) => files.some((f) => existsSync(f) && readFileSync(f).includes(Buffer.from(x, 'latin1'))));
    if (dialect === 'sqlite') expect(onDisk().length).toBeGreaterThan(0);
    expect((await l.erase({ job_ids: ['on-disk'], ...WHY })).status).toBe(201);
    if (dialect === 'sqlite') {
      expect(onDisk()).toEqual([]);
    }
    for (const t of ['events', 'receipts', 'timeline_entries', 'timelines', 'commitments', 'outcomes', 'verification_results', 'webhook_events']) {
      const rows = JSON.stringify(await l.db.query(`SELECT * FROM ${t}`));
      for (const secret of job.secrets) expect([t, rows.includes(secret) ? secret : null]).toEqual([t, null]);
    }
  });

  it('after a job is erased, no byte of its content is served: JSON, raw, pages, verifiers, export, evidence, leaves, proofs, search, SSE', async () => {
    const job = await l.execute('leak-walk');
    const er = await l.erase({ job_ids: ['leak-walk'], ...WHY });
    expect(er.status).toBe(201);
    // A signed checkpoint covering the job, so its evidence pack is served (PostgreSQL test apps sign; SQLite ones too).
    await l.t.app.get(CheckpointSigner).tick();
    await l.t.app.get(CheckpointSigner).tick();
    const a = l.t.keys.auditor;
    const head = (await l.get('/api/ledger/head')).body.position as number;
    const paths: [string, string?][] = [
      [`/api/jobs/leak-walk/timeline`, a], [`/api/jobs/leak-walk/export`, a], [`/api/jobs/leak-walk/verify`], [`/api/jobs/leak-walk/endpoint`],
      [`/api/jobs/leak-walk/outcomes`, a], [`/api/jobs/leak-walk/evidence`, a], [`/jobs/leak-walk`], [`/job/leak-walk.svg`],
      [`/outcome/${job.outcomeId}`], [`/api/outcomes/${job.outcomeId}/verify`], [`/api/ledger/leaves?start=0&count=${head}`],
      [`/api/erasures/${er.body.erasure_id}`], [`/api/ledger/verify`, a],
      ...job.receiptIds.flatMap((id): [string, string?][] => [[`/api/receipts/${id}`, a], [`/api/receipts/${id}/raw`, a], [`/api/receipts/${id}/verify`], [`/run/${id}`], [`/api/receipts/${id}/proof`], [`/receipt/${id}.svg`]]),
      ...er.body.positions.map((p: number): [string] => [`/api/ledger/events/${p}/proof`]),
    ];
    for (const [path, key] of paths) {
      const r = await l.get(path, key);
      expect([path, r.status < 500]).toEqual([path, true]);
      for (const s of job.secrets) expect([path, r.text.includes(s) ? s : null]).toEqual([path, null]);
    }
    for (const h of job.secrets.filter((s) => /^[0-9a-f]{64}$/.test(s))) {
      const r = await l.get(`/api/ledger/search?output_hash=sha256:${h}`);
      expect([h, r.status, JSON.stringify(r.body).includes(job.receiptIds[0])]).toEqual([h, 200, false]);
    }
    const sse = await openSse(l.base, '/api/ledger/events/stream?after=0', { Authorization: `Bearer ${a}` });
    try {
      expect(sse.status).toBe(200);
      await sse.until(() => sse.events.some((e) => e.id === String(head)), 20_000);
      const text = sse.events.map((e) => e.data).join('\n');
      for (const s of job.secrets) expect(text.includes(s) ? s : null).toBeNull();
    } finally {
      sse.close();
    }
  });
});
