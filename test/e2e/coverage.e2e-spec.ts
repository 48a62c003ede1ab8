/**
 * Plans and coverage reports over HTTP, on SQLite and PostgreSQL. Timelines
 * are recorded as `TimelineEntryAppended` / `EndpointCommitmentRecorded`
 * events appended directly (the shapes the timelines module records), so
 * these tests do not depend on its API; one test goes through it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCommitment, entryDigest, verifyTimeline } from '../../src/core/aer1';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { SYSTEM } from '../../src/core/ledger/event-hash';
import { streams } from '../../src/ledger/streams';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { signNote } from '../../src/core/tlog';
import { CoverageReportContent } from '../../src/core/coverage/reconcile';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, Entry, receiptFor, StepSpec, uuidFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const KYC_ACTIONS = [
  { action_id: 'fetch', tool: 'fetch_customer' },
  { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'] },
  { action_id: 'decide', tool: 'record_decision', after: ['screen'] },
];
const KYC_STEPS: StepSpec[] = [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }];

describe.each(DIALECTS)('coverage on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const head = async (): Promise<number> => (await t.http.get('/api/ledger/head')).body.position as number;

  /** Append timeline entries (and optionally a commitment) as the timelines module records them. */
  async function recordEntries(entries: Entry[]): Promise<void> {
    const db = t.app.get(DatabaseService);
    const ledger = t.app.get(LedgerService);
    await db.write(async (tx) => {
      for (const e of entries) {
        const stream = streams.timeline(e.job_id);
        await ledger.append(tx, stream, await ledger.streamVersion(tx, stream), [
          {
            type: 'TimelineEntryAppended',
            data: { job_id: e.job_id, seq: e.seq, raw: JSON.stringify(e), entry_digest: entryDigest(e), receipt_id: e.id, tool: e.tool, provenance_class: e.provenance_class, close: e.close === true },
          },
        ], SYSTEM);
      }
    });
  }

  /**
   * Record an endpoint commitment as an event. Issue 15: full coverage needs a binding commitment that is
   * ledger-issued or attested, so by default it is recorded as the ledger issues its own (a note signed with
   * the app's log key); `selfAsserted` records it as a client's plain POST would.
   */
  async function recordCommitment(job: string, commitment: Record<string, unknown>, visible: Entry[], opts: { selfAsserted?: boolean } = {}): Promise<void> {
    const db = t.app.get(DatabaseService);
    const ledger = t.app.get(LedgerService);
    const r = checkCommitment(verifyTimeline(visible), commitment);
    const raw = JSON.stringify(commitment);
    const id = t.app.get(LogIdentityService).current!;
    const signed = opts.selfAsserted ? {} : { issued_by: 'ledger' as const, attestation: { issued_by: 'ledger' as const, note: signNote(`${raw}\n`, [id.signer]), keys: [{ name: id.origin, vkey: id.vkey }] } };
    await db.write(async (tx) => {
      const stream = streams.timeline(job);
      await ledger.append(tx, stream, await ledger.streamVersion(tx, stream), [
        { type: 'EndpointCommitmentRecorded', data: { id: uuidFor(`${job}/commitment/${Date.now()}`), job_id: job, raw, binding: r.binding, reasons: r.reasons, entry_count_at_record: visible.length, ...signed } },
      ], SYSTEM);
    });
  }

  async function recordReceipts(entries: Entry[], steps: StepSpec[]): Promise<void> {
    for (let i = 0; i < entries.length; i++) {
      const st = steps[i]?.status;
      if (st === null) continue;
      const r = await post('/api/receipts', receiptFor(entries[i], st ?? 'ok'), t.keys.producer);
      expect(r.status).toBe(201);
    }
  }

  async function registerPlan(doc: Record<string, unknown>): Promise<{ plan_id: string; version: number; digest: string; position: number; warnings: { code: string; message: string }[] }> {
    const r = await post('/api/plans', doc, t.keys.compliance);
    expect(r.status).toBe(201);
    return r.body;
  }

  async function issue(body: Record<string, unknown>): Promise<{ report_id: string; url: string; digest: string; as_of_position: number; report: CoverageReportContent }> {
    const r = await post('/api/coverage-reports', body, t.keys.auditor);
    expect(r.status).toBe(201);
    const g = await t.http.get(`/api/coverage-reports/${r.body.report_id}`);
    expect(g.status).toBe(200);
    expect(g.body.digest_verified).toBe(true);
    expect(g.body.digest).toBe(r.body.digest);
    return { ...r.body, report: g.body.report };
  }

  /** Register a plan, then record the timeline, its receipts and its endpoint commitment, then issue a report. */
  async function scenario(job: string, planDoc: Record<string, unknown>, steps: StepSpec[], opts: { commitment?: boolean } = {}) {
    await registerPlan({ job_id: job, title: `plan for ${job}`, ...planDoc });
    const tl = buildTimeline(job, steps);
    await recordReceipts(tl, steps);
    await recordEntries(tl);
    if (opts.commitment !== false) await recordCommitment(job, commitmentFor(tl), tl);
    return issue({ job_id: job });
  }

  const statuses = (report: CoverageReportContent): Record<string, string> => Object.fromEntries(report.actions.map((a) => [a.action_id, a.status]));

  it('rejects an invalid plan with every problem, and needs the compliance role', async () => {
    const before = await head();
    const bad = await post(
      '/api/plans',
      { job_id: 'job-bad', title: 't', expected_actions: [{ action_id: 'a', tool: 'x', after: ['b'] }, { action_id: 'b', tool: 'x', after: ['a'], min_count: 0 }, { action_id: 'a', tool: 'y', accepted_provenance: ['observed via gateway'] }] },
      t.keys.compliance,
    );
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('invalid_plan');
    // `reasons` are codes (one per problem); the prose is in `problems` (issue 12: codes, not prose, in reasons).
    expect(bad.body.reasons).toEqual(['invalid_min_count', 'duplicate_action_id', 'invalid_provenance', 'after_cycle']);
    expect(bad.body.reasons.every((r: string) => /^[a-z0-9_]+$/.test(r))).toBe(true);
    expect(bad.body.problems.map((p: { path: string; message: string }) => `${p.path}: ${p.message}`)).toEqual([
      'expected_actions[1].min_count: min_count must be an integer >= 1, got 0',
      'expected_actions[2].action_id: action_id "a" is already used by expected_actions[0]',
      'expected_actions[2].accepted_provenance[0]: not a provenance class (S5: "EXECUTED BY <system>", "OBSERVED VIA GATEWAY", "LOGGED BY AGENT", or "EXECUTED BY *"): "observed via gateway"',
      'expected_actions: the after constraints form a cycle: "a" -> "b" -> "a"',
    ]);
    const doc = { job_id: 'job-role', title: 't', expected_actions: [{ action_id: 'a', tool: 'x' }] };
    expect((await post('/api/plans', doc, t.keys.producer)).status).toBe(403);
    expect((await post('/api/plans', doc, t.keys.auditor)).status).toBe(403);
    expect((await t.http.post('/api/plans').send(JSON.stringify(doc))).status).toBe(401);
    expect(await head()).toBe(before);
  });

  it('full coverage: report recorded with its digest, served as JSON and as an escaped HTML page', async () => {
    const job = 'job-full';
    const before = await post('/api/plans', { job_id: 'job-early', title: 'on time', expected_actions: KYC_ACTIONS }, t.keys.compliance);
    expect(before.status).toBe(201);
    expect(before.body.warnings).toEqual([]); // registered before execution: nothing to warn about
    expect(before.headers.warning).toBeUndefined();
    const r = await scenario(job, { title: 'KYC <script>alert(1)</script>', expected_actions: KYC_ACTIONS }, KYC_STEPS);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.report.result).toBe('full_coverage');
    expect(r.report.findings).toEqual([]);
    expect(r.report.integrity).toMatchObject({ kind: 'timeline', verdict: 'valid', entry_count: 3, commitment: { state: 'binding', truncation: 'excluded' } });
    expect(r.report.actions[0].evidence[0]).toMatchObject({ seq: 1, receipt_id: uuidFor(`${job}/1`), outcome: 'success', receipt_status: 'ok' });
    expect(r.report.plan).toMatchObject({ version: 1, registered_after_execution_began: false });
    expect(r.url).toBe(`https://ledger.test/coverage/${r.report_id}`);
    expect(r.as_of_position).toBe((await head()) - 1);

    const page = await t.http.get(`/coverage/${r.report_id}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('KYC &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('What this report does not prove');
    const json = await t.http.get(`/coverage/${r.report_id}`).set('Accept', 'application/json');
    expect(json.headers['content-type']).toMatch(/application\/json/);
    expect(json.body.report).toEqual(r.report);

    // Same inputs, same digest; the event is in the ledger.
    const again = await issue({ job_id: job, as_of_position: r.as_of_position });
    expect(again.report_id).not.toBe(r.report_id);
    expect(again.digest).toBe(r.digest);
    const events = await t.app.get(LedgerService).readStream(streams.coverage(r.report_id));
    expect(events.map((e) => e.type)).toEqual(['CoverageReportIssued']);
    expect(JSON.parse(events[0].data).digest).toBe(r.digest);
  });

  it('an action missing', async () => {
    const r = await scenario('job-missing', { expected_actions: KYC_ACTIONS }, [{ tool: 'fetch_customer' }, { tool: 'record_decision' }]);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'missing', decide: 'out_of_order' });
    expect(r.report.result).toBe('findings');
  });

  it('an action evidenced only by LOGGED BY AGENT', async () => {
    const r = await scenario('job-logged', { expected_actions: KYC_ACTIONS }, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions', provenance: 'LOGGED BY AGENT' }, { tool: 'record_decision' }]);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'reported_only', decide: 'out_of_order' });
    expect(r.report.actions[1].reported_only_evidence).toMatchObject([{ seq: 2, provenance_class: 'LOGGED BY AGENT', receipt_id: uuidFor('job-logged/2') }]);
  });

  it('an action whose only receipt failed', async () => {
    const r = await scenario('job-failed', { expected_actions: KYC_ACTIONS }, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions', status: 'provider_unavailable' }, { tool: 'record_decision' }]);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'failed', decide: 'covered' });
    expect(r.report.actions[1].evidence).toMatchObject([{ seq: 2, outcome: 'failure', receipt_status: 'provider_unavailable' }]);
  });

  it('an after constraint broken', async () => {
    const r = await scenario('job-order', { expected_actions: KYC_ACTIONS }, [{ tool: 'check_sanctions' }, { tool: 'fetch_customer' }, { tool: 'record_decision' }]);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'out_of_order', decide: 'covered' });
  });

  it('an unplanned action under flag', async () => {
    const r = await scenario('job-flag', { expected_actions: KYC_ACTIONS, unplanned: 'flag' }, [...KYC_STEPS, { tool: 'export_data' }]);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.report.unplanned).toMatchObject({ policy: 'flag', finding: true, actions: [{ seq: 4, tool: 'export_data' }] });
    expect(r.report.findings.map((f: { code: string }) => f.code)).toEqual(['unplanned_action']);
    expect(r.report.result).toBe('findings');
  });

  it('an unplanned action under allow', async () => {
    const r = await scenario('job-allow', { expected_actions: KYC_ACTIONS, unplanned: 'allow' }, [...KYC_STEPS, { tool: 'export_data' }]);
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.report.unplanned).toMatchObject({ policy: 'allow', finding: false, actions: [{ seq: 4, tool: 'export_data' }] });
    expect(r.report.result).toBe('full_coverage');
  });

  it('a rebuilt truncation (six of eight) is caught by the original endpoint commitment', async () => {
    const job = 'job-trunc';
    await registerPlan(eightStepPlan(job));
    const full = buildTimeline(job, EIGHT_STEPS);
    const rebuilt = buildTimeline(job, EIGHT_STEPS.slice(0, 6));
    await recordReceipts(rebuilt, EIGHT_STEPS);
    await recordEntries(rebuilt);
    await recordCommitment(job, commitmentFor(full), rebuilt);
    const r = await issue({ job_id: job });
    expect(r.report.integrity).toMatchObject({ verdict: 'valid', entry_count: 6, commitment: { state: 'non_binding', truncation: 'detected', truncation_detected: true, missing_entries: 2 } });
    expect(statuses(r.report)).toEqual({
      'open-ticket': 'covered',
      'fetch-customer': 'covered',
      'check-sanctions': 'covered',
      'score-risk': 'covered',
      'draft-decision': 'covered',
      'approve-limit': 'covered',
      'notify-customer': 'missing',
      'close-ticket': 'missing',
    });
    expect(r.report.findings.map((f: { code: string }) => f.code)).toEqual(['truncation_detected', 'commitment_non_binding', 'missing', 'missing']);
    const page = await t.http.get(`/coverage/${r.report_id}`);
    expect(page.text).toContain('truncation detected');
    // Issue 12: the site's layout, a headline in words, links to the job, the plan version, every entry and receipt.
    expect(page.text).toContain('<header class="site">');
    expect(page.text).toContain('<a href="/docs">API docs</a>');
    // Issue 27: the findings named in words (the first three, then a count), not only counted.
    expect(page.text).toContain(`<div class="line bad" id="verdict-line"><span aria-hidden="true"><bdi>✗</bdi></span> <bdi>Coverage: 4 FINDINGS: TRUNCATION DETECTED (commitment ${r.report.findings[0].commitment}); COMMITMENT NON BINDING; notify-customer: MISSING; and 1 more (6/8 expected actions covered)</bdi></div>`);
    expect(page.text).toContain('<div class="line bad sub" id="commitment-line"><span aria-hidden="true"><bdi>✗</bdi></span> <bdi>Endpoint commitment: TRUNCATION DETECTED (2 missing)</bdi></div>');
    expect(page.text).toContain(`<a id="subject" href="/jobs/${job}">`);
    expect(page.text).toContain(`<a id="plan-version" href="/api/plans/${r.report.plan.plan_id}/versions/1">`);
    for (const e of rebuilt) {
      expect(page.text).toContain(`href="/jobs/${job}?after=${e.seq - 1}#entry-${e.seq}"`);
      expect(page.text).toContain(`href="/run/${String(e.id).toLowerCase()}"`);
    }
    for (const c of r.report.integrity.commitments ?? []) expect(page.text).toContain(`href="/jobs/${job}#commitment-${c.commitment}"`);
  });

  it('a plan registered after execution began is marked; amendments are versions; as-of reports use the plan of their time', async () => {
    const job = 'job-late';
    const tl = buildTimeline(job, KYC_STEPS);
    // Execution began with the first receipt an entry of the job names (docs/coverage.md), not with the first entry.
    const early = (await head()) + 1;
    await recordReceipts(tl, KYC_STEPS);
    await recordEntries(tl.slice(0, 1));
    const none = await post('/api/coverage-reports', { job_id: job, as_of_position: await head() }, t.keys.auditor);
    const late = await post('/api/plans', { job_id: job, title: 'late', expected_actions: KYC_ACTIONS.slice(0, 2) }, t.keys.compliance);
    expect(late.status).toBe(201);
    const plan = late.body as { plan_id: string; digest: string; position: number };
    // Issue 27: recorded (201), and the writer is told what it means, in a header and in the body.
    expect(late.body.registered_after_execution_began).toBe(true);
    expect(late.headers.warning).toBe('299 - "plan registered after execution began: coverage reports against it carry the finding plan_registered_after_execution_began (it could have been written to fit what was recorded)"');
    expect(late.body.warnings).toEqual([
      {
        code: 'plan_registered_after_execution_began',
        message: `plan version 1 was recorded at ledger position ${plan.position}, after execution of job ${job} began (its first recorded event is at position ${early}): every coverage report judged against this version carries the finding plan_registered_after_execution_began, because a plan written after the fact could have been written to fit what was recorded. The version is recorded and stays so; register plans before the job runs.`,
      },
    ]);
    await recordEntries(tl.slice(1));
    await recordCommitment(job, commitmentFor(tl), tl);

    const r1 = await issue({ job_id: job });
    expect(r1.report.plan).toMatchObject({ plan_id: plan.plan_id, version: 1, registered_after_execution_began: true, execution_first_position: early });
    expect(r1.report.findings.map((f: { code: string }) => f.code)).toEqual(['plan_registered_after_execution_began', 'unplanned_action']);
    const page = await t.http.get(`/coverage/${r1.report_id}`);
    expect(page.text).toContain('Registered after execution began');

    // One plan per job.
    const dup = await post('/api/plans', { job_id: job, title: 'again', expected_actions: KYC_ACTIONS }, t.keys.compliance);
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: 'plan_exists', plan_id: plan.plan_id });

    // Amend: version 2, both readable.
    const badAmend = await post(`/api/plans/${plan.plan_id}/amendments`, { job_id: 'other-job', title: 'x', expected_actions: [] }, t.keys.compliance);
    expect(badAmend.status).toBe(422);
    expect(badAmend.body.reasons).toHaveLength(2);
    const stale = await post(`/api/plans/${plan.plan_id}/amendments`, { title: 'v2', expected_actions: KYC_ACTIONS, supersedes_version: 7 }, t.keys.compliance);
    expect(stale.status).toBe(409);
    const beforeAmend = await head();
    const am = await post(`/api/plans/${plan.plan_id}/amendments`, { title: 'v2', expected_actions: KYC_ACTIONS, reason: 'add the decision', supersedes_version: 1 }, t.keys.compliance);
    expect(am.status).toBe(201);
    expect(am.body).toMatchObject({ plan_id: plan.plan_id, version: 2, reason: 'add the decision', superseded_by: null, registered_after_execution_began: true });
    expect(am.body.warnings.map((w: { code: string }) => w.code)).toEqual(['plan_registered_after_execution_began']);
    expect(am.headers.warning).toMatch(/^299 - "plan registered after execution began: /);
    // A read of the version carries no write warnings.
    expect((await t.http.get(`/api/plans/${plan.plan_id}/versions/2`).set('Authorization', `Bearer ${t.keys.auditor}`)).body.warnings).toBeUndefined();
    // Plans are read with a compliance, auditor or admin key (S13: not by producers, not anonymously).
    const read = (path: string) => t.http.get(path).set('Authorization', `Bearer ${t.keys.auditor}`);
    const all = await read(`/api/plans/${plan.plan_id}`);
    expect(all.body).toMatchObject({ plan_id: plan.plan_id, job_id: job, current_version: 2 });
    expect(all.body.versions.map((v: { version: number; superseded_by: number | null }) => [v.version, v.superseded_by])).toEqual([[1, 2], [2, null]]);
    const v1 = await read(`/api/plans/${plan.plan_id}/versions/1`);
    expect(v1.body.plan).toMatchObject({ job_id: job, title: 'late' });
    expect(v1.body.plan.expected_actions).toHaveLength(2);
    expect(v1.body.digest).toBe(plan.digest);
    expect((await read(`/api/plans/${plan.plan_id}/versions/3`)).status).toBe(404);
    expect((await read(`/api/plans?job_id=${job}`)).body.plan_id).toBe(plan.plan_id);

    const r2 = await issue({ job_id: job });
    expect(r2.report.plan).toMatchObject({ version: 2, superseded_versions: [1], registered_after_execution_began: true });
    expect(statuses(r2.report)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    const asOf = await issue({ job_id: job, as_of_position: beforeAmend });
    expect(asOf.report.plan.version).toBe(1);
    expect((await issue({ job_id: job, as_of_position: r1.as_of_position })).digest).toBe(r1.digest);

    // Before the plan existed: 422 no_plan; beyond the head: 422.
    expect(none.status).toBe(422);
    expect(none.body.error).toBe('no_plan');
    const beyond = await post('/api/coverage-reports', { job_id: job, as_of_position: (await head()) + 10 }, t.keys.auditor);
    expect(beyond.body.error).toBe('position_beyond_head');
  });

  it('reports as of an earlier position: later entries are not seen', async () => {
    const job = 'job-asof';
    await registerPlan({ job_id: job, title: 'as of', expected_actions: KYC_ACTIONS });
    const tl = buildTimeline(job, KYC_STEPS);
    await recordReceipts(tl, KYC_STEPS);
    await recordEntries(tl.slice(0, 2));
    const mid = await head();
    await recordEntries(tl.slice(2));
    const r = await issue({ job_id: job, as_of_position: mid });
    expect(statuses(r.report)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'missing' });
    expect(r.report.integrity).toMatchObject({ entry_count: 2, verdict: 'invalid', reasons: ['not_closed'], commitment: { state: 'absent' } });
    const now = await issue({ job_id: job });
    expect(statuses(now.report)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(now.report.findings.map((f: { code: string }) => f.code)).toEqual(['truncation_not_excluded']);
  });

  it('covers a workflow from its steps and step receipts', async () => {
    const wf = uuidFor('coverage-workflow');
    await registerPlan({ workflow_id: wf.toUpperCase(), title: 'wf', expected_actions: [{ action_id: 'f', tool: 'fetch_customer' }, { action_id: 's', tool: 'check_sanctions', after: ['f'] }] });
    const tl = buildTimeline('wf-steps', [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }]);
    await recordReceipts(tl, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions', status: 'error' }]);
    const workflow = {
      type: 'verifiable-workflow-receipt',
      version: '1',
      workflow_id: wf,
      receipt_id: uuidFor('coverage-workflow-receipt'),
      session_id: 's',
      goal: 'g',
      status: 'ok',
      steps: tl.map((e, i) => ({ seq: i + 1, tool: e.tool, receipt_id: e.id, receipt_hash: '0'.repeat(64), started_at: '2026-10-01T12:00:00Z', ended_at: '2026-10-01T12:00:01Z', status: 'ok' })),
      merkle_root: '0'.repeat(64),
      output_hash: '0'.repeat(64),
      verify_url: `https://ledger.test/workflow/${wf}`,
    };
    const db = t.app.get(DatabaseService);
    const ledger = t.app.get(LedgerService);
    await db.write((tx) =>
      ledger.append(tx, streams.workflow(wf), 0, [
        { type: 'WorkflowReceiptRecorded', data: { workflow_id: wf, receipt_id: workflow.receipt_id, raw: JSON.stringify(workflow), assembled: false, output: null, verdict_at_record: 'valid', reasons: [] } },
      ], SYSTEM),
    );
    const r = await issue({ workflow_id: wf });
    expect(r.report.subject).toEqual({ workflow_id: wf });
    expect(statuses(r.report)).toEqual({ f: 'covered', s: 'failed' });
    expect(r.report.integrity).toMatchObject({ kind: 'workflow', recorded: true, commitment: { state: 'not_applicable' } });
  });

  it('reads timelines recorded through the timelines API (entries appended, imported, commitment with witness metadata)', async () => {
    const job = 'job-api';
    await registerPlan(eightStepPlan(job));
    const full = buildTimeline(job, EIGHT_STEPS);
    const rebuilt = buildTimeline(job, EIGHT_STEPS.slice(0, 6));
    const appended = await post(`/api/jobs/${job}/entries`, rebuilt, t.keys.producer);
    expect(appended.status).toBe(201);
    const c = await post(`/api/jobs/${job}/commitments`, { ...commitmentFor(full), witness: 'witness.example', retrieved_at: '2026-10-02T08:05:00Z' }, t.keys.producer);
    expect(c.status).toBe(201);
    const r = await issue({ job_id: job });
    expect(r.report.integrity).toMatchObject({ entry_count: 6, commitment: { state: 'non_binding', truncation: 'detected', missing_entries: 2 } });
    expect(statuses(r.report)['close-ticket']).toBe('missing');
    expect(r.report.counts).toMatchObject({ covered: 6, missing: 2, unknown_outcome_evidence: 6 });

    const imported = 'job-api-import';
    await registerPlan(eightStepPlan(imported));
    const whole = buildTimeline(imported, EIGHT_STEPS);
    expect((await t.http.put(`/api/jobs/${imported}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).send(JSON.stringify(whole))).status).toBe(201);
    expect((await post(`/api/jobs/${imported}/commitments`, commitmentFor(whole), t.keys.producer)).status).toBe(201);
    const ri = await issue({ job_id: imported });
    expect(ri.report.integrity.commitment.state).toBe('binding');
    expect(ri.report.counts.covered).toBe(8);
  });

  it('the README walkthrough with examples/coverage', async () => {
    const ex = (f: string): string => readFileSync(join(__dirname, '../../examples/coverage', f), 'utf8');
    const plan = await post('/api/plans', ex('plan.json'), t.keys.compliance);
    expect(plan.status).toBe(201);
    const batch = await t.http.post('/api/receipts/batch').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/x-ndjson').send(ex('receipts.ndjson'));
    expect(batch.body).toMatchObject({ accepted: 5, rejected: 0 });
    expect((await post('/api/jobs/job-kyc-42/entries', ex('timeline.json'), t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-kyc-42/commitments', ex('commitment.json'), t.keys.producer)).status).toBe(201);
    const r = await issue({ job_id: 'job-kyc-42' });
    expect(r.report.result).toBe('full_coverage');
    expect(r.report.coverage.ratio).toBe('5/5');
    const found = await t.http.get('/api/plans?job_id=job-kyc-42').set('Authorization', `Bearer ${t.keys.compliance}`);
    expect(found.body.versions[0].plan.job_id).toBe('job-kyc-42');
  });

  it('needs the auditor role and a well-formed request to issue a report', async () => {
    expect((await post('/api/coverage-reports', { job_id: 'job-full' }, t.keys.compliance)).status).toBe(403);
    const bad = await post('/api/coverage-reports', { job_id: 'j', workflow_id: 'x', as_of_position: 1.5 }, t.keys.auditor);
    expect(bad.status).toBe(400);
    expect(bad.body.reasons).toEqual(['two_subjects', 'invalid_position']);
    expect(bad.body.problems).toHaveLength(2);
    expect((await post('/api/coverage-reports', { job_id: 'job-nobody' }, t.keys.auditor)).body.error).toBe('no_plan');
    expect((await t.http.get('/api/coverage-reports/nope')).status).toBe(404);
    expect((await t.http.get('/coverage/nope')).status).toBe(404);
  });

  it('keeps the ledger verifiable and the plan and report projections rebuildable', async () => {
    const db = t.app.get(DatabaseService);
    const snap = async () => {
      const out: Record<string, string[]> = {};
      for (const table of ['plans', 'plan_versions', 'coverage_reports']) {
        out[table] = (await db.query(`SELECT * FROM ${table}`)).map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])))).sort();
      }
      return out;
    };
    const live = await snap();
    await t.app.get(LedgerService).rebuildProjections();
    expect(await snap()).toEqual(live);
    expect((await t.http.get('/api/ledger/verify')).body.ok).toBe(true);
  });
});
