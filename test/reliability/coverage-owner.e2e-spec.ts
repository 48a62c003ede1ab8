/**
 * Integrity issue, second attack (coverage): see README.md here,
 * "Integrity issue (second attack: coverage)". Job id squatting (any
 * producer could take a job id first, block the real writer and produce
 * the timeline the auditor's report used) and corrections the report
 * ignored (S9). Each test names what used to happen. Both databases.
 */
import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../../src/core/aer1';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { CoverageReportContent } from '../../src/core/coverage/reconcile';
import { buildTimeline, commitmentFor, Entry, receiptFor, StepSpec } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const STEPS: StepSpec[] = [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'wire_money' }];

function kycPlan(job: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    job_id: job,
    title: 'KYC and wire',
    unplanned: 'flag',
    expected_actions: [
      { action_id: 'fetch', tool: 'fetch_customer' },
      { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'] },
      { action_id: 'wire', tool: 'wire_money', must_succeed: true, after: ['screen'] },
    ],
    ...extra,
  };
}

/** A core receipt (success) for a timeline entry: same id, tool, provenance and bytes. */
function coreReceipt(e: Entry): Record<string, unknown> {
  const bytes = Buffer.from(e.canonical_bytes, 'base64');
  return {
    id: e.id,
    receipt_schema_version: '0.3',
    created_at: '2026-10-01T12:00:00Z',
    tool: { name: e.tool, version: '1.0.0', scope: 'write' },
    provenance_class: e.provenance_class,
    canonical_bytes: e.canonical_bytes,
    output_hash: 'sha256:' + sha256Hex(bytes),
    verification_status: 'verified',
  };
}

