/**
 * Integrity issue, sections 1 and 3 (see README.md here, "Integrity issue
 * (commitments and coverage facts)"): a commitment anyone can post must not
 * hide one that proves truncation, and the coverage facts an attacker could
 * bend (when execution began, entries whose receipt says otherwise, plans
 * read before the job runs). Each test names what used to happen. Both
 * databases.
 */
import { sha256Hex } from '../../src/core/aer1';
import { CoverageReportContent } from '../../src/core/coverage/reconcile';
import { buildTimeline, commitmentFor, EIGHT_STEPS, Entry, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const SIX = EIGHT_STEPS.slice(0, 6);

/** The plan for the first six tools of the eight-step job: the rebuilt six-entry timeline covers it exactly. */
function sixToolPlan(job: string): Record<string, unknown> {
  return { job_id: job, title: 'Credit limit change (six tools)', unplanned: 'flag', expected_actions: SIX.map((s) => ({ action_id: s.tool, tool: s.tool })) };
}

describe.each(DIALECTS)('integrity: commitments and coverage facts on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const get = (path: string, key?: string) => (key ? t.http.get(path).set('Authorization', `Bearer ${key}`) : t.http.get(path));

  async function report(job: string): Promise<{ report_id: string; report: CoverageReportContent }> {
    const r = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    const g = await get(`/api/coverage-reports/${r.body.report_id}`);
    expect(g.status).toBe(200);
    return { report_id: r.body.report_id, report: g.body.report };
  }

  /** The section 1 scene: plan for six tools, the rebuilt six-entry timeline; returns the witness's eight-entry commitment and the attacker's. */
  async function scene(job: string): Promise<{ witness: Record<string, unknown>; forged: Record<string, unknown> }> {
    expect((await post('/api/plans', sixToolPlan(job), t.keys.compliance)).status).toBe(201);
    const full = buildTimeline(job, EIGHT_STEPS);
    const rebuilt = buildTimeline(job, SIX);
    expect((await post(`/api/jobs/${job}/entries`, rebuilt, t.keys.producer)).status).toBe(201);
    const v = await get(`/api/jobs/${job}/verify`);
    expect(v.body).toMatchObject({ verdict: 'valid', entry_count: 6 });
    return {
      witness: { ...commitmentFor(full, '2026-10-01T12:00:00Z'), witness: 'witness.example' },
      // Anyone with a producer key: the final digest copied from the public verifier.
      forged: { job_id: job, final_entry_digest: v.body.final_entry_digest, entry_count: 6, published_at: '2026-10-01T12:30:00Z', witness: 'witness.example' },
    };
  }

  async function expectTruncationStands(job: string, order: string[]): Promise<void> {
    const v = await get(`/api/jobs/${job}/verify`);
    expect([v.status, v.body.assessment]).toEqual([422, 'truncation_detected']); // (was 200, read as valid)
    // The fields the verifier had before the fix first: they said binding / excluded.
    expect([v.body.truncation_excluded, v.body.commitment.status]).toEqual([false, 'non_binding']);
    expect(v.body).toMatchObject({ verdict: 'valid', truncation_excluded: false, commitment_assessment: 'truncation_detected', commitment: { status: 'non_binding', outcome: 'truncation_detected', recorded: 3 } });
    expect(v.body.commitments.map((c: { outcome: string }) => c.outcome)).toEqual(order);
    expect(v.body.findings).toHaveLength(1);
    expect(v.body.findings[0]).toMatchObject({ code: 'truncation_detected' });
    expect(v.body.findings[0].message).toMatch(/counts 8 entries, 6 are visible/);
    expect(v.body.statement).toMatch(/^Truncation is not excluded/);
    expect(v.body.statement).not.toMatch(/are excluded/);

    const page = await get(`/jobs/${job}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="truncation"');
    expect(page.text).toContain('a recorded endpoint commitment contradicts this timeline');
    expect(page.text).toContain('truncation_detected');
    const pageJson = await get(`/jobs/${job}`).set('Accept', 'application/json');
    expect(pageJson.body).toMatchObject({ truncation_excluded: false, commitment_status: 'truncation_detected' });

    const { report_id, report: c } = await report(job);
    expect(c.result).toBe('findings');
    const html = (await get(`/coverage/${report_id}`)).text;
    expect(html).toContain('<span class="badge bad"><bdi>truncation_detected</bdi></span>');
    expect(html).toContain('<span class="badge ok"><bdi>binding</bdi></span>');
    expect(c.integrity.commitment).toMatchObject({ state: 'non_binding', truncation: 'detected', truncation_detected: true, missing_entries: 2 });
    expect(c.integrity.commitments.map((x) => [x.outcome, x.contradicts, x.binding])).toEqual(order.map((o) => [o, o === 'truncation_detected', o === 'binding']));
    expect(c.findings.map((f) => f.code)).toEqual(['truncation_detected', 'commitment_non_binding']);
    expect(c.actions.map((a) => a.status)).toEqual(['covered', 'covered', 'covered', 'covered', 'covered', 'covered']);
  }

  it('a batch verification counts a job whose commitment proves truncation as invalid, and says why a chain without one is not clean (was: "1 valid", exit 0)', async () => {
    const cut = 'job-batch-cut';
    const { witness } = await scene(cut);
    expect((await post(`/api/jobs/${cut}/commitments`, witness, t.keys.producer)).status).toBe(201);
    const open = 'job-batch-open';
    await scene(open);
    const b = await post('/api/verification-batches', { targets: [{ kind: 'job', id: cut }, { kind: 'job', id: open }] }, t.keys.auditor);
    expect(b.status).toBe(202);
    let status: { status: string; results: { id: string; verdict: string; reasons: string[] }[] } = { status: 'queued', results: [] };
    for (let i = 0; i < 100 && status.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await get(`/api/verification-batches/${b.body.batch_id}`, t.keys.auditor)).body;
    }
    expect(status.status).toBe('completed');
    // Issue 15 changed the second: the close made the ledger issue its own commitment, which binds the chain
    // (before: no commitment, 'truncation_not_excluded'). The witness's commitment still proves the first cut.
    expect(status.results.map((r) => [r.id, r.verdict, r.reasons])).toEqual([
      [cut, 'invalid', ['truncation_detected']],
      [open, 'valid', []],
    ]);
  });

  it('a forged commitment posted after the witness one does not hide the truncation (was: full_coverage, /verify binding, excluded "by witness.example", the page notice gone)', async () => {
    const job = 'job-forged-after';
    const { witness, forged } = await scene(job);
    expect((await post(`/api/jobs/${job}/commitments`, witness, t.keys.producer)).status).toBe(201);
    const before = await report(job);
    expect(before.report.integrity.commitment.truncation).toBe('detected');
    const f = await post(`/api/jobs/${job}/commitments`, forged, t.keys.producer);
    expect(f.status).toBe(201);
    // Issue 15: the ledger-issued commitment (binding the six the ledger saw) comes first.
    await expectTruncationStands(job, ['binding', 'truncation_detected', 'binding']);
    // Alone it binds; judged with the witness's, it hides nothing (the record answer says so too).
    expect(f.body).toMatchObject({ binding: true, commitment_assessment: 'truncation_detected', truncation_excluded: false });
  });

  it('a forged commitment posted before the witness one does not hide the truncation (was: coverage said truncation, /verify said excluded)', async () => {
    const job = 'job-forged-before';
    const { witness, forged } = await scene(job);
    expect((await post(`/api/jobs/${job}/commitments`, forged, t.keys.producer)).status).toBe(201);
    const alone = await get(`/api/jobs/${job}/verify`);
    expect(alone.body.truncation_excluded).toBe(true);
    expect((await post(`/api/jobs/${job}/commitments`, witness, t.keys.producer)).status).toBe(201);
    await expectTruncationStands(job, ['binding', 'binding', 'truncation_detected']);
  });

  it('an earlier checkpoint with another digest for that entry is a substitution finding; a consistent one is not', async () => {
    const job = 'job-checkpoint';
    expect((await post('/api/plans', sixToolPlan(job), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, SIX);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    const at4 = commitmentFor(tl.slice(0, 4));
    expect((await post(`/api/jobs/${job}/commitments`, at4, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    const ok = await get(`/api/jobs/${job}/verify`);
    expect(ok.body).toMatchObject({ truncation_excluded: true, commitment_assessment: 'binding', findings: [] });
    // Issue 15: the ledger-issued commitment of the close comes first.
    expect(ok.body.commitments.map((c: { outcome: string }) => c.outcome)).toEqual(['binding', 'earlier_checkpoint', 'binding']);
    expect((await report(job)).report.result).toBe('full_coverage');

    const other = buildTimeline(job, [...SIX.slice(0, 3), { tool: 'export_data' }]);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(other), t.keys.producer)).status).toBe(201);
    const bad = await get(`/api/jobs/${job}/verify`);
    expect(bad.body).toMatchObject({ truncation_excluded: false, commitment_assessment: 'entry_substituted', commitment: { status: 'non_binding', outcome: 'entry_substituted' } });
    expect(bad.body.findings.map((x: { code: string }) => x.code)).toEqual(['entry_substituted']);
    const r = await report(job);
    expect(r.report.findings.map((x) => x.code)).toEqual(['entry_substituted', 'commitment_non_binding']);
  });

  it('execution began with a receipt the job names, before its first entry (was: receipts, then plan, then timeline gave registered_after_execution_began false and full_coverage)', async () => {
    const job = 'job-receipts-first';
    const tl = buildTimeline(job, SIX);
    const headBefore = (await get('/api/ledger/head')).body.position as number;
    const batch = await t.http.post('/api/receipts/batch').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/x-ndjson').send(tl.map((e) => JSON.stringify(receiptFor(e))).join('\n'));
    expect(batch.body).toMatchObject({ accepted: 6, rejected: 0 });
    const plan = await post('/api/plans', sixToolPlan(job), t.keys.compliance);
    expect(plan.status).toBe(201);
    // At registration nothing recorded names those receipts yet: only what is recorded counts.
    expect(plan.body).toMatchObject({ registered_after_execution_began: false, execution_first_position: null });
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);

    const { report: r } = await report(job);
    expect(r.plan).toMatchObject({ registered_after_execution_began: true, execution_first_position: headBefore + 1 });
    expect(r.findings.map((f) => f.code)).toEqual(['plan_registered_after_execution_began']);
    expect(r.result).toBe('findings');
    const view = await get(`/api/plans/${plan.body.plan_id}`, t.keys.auditor);
    expect(view.body.versions[0]).toMatchObject({ registered_after_execution_began: true, execution_first_position: headBefore + 1 });
  });

  it('an entry whose receipt records another tool and other bytes is no evidence, and a named finding (was: wire_money covered and succeeded by a harmless_lookup receipt)', async () => {
    const job = 'job-wire';
    expect((await post('/api/plans', { job_id: job, title: 'pay out', expected_actions: [{ action_id: 'wire', tool: 'wire_money' }] }, t.keys.compliance)).status).toBe(201);
    const [entry] = buildTimeline(job, [{ tool: 'wire_money' }]);
    const other: Entry = { ...entry, tool: 'harmless_lookup', canonical_bytes: Buffer.from('{"lookup":"weather"}').toString('base64') };
    const receipt = receiptFor(other);
    expect(receipt.output_hash).toBe('sha256:' + sha256Hex(Buffer.from('{"lookup":"weather"}')));
    expect((await post('/api/receipts', receipt, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, [entry], t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor([entry]), t.keys.producer)).status).toBe(201);

    const { report: r } = await report(job);
    expect(r.actions[0]).toMatchObject({ action_id: 'wire', status: 'missing', evidence: [], reported_only_evidence: [], successful_count: 0 });
    expect(r.actions[0].unaccepted_unassigned).toMatchObject([{ seq: 1, receipt_id: entry.id, receipt_mismatch: ['tool', 'canonical_bytes', 'output_hash'] }]);
    expect(r.findings.map((f) => f.code)).toEqual(['receipt_mismatch', 'missing']);
    expect(r.findings[0]).toMatchObject({ seq: 1 });
    expect(r.findings[0].message).toContain('tool, canonical_bytes, output_hash');
    expect(r.integrity.commitment.state).toBe('binding');
  });

  it('plans are read by compliance, auditor and admin only; the report stays public and names its plan version (was: anyone, the producer included, could read the plan before the job ran)', async () => {
    const job = 'job-private-plan';
    const p = await post('/api/plans', sixToolPlan(job), t.keys.compliance);
    expect(p.status).toBe(201);
    const id = p.body.plan_id as string;
    for (const path of [`/api/plans?job_id=${job}`, `/api/plans/${id}`, `/api/plans/${id}/versions/1`]) {
      const anon = await get(path);
      expect([anon.status, anon.body.error]).toEqual([401, 'missing_key']);
      const producer = await get(path, t.keys.producer);
      expect([producer.status, producer.body.error]).toEqual([403, 'forbidden_role']);
      for (const role of ['compliance', 'auditor', 'admin'] as const) {
        const ok = await get(path, t.keys[role]);
        expect(ok.status).toBe(200);
        expect(ok.body.plan_id ?? ok.body.versions?.[0]?.plan_id).toBe(id);
      }
    }
    const tl = buildTimeline(job, SIX);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    const { report_id, report: r } = await report(job);
    expect(r.plan).toMatchObject({ plan_id: id, version: 1, digest: p.body.digest });
    const page = await get(`/coverage/${report_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`plan <code class="id"><bdi>${id}</bdi></code> version <bdi>1</bdi>`);
    // Its id is a random UUID (unguessable), not derived from the job.
    expect(report_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