describe.each(DIALECTS)('integrity, second attack: coverage on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let a: string;
  let a2: string;
  let b: string;
  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
    const keys = t.app.get(ApiKeysService);
    a = (await keys.create('platform-a-1', 'producer', { owner: 'platform-a' })).key;
    a2 = (await keys.create('platform-a-2', 'producer', { owner: 'platform-a' })).key;
    b = (await keys.create('producer-b-1', 'producer', { owner: 'producer-b' })).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const get = (path: string) => t.http.get(path);

  async function report(job: string): Promise<{ report_id: string; digest: string; report: CoverageReportContent }> {
    const r = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    const g = await get(`/api/coverage-reports/${r.body.report_id}`);
    expect(g.status).toBe(200);
    expect(g.body.digest_verified).toBe(true);
    return { report_id: r.body.report_id, digest: g.body.digest, report: g.body.report };
  }

  /** Record the whole job as `key`: a receipt per entry, the timeline, a binding commitment. */
  async function recordJob(job: string, key: string): Promise<Entry[]> {
    const tl = buildTimeline(job, STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), key)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, key)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), key)).status).toBe(201);
    return tl;
  }

  describe('1. job id squatting', () => {
    it('the attack: B takes the job id first and A gets 403; the report names B as the recorder, prominently (was: full_coverage naming nobody)', async () => {
      const job = 'job-kyc-77';
      expect((await post('/api/plans', kycPlan(job), t.keys.compliance)).status).toBe(201);
      await recordJob(job, b);
      const blocked = await post(`/api/jobs/${job}/entries`, buildTimeline(job, STEPS)[0], a);
      expect(blocked.status).toBe(403);
      expect(blocked.body.error).toBe('not_owner');
      const { report_id, report: r } = await report(job);
      // The plan names no owner: the record still counts, but the report says who made it.
      expect(r.result).toBe('full_coverage');
      expect(r.integrity.recorded_by).toEqual({
        checked: true,
        owner: 'producer-b',
        owners: ['producer-b'],
        key_names: ['producer-b-1'],
        unattributed_events: 0,
        plan_owner: null,
        plan_owner_check: 'not_named',
        receipts_by_other_owner: [],
      });
      const html = (await get(`/coverage/${report_id}`)).text;
      expect(html).toContain('<b class="">Recorded by</b>: the <bdi>timeline</bdi> was recorded by owner <b><bdi>producer-b</bdi></b>');
      expect(html).toContain('The plan names no owner (recorded_by_owner)');
      // Before the findings and the tables: near the top.
      expect(html.indexOf('Recorded by')).toBeLessThan(html.indexOf('<h2>Plan</h2>'));
    });

    it('a plan naming recorded_by_owner: the squatter is refused at write time (403 not_plan_owner), the owner records, full coverage (was: B owned the job)', async () => {
      const job = 'job-kyc-78';
      const bad = await post('/api/plans', kycPlan(job, { recorded_by_owner: 'platform\u202Ea' }), t.keys.compliance);
      expect(bad.status).toBe(422);
      expect(bad.body.problems.map((p: { path: string; code: string }) => [p.path, p.code])).toEqual([['recorded_by_owner', 'invalid_recorded_by_owner']]);
      expect((await post('/api/plans', kycPlan(job, { recorded_by_owner: 'platform-a' }), t.keys.compliance)).status).toBe(201);
      const tl = buildTimeline(job, STEPS);
      const append = await post(`/api/jobs/${job}/entries`, tl, b);
      expect(append.status).toBe(403);
      expect(append.body).toMatchObject({ error: 'not_plan_owner', recorded_by_owner: 'platform-a' });
      const imported = await t.http.put(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${b}`).set('Content-Type', 'application/json').send(JSON.stringify(tl));
      expect(imported.status).toBe(403);
      expect(imported.body.error).toBe('not_plan_owner');
      // An admin key (no owner) is not the plan's owner either: its write would not count.
      expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.admin)).body.error).toBe('not_plan_owner');
      expect((await get(`/api/jobs/${job}/verify`)).status).toBe(404);

      for (const e of tl) expect((await post('/api/receipts', receiptFor(e), a)).status).toBe(201);
      expect((await post(`/api/jobs/${job}/entries`, tl.slice(0, 2), a)).status).toBe(201);
      // Another key of the same owner may continue it.
      expect((await post(`/api/jobs/${job}/entries`, tl.slice(2), a2)).status).toBe(201);
      expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), a)).status).toBe(201);
      const { report: r } = await report(job);
      expect(r.result).toBe('full_coverage');
      expect(r.integrity.recorded_by).toMatchObject({ owner: 'platform-a', key_names: ['platform-a-1', 'platform-a-2'], plan_owner: 'platform-a', plan_owner_check: 'satisfied' });
    });

    it('a timeline recorded by another owner than the plan names is no evidence: every action missing, recorded_by_other_owner (was: full_coverage)', async () => {
      const job = 'job-kyc-79';
      const created = await post('/api/plans', kycPlan(job), t.keys.compliance);
      expect(created.status).toBe(201);
      await recordJob(job, b);
      expect((await report(job)).report.result).toBe('full_coverage');
      // The compliance officer learns who should record it and amends the plan.
      const amended = await post(`/api/plans/${created.body.plan_id}/amendments`, { ...kycPlan(job, { recorded_by_owner: 'platform-a' }), job_id: undefined }, t.keys.compliance);
      expect(amended.status).toBe(201);
      const { report_id, digest, report: r } = await report(job);
      expect(r.result).toBe('findings');
      expect(r.actions.map((x) => x.status)).toEqual(['missing', 'missing', 'missing']);
      expect(r.integrity.recorded_by).toMatchObject({ owner: 'producer-b', key_names: ['producer-b-1'], plan_owner: 'platform-a', plan_owner_check: 'recorded_by_other_owner' });
      const f = r.findings.find((x) => x.code === 'recorded_by_other_owner');
      expect(f?.message).toMatch(/recorded_by_owner "platform-a", but the timeline was recorded by owner "producer-b" \(key "producer-b-1"\)/);
      const html = (await get(`/coverage/${report_id}`)).text;
      expect(html).toContain('<b class="bad">Recorded by</b>');
      // Reproducible: the same position gives the same digest.
      const again = await post('/api/coverage-reports', { job_id: job, as_of_position: r.as_of_position }, t.keys.auditor);
      expect(again.body.digest).toBe(digest);
    });

    it('a receipt the timeline names but another owner recorded is no evidence (receipt_recorded_by_other_owner) (was: covered)', async () => {
      const job = 'job-kyc-80';
      expect((await post('/api/plans', kycPlan(job, { recorded_by_owner: 'platform-a' }), t.keys.compliance)).status).toBe(201);
      const tl = buildTimeline(job, STEPS);
      // B records the wire receipt first (its id is in the entry); A's same bytes are then "existing".
      expect((await post('/api/receipts', receiptFor(tl[2]), b)).status).toBe(201);
      for (const e of tl) expect([200, 201]).toContain((await post('/api/receipts', receiptFor(e), a)).status);
      expect((await post(`/api/jobs/${job}/entries`, tl, a)).status).toBe(201);
      expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), a)).status).toBe(201);
      const { report: r } = await report(job);
      expect(r.result).toBe('findings');
      expect(r.actions.map((x) => [x.action_id, x.status])).toEqual([
        ['fetch', 'covered'],
        ['screen', 'covered'],
        ['wire', 'missing'],
      ]);
      expect(r.integrity.recorded_by).toMatchObject({ owner: 'platform-a', plan_owner_check: 'satisfied', receipts_by_other_owner: [{ receipt_id: tl[2].id.toLowerCase(), owners: ['producer-b'], key_names: ['producer-b-1'] }] });
      expect(r.findings.map((x) => x.code)).toEqual(['receipt_recorded_by_other_owner', 'missing']);
    });
  });

  describe('2. corrections (S9)', () => {
    it('a receipt corrected to a failure makes a must_succeed action failed, with evidence_corrected (was: full_coverage)', async () => {
      const job = 'job-wire-corrected';
      expect((await post('/api/plans', kycPlan(job), t.keys.compliance)).status).toBe(201);
      const tl = buildTimeline(job, STEPS);
      for (const e of tl) expect((await post('/api/receipts', coreReceipt(e), a)).status).toBe(201);
      expect((await post(`/api/jobs/${job}/entries`, tl, a)).status).toBe(201);
      expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), a)).status).toBe(201);
      const before = await report(job);
      expect(before.report.result).toBe('full_coverage');

      const r = tl[2].id.toLowerCase();
      const c1 = randomUUID();
      const corr = await post(`/api/receipts/${r}/corrections`, { ...receiptFor(tl[2], 'error'), id: c1 }, a);
      expect(corr.status).toBe(201);
      const after = await report(job);
      expect(after.report.result).toBe('findings');
      const wire = after.report.actions.find((x) => x.action_id === 'wire')!;
      expect(wire.status).toBe('failed');
      expect(wire.evidence[0]).toMatchObject({ receipt_id: tl[2].id, outcome: 'failure', receipt_status: 'error', superseded_by: c1, correction_chain: [c1], original_outcome: 'success', original_status: null });
      expect(after.report.findings.map((x) => x.code)).toEqual(['evidence_corrected', 'failed']);
      expect(after.report.findings[0].message).toContain(r);
      expect(after.report.findings[0].message).toContain(c1);
      // As of the earlier position, the report is the one before the correction.
      const then = await post('/api/coverage-reports', { job_id: job, as_of_position: before.report.as_of_position }, t.keys.auditor);
      expect(then.body).toMatchObject({ digest: before.digest, result: 'full_coverage' });

      // A correction of the correction: the latest one is used, and the correction is still a finding.
      const c2 = randomUUID();
      expect((await post(`/api/receipts/${c1}/corrections`, { ...receiptFor(tl[2], 'ok'), id: c2 }, a)).status).toBe(201);
      const latest = await report(job);
      const w2 = latest.report.actions.find((x) => x.action_id === 'wire')!;
      expect(w2.status).toBe('covered');
      expect(w2.evidence[0]).toMatchObject({ outcome: 'success', superseded_by: c2, correction_chain: [c1, c2] });
      expect(latest.report.result).toBe('findings');
      expect(latest.report.findings.map((x) => x.code)).toEqual(['evidence_corrected']);
      const html = (await get(`/coverage/${latest.report_id}`)).text;
      expect(html).toContain(`<b>corrected by</b> <code class="id"><bdi>${c2}</bdi></code>`);
    });
  });
});
