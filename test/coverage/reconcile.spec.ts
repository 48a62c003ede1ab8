import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../../src/core/coverage/canonical';
import { NormalizedPlan, planDigest, validatePlan } from '../../src/core/coverage/plan';
import { CoverageReportContent, reconcile, ReconcileInput, reportDigest } from '../../src/core/coverage/reconcile';
import type { Attestation } from '../../src/core/aer1/attestation';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, Entry, receiptFor, receiptsFor, StepSpec, uuidFor } from './fixtures';

function plan(doc: Record<string, unknown>): NormalizedPlan {
  const v = validatePlan(doc);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  return v.plan;
}

const META = { plan_id: 'p1', version: 1, registered_at: '2026-10-01T11:00:00.000Z', registered_position: 1, execution_first_position: 2, superseded_versions: [] };

/** A ledger-issued attestation: the scenarios' binding commitment is one the ledger issued (issue 15: a self-asserted one is a finding). */
const LEDGER_ISSUED: Attestation = { kind: 'ledger_issued', by: ['ledger.test'], detail: 'issued by this ledger when the timeline closed', problem: null };

interface Opts {
  commitment?: unknown | null;
  attestation?: Attestation;
  receipts?: Map<string, unknown>;
  timeline?: Entry[];
  meta?: Partial<ReconcileInput['plan_meta']>;
}

function run(planDoc: Record<string, unknown>, steps: StepSpec[], opts: Opts = {}): CoverageReportContent {
  const job = planDoc.job_id as string;
  const timeline = opts.timeline ?? buildTimeline(job, steps);
  const commitment = opts.commitment === undefined ? commitmentFor(timeline) : opts.commitment;
  return reconcile({
    plan: plan(planDoc),
    plan_meta: { ...META, ...opts.meta },
    record: { kind: 'timeline', entries: timeline, commitments: commitment === null ? [] : [{ value: commitment, recorded_position: 99, attestation: opts.attestation ?? LEDGER_ISSUED }] },
    receipts: opts.receipts ?? receiptsFor(timeline, steps),
    as_of_position: 100,
  });
}

const statuses = (r: CoverageReportContent): Record<string, string> => Object.fromEntries(r.actions.map((a) => [a.action_id, a.status]));

const KYC = {
  job_id: 'job-kyc',
  title: 'KYC refresh',
  unplanned: 'flag',
  expected_actions: [
    { action_id: 'fetch', tool: 'fetch_customer' },
    { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'] },
    { action_id: 'decide', tool: 'record_decision', after: ['screen'] },
  ],
};

describe('reconcile: the scenarios', () => {
  it('full coverage: every action covered, binding commitment, no findings', () => {
    const r = run(KYC, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.result).toBe('full_coverage');
    expect(r.findings).toEqual([]);
    expect(r.integrity).toMatchObject({ verdict: 'valid', entry_count: 3, commitment: { state: 'binding', truncation: 'excluded', reasons: [] } });
    expect(r.coverage).toEqual({ covered: 3, expected: 3, ratio: '3/3', percent: '100.0' });
    expect(r.actions[1].evidence.map((e) => e.seq)).toEqual([2]);
    expect(r.actions[1].evidence[0]).toMatchObject({ receipt_id: uuidFor('job-kyc/2'), outcome: 'success', receipt_status: 'ok', receipt_recorded: true });
    expect(r.plan.registered_after_execution_began).toBe(false);
    expect(r.does_not_prove.join(' ')).toMatch(/Coverage is not outcome/);
  });

  it('an action missing', () => {
    const r = run(KYC, [{ tool: 'fetch_customer' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'missing', decide: 'out_of_order' });
    expect(r.actions[1]).toMatchObject({ evidence: [], conditions: ['missing'] });
    expect(r.actions[2].order).toEqual([{ after: 'screen', ok: false, detail: 'screen has no complete accepted evidence (0 of 1)' }]);
    expect(r.counts).toMatchObject({ covered: 1, missing: 1, out_of_order: 1 });
    expect(r.result).toBe('findings');
    expect(r.findings.map((f) => f.code)).toEqual(['missing', 'out_of_order']);
  });

  it('an action evidenced only by LOGGED BY AGENT is reported_only', () => {
    const r = run(KYC, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions', provenance: 'LOGGED BY AGENT' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'reported_only', decide: 'out_of_order' });
    expect(r.actions[1].evidence).toEqual([]);
    expect(r.actions[1].reported_only_evidence.map((e) => [e.seq, e.provenance_class])).toEqual([[2, 'LOGGED BY AGENT']]);
  });

  it('an action whose only receipt failed', () => {
    const r = run(KYC, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions', status: 'provider_unavailable' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'failed', decide: 'covered' });
    expect(r.actions[1]).toMatchObject({ conditions: ['failed'], failed_count: 1, successful_count: 0 });
    expect(r.actions[1].evidence[0]).toMatchObject({ seq: 2, outcome: 'failure', receipt_status: 'provider_unavailable' });
  });

  it('a failed receipt does not make an action failed when success is not required', () => {
    const doc = { ...KYC, expected_actions: [KYC.expected_actions[0], { ...KYC.expected_actions[1], must_succeed: false }, KYC.expected_actions[2]] };
    const r = run(doc, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions', status: 'error' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
  });

  it('an after constraint broken', () => {
    const r = run(KYC, [{ tool: 'check_sanctions' }, { tool: 'fetch_customer' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'out_of_order', decide: 'covered' });
    expect(r.actions[1].order).toEqual([{ after: 'fetch', ok: false, detail: 'fetch complete only at seq 2, not before seq 1' }]);
  });

  it('an unplanned action under flag is a finding', () => {
    const r = run(KYC, [{ tool: 'fetch_customer' }, { tool: 'export_data' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.unplanned).toMatchObject({ policy: 'flag', finding: true });
    expect(r.unplanned.actions.map((u) => [u.seq, u.tool])).toEqual([[2, 'export_data']]);
    expect(r.findings).toEqual([{ code: 'unplanned_action', seq: 2, message: 'seq 2: tool export_data is not in the plan' }]);
    expect(r.result).toBe('findings');
  });

  it('an unplanned action under allow is listed, not a finding', () => {
    const r = run({ ...KYC, unplanned: 'allow' }, [{ tool: 'fetch_customer' }, { tool: 'export_data' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.unplanned).toMatchObject({ policy: 'allow', finding: false });
    expect(r.unplanned.actions).toHaveLength(1);
    expect(r.counts.unplanned_actions).toBe(1);
    expect(r.findings).toEqual([]);
    expect(r.result).toBe('full_coverage');
  });

  it('a rebuilt truncation (six of eight) is caught by the original commitment: the cut actions are missing', () => {
    const job = 'job-credit-8';
    const full = buildTimeline(job, EIGHT_STEPS);
    const commitment = commitmentFor(full);
    const rebuilt = buildTimeline(job, EIGHT_STEPS.slice(0, 6)); // entry six re-closed, digests recomputed
    expect(rebuilt[5].close).toBe(true);
    const r = run(eightStepPlan(job), EIGHT_STEPS.slice(0, 6), { timeline: rebuilt, commitment });
    expect(r.integrity.verdict).toBe('valid'); // the chain alone cannot see it (S7.3)
    expect(r.integrity.commitment).toMatchObject({
      state: 'non_binding',
      truncation: 'detected',
      truncation_detected: true,
      final_entry_substituted: false,
      missing_entries: 2,
      reasons: ['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch'],
    });
    expect(statuses(r)).toEqual({
      'open-ticket': 'covered',
      'fetch-customer': 'covered',
      'check-sanctions': 'covered',
      'score-risk': 'covered',
      'draft-decision': 'covered',
      'approve-limit': 'covered',
      'notify-customer': 'missing',
      'close-ticket': 'missing',
    });
    expect(r.findings.map((f) => f.code)).toEqual(['truncation_detected', 'commitment_non_binding', 'missing', 'missing']);
    expect(r.integrity.commitment.statement).toMatch(/truncation detected/);
  });

  it('the same truncation without a commitment: missing, and truncation not excluded', () => {
    const job = 'job-credit-8';
    const rebuilt = buildTimeline(job, EIGHT_STEPS.slice(0, 6));
    const r = run(eightStepPlan(job), EIGHT_STEPS.slice(0, 6), { timeline: rebuilt, commitment: null });
    expect(r.integrity.commitment).toMatchObject({ state: 'absent', truncation: 'not_excluded' });
    expect(r.findings.map((f) => f.code)).toEqual(['truncation_not_excluded', 'missing', 'missing']);
  });

  it('the corpus vectors commitment-binding and commitment-truncation', () => {
    const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: { timeline: Entry[]; commitment: unknown } }[] };
    const v = (id: string) => corpus.vectors.find((x) => x.id === id)!.input;
    const doc = { job_id: 'job-eight', title: 'eight fetches', expected_actions: [{ action_id: 'fetch', tool: 'fetch_page', min_count: 8, max_count: 8 }] };
    const binding = run(doc, [], { timeline: v('commitment-binding').timeline, commitment: v('commitment-binding').commitment, receipts: new Map() });
    expect(statuses(binding)).toEqual({ fetch: 'covered' });
    expect(binding.integrity.commitment.state).toBe('binding');
    expect(binding.counts.unknown_outcome_evidence).toBe(8);
    expect(binding.result).toBe('full_coverage');
    const cut = run(doc, [], { timeline: v('commitment-truncation').timeline, commitment: v('commitment-truncation').commitment, receipts: new Map() });
    expect(statuses(cut)).toEqual({ fetch: 'missing' });
    expect(cut.actions[0].evidence).toHaveLength(6);
    expect(cut.integrity.commitment).toMatchObject({ state: 'non_binding', truncation: 'detected', missing_entries: 2 });
  });

  it('a plan registered after execution began is marked', () => {
    const r = run(KYC, [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }], { meta: { registered_position: 7, execution_first_position: 3 } });
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.plan.registered_after_execution_began).toBe(true);
    expect(r.findings.map((f) => f.code)).toEqual(['plan_registered_after_execution_began']);
    expect(r.result).toBe('findings');
  });
});

describe('reconcile: matching rules', () => {
  const SAME_TOOL = {
    job_id: 'job-m',
    title: 'two searches then a summary',
    expected_actions: [
      { action_id: 'first-search', tool: 'search', min_count: 1, max_count: 1 },
      { action_id: 'second-search', tool: 'search', min_count: 1, max_count: 2 },
      { action_id: 'summary', tool: 'summarise', after: ['first-search', 'second-search'] },
    ],
  };

  it('shares entries of one tool in plan order: min_count first, then up to max_count, the rest over_count on the last action', () => {
    const r = run(SAME_TOOL, [{ tool: 'search' }, { tool: 'search' }, { tool: 'search' }, { tool: 'summarise' }, { tool: 'search' }]);
    expect(r.actions[0].evidence.map((e) => e.seq)).toEqual([1]);
    expect(r.actions[1].evidence.map((e) => e.seq)).toEqual([2, 3]);
    expect(r.actions[1].over_count_evidence.map((e) => e.seq)).toEqual([5]);
    expect(statuses(r)).toEqual({ 'first-search': 'covered', 'second-search': 'over_count', summary: 'covered' });
  });

  it('judges order by the seq at which each prerequisite reached min_count', () => {
    const doc = { job_id: 'job-o', title: 'x', expected_actions: [{ action_id: 'a', tool: 'a', min_count: 2 }, { action_id: 'b', tool: 'b', after: ['a'] }] };
    expect(statuses(run(doc, [{ tool: 'a' }, { tool: 'b' }, { tool: 'a' }]))).toEqual({ a: 'covered', b: 'out_of_order' });
    expect(statuses(run(doc, [{ tool: 'a' }, { tool: 'a' }, { tool: 'b' }]))).toEqual({ a: 'covered', b: 'covered' });
  });

  it('a failed call retried successfully above max_count is over_count, not failed', () => {
    const doc = { job_id: 'job-r', title: 'x', expected_actions: [{ action_id: 'pay', tool: 'pay', max_count: 1 }] };
    const r = run(doc, [{ tool: 'pay', status: 'timeout' }, { tool: 'pay' }]);
    expect(r.actions[0]).toMatchObject({ status: 'over_count', conditions: ['over_count'], successful_count: 1, failed_count: 1 });
  });

  it('shows an outcome without a recorded receipt as unknown and does not count it as failed', () => {
    const r = run(KYC, [{ tool: 'fetch_customer', status: null }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    expect(statuses(r)).toEqual({ fetch: 'covered', screen: 'covered', decide: 'covered' });
    expect(r.actions[0].evidence[0]).toMatchObject({ outcome: 'unknown', receipt_recorded: false });
    expect(r.counts.unknown_outcome_evidence).toBe(1);
  });

  it('never upgrades: an entry whose recorded receipt names another provenance class is not accepted evidence', () => {
    const tl = buildTimeline('job-kyc', [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    const receipts = receiptsFor(tl, []);
    receipts.set(tl[0].id, { ...receiptFor(tl[0]), provenance_class: 'LOGGED BY AGENT' });
    const r = run(KYC, [], { timeline: tl, receipts });
    expect(statuses(r)).toEqual({ fetch: 'reported_only', screen: 'out_of_order', decide: 'covered' });
    expect(r.actions[0].reported_only_evidence[0].receipt_provenance_class).toBe('LOGGED BY AGENT');
  });

  it('accepts LOGGED BY AGENT when the plan says so, and a specific EXECUTED BY system only', () => {
    const doc = {
      job_id: 'job-p',
      title: 'x',
      expected_actions: [
        { action_id: 'note', tool: 'note', accepted_provenance: ['LOGGED BY AGENT'] },
        { action_id: 'run', tool: 'run', accepted_provenance: ['EXECUTED BY OTHER'] },
      ],
    };
    const r = run(doc, [{ tool: 'note', provenance: 'LOGGED BY AGENT' }, { tool: 'run' }]);
    expect(statuses(r)).toEqual({ note: 'covered', run: 'reported_only' });
  });

  it('reports a substituted final entry and a commitment for another job', () => {
    const tl = buildTimeline('job-kyc', [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    const other = buildTimeline('job-kyc', [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'export_data' }]);
    const sub = run(KYC, [], { timeline: tl, commitment: commitmentFor(other) });
    expect(sub.integrity.commitment).toMatchObject({ state: 'non_binding', final_entry_substituted: true, truncation_detected: false, reasons: ['commitment_final_digest_mismatch'] });
    expect(sub.findings.map((f) => f.code)).toEqual(['final_entry_substituted', 'commitment_non_binding']);
    const otherJob = run(KYC, [], { timeline: tl, commitment: { ...commitmentFor(tl), job_id: 'job-other' } });
    expect(otherJob.integrity.commitment).toMatchObject({ state: 'non_binding', other_job: true });
    expect(otherJob.integrity.commitment.reasons).toContain('commitment_job_id_mismatch');
  });

  it('with nothing recorded every action is missing', () => {
    const r = reconcile({ plan: plan(KYC), plan_meta: { ...META, execution_first_position: null }, record: { kind: 'timeline', entries: null, commitments: [] }, receipts: new Map(), as_of_position: 5 });
    expect(statuses(r)).toEqual({ fetch: 'missing', screen: 'missing', decide: 'missing' });
    expect(r.findings.map((f) => f.code)).toEqual(['timeline_absent', 'truncation_not_excluded', 'missing', 'missing', 'missing']);
    expect(r.plan.registered_after_execution_began).toBe(false);
  });

  it('is deterministic: same inputs, same canonical content and digest', () => {
    const steps = [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }];
    const a = run(KYC, steps);
    const b = run(KYC, steps);
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(reportDigest(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(reportDigest(a)).toBe(reportDigest(b));
    expect(reportDigest(run(KYC, steps.slice(0, 2)))).not.toBe(reportDigest(a));
  });
});

describe('reconcile: workflows', () => {
  it('matches the workflow steps with the step receipts provenance and status', () => {
    const tl = buildTimeline('wf', [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }]);
    const receipts = new Map<string, unknown>([
      [tl[0].id, receiptFor(tl[0])],
      [tl[1].id, receiptFor(tl[1], 'error')],
    ]);
    const wfId = uuidFor('workflow');
    const workflow = {
      type: 'verifiable-workflow-receipt',
      version: '1',
      workflow_id: wfId,
      receipt_id: uuidFor('workflow-receipt'),
      session_id: 's',
      goal: 'g',
      status: 'ok',
      steps: tl.map((e, i) => ({ seq: i + 1, tool: e.tool, receipt_id: e.id, receipt_hash: '0'.repeat(64), started_at: '2026-10-01T12:00:00Z', ended_at: '2026-10-01T12:00:01Z', status: 'ok' })),
      merkle_root: '0'.repeat(64),
      output_hash: '0'.repeat(64),
      verify_url: `https://ledger.test/workflow/${wfId}`,
    };
    const v = validatePlan({ workflow_id: wfId, title: 'wf', expected_actions: [{ action_id: 'f', tool: 'fetch_customer' }, { action_id: 's', tool: 'check_sanctions', after: ['f'] }] });
    if (!v.ok) throw new Error('plan');
    const r = reconcile({ plan: v.plan, plan_meta: META, record: { kind: 'workflow', workflow }, receipts, as_of_position: 10 });
    expect(statuses(r)).toEqual({ f: 'covered', s: 'failed' });
    expect(r.subject).toEqual({ workflow_id: wfId });
    expect(r.integrity).toMatchObject({ kind: 'workflow', recorded: true, verdict: 'invalid', commitment: { state: 'not_applicable' } });
    expect(r.findings.map((f) => f.code)).toEqual(['workflow_not_valid', 'failed']);
  });
});

describe('plan validation', () => {
  it('reports every problem, not the first', () => {
    const v = validatePlan({
      job_id: 'j',
      title: '',
      unplanned: 'maybe',
      extra: 1,
      expected_actions: [
        { action_id: 'a', tool: 't', min_count: 0, after: ['b'] },
        { action_id: 'a', tool: '', max_count: 1.5 },
        { action_id: 'b', tool: 't', min_count: 3, max_count: 2, accepted_provenance: ['executed by x', 'EXECUTED BY *'], after: ['a', 'zzz', 'b'] },
        { action_id: 'c', tool: 't', must_succeed: 'yes', accepted_provenance: [] },
      ],
    });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.problems.map((p) => `${p.path} ${p.code}`)).toEqual([
      'extra unknown_member',
      'title invalid_title',
      'unplanned invalid_unplanned',
      'expected_actions[0].min_count invalid_min_count',
      'expected_actions[1].action_id duplicate_action_id',
      'expected_actions[1].tool invalid_tool',
      'expected_actions[1].max_count invalid_max_count',
      'expected_actions[2].max_count max_below_min',
      'expected_actions[2].accepted_provenance[0] invalid_provenance',
      'expected_actions[3].accepted_provenance invalid_accepted_provenance',
      'expected_actions[3].must_succeed invalid_must_succeed',
      'expected_actions[2].after[1] unknown_after',
      'expected_actions[2].after[2] after_self',
      'expected_actions after_cycle',
    ]);
    expect(v.problems[v.problems.length - 1].message).toBe('the after constraints form a cycle: "a" -> "b" -> "a"');
  });

  it('needs one subject and a UUID workflow id', () => {
    const base = { title: 't', expected_actions: [{ action_id: 'a', tool: 't' }] };
    const codes = (d: unknown) => { const v = validatePlan(d); return v.ok ? [] : v.problems.map((p) => p.code); };
    expect(codes(base)).toEqual(['missing_subject']);
    expect(codes({ ...base, job_id: 'j', workflow_id: uuidFor('w') })).toEqual(['two_subjects']);
    expect(codes({ ...base, workflow_id: 'not-a-uuid' })).toEqual(['invalid_workflow_id']);
    expect(codes('x')).toEqual(['not_object']);
  });

  it('normalizes defaults and digests the normalized plan', () => {
    const a = plan({ job_id: 'j', title: 't', expected_actions: [{ action_id: 'a', tool: 't' }] });
    expect(a).toEqual({
      subject: { kind: 'job', id: 'j' },
      title: 't',
      unplanned: 'flag',
      expected_actions: [{ action_id: 'a', tool: 't', min_count: 1, max_count: null, accepted_provenance: ['EXECUTED BY *', 'OBSERVED VIA GATEWAY'], must_succeed: true, after: [] }],
    });
    const b = plan({ unplanned: 'flag', expected_actions: [{ tool: 't', action_id: 'a', min_count: 1, accepted_provenance: ['OBSERVED VIA GATEWAY', 'EXECUTED BY *', 'OBSERVED VIA GATEWAY'] }], title: 't', job_id: 'j' });
    expect(planDigest(a)).toBe(planDigest(b));
    expect(canonicalJson(a)).toBe(
      '{"expected_actions":[{"accepted_provenance":["EXECUTED BY *","OBSERVED VIA GATEWAY"],"action_id":"a","after":[],"max_count":null,"min_count":1,"must_succeed":true,"tool":"t"}],"subject":{"id":"j","kind":"job"},"title":"t","unplanned":"flag"}',
    );
  });
});

describe('canonical JSON', () => {
  it('sorts by code point, escapes as the core, carries integers only', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'é/\n'], '\u{1F600}': 0, '\uFFFF': 0 })).toBe('{"a":[true,null,"\\u00e9/\\n"],"b":1,"\\uffff":0,"\\ud83d\\ude00":0}');
    expect(() => canonicalJson({ x: 1.5 })).toThrow(TypeError);
    expect(() => canonicalJson({ x: undefined })).toThrow(TypeError);
  });
});

describe('reconcile: every endpoint commitment judged, entries checked against their receipts (integrity issue)', () => {
  const job = 'job-six';
  const SIX_STEPS = EIGHT_STEPS.slice(0, 6);
  const sixPlan = { job_id: job, title: 'six tools', expected_actions: SIX_STEPS.map((s) => ({ action_id: s.tool, tool: s.tool })) };
  const rebuilt = buildTimeline(job, SIX_STEPS);
  const witness = { ...commitmentFor(buildTimeline(job, EIGHT_STEPS)), witness: 'witness.example' };
  const forged = { ...commitmentFor(rebuilt), witness: 'witness.example' };
  const withCommitments = (list: unknown[]): CoverageReportContent =>
    reconcile({
      plan: plan(sixPlan),
      plan_meta: META,
      record: { kind: 'timeline', entries: rebuilt, commitments: list.map((value, i) => ({ id: `c${i + 1}`, value, recorded_position: 10 + i })) },
      receipts: receiptsFor(rebuilt, SIX_STEPS),
      as_of_position: 100,
    });

  it.each([
    ['witness first', [witness, forged], ['truncation_detected', 'binding']],
    ['forged first', [forged, witness], ['binding', 'truncation_detected']],
  ])('a binding commitment does not hide one that proves truncation (%s)', (_, list, outcomes) => {
    const r = withCommitments(list);
    expect(r.result).toBe('findings');
    expect(r.integrity.commitments.map((c) => c.outcome)).toEqual(outcomes);
    expect(r.integrity.commitment).toMatchObject({ state: 'non_binding', truncation: 'detected', truncation_detected: true, missing_entries: 2, reasons: ['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch'] });
    expect(r.findings.map((f) => [f.code, f.commitment ?? null])).toEqual([
      ['truncation_detected', outcomes[0] === 'binding' ? 'c2' : 'c1'],
      ['commitment_non_binding', null],
    ]);
    expect(r.integrity.commitment.statement).toMatch(/truncation detected.*1 other commitment\(s\) bind the visible timeline; that does not hide a contradiction/);
    expect(r.actions.every((a) => a.status === 'covered')).toBe(true);
  });

  // Issue 15 changed this: the forged one alone binds, but it is self-asserted (it only names a witness), so no full coverage.
  it('the forged one alone binds, but only self-asserted: its named witness is a claim and coverage is not full', () => {
    const r = withCommitments([forged]);
    expect(r.result).toBe('findings');
    expect(r.integrity.commitments).toEqual([
      expect.objectContaining({ commitment: 'c1', recorded_position: 10, outcome: 'binding', binding: true, contradicts: false, reasons: [], witness: { witness: 'witness.example' }, attestation: 'self_asserted', attested_by: [] }),
    ]);
    expect(r.integrity.commitment).toMatchObject({ state: 'binding', truncation: 'excluded', attestation: 'self_asserted' });
    expect(r.findings.map((f) => [f.code, f.commitment ?? null])).toEqual([['commitment_self_asserted', 'c1']]);
    expect(r.findings[0].message).toMatch(/It names witness "witness.example": the poster's claim, not checked/);
    expect(r.does_not_prove.some((t) => /self-asserted/.test(t))).toBe(true);
  });

  it('the same commitment attested by a trusted key, or issued by the ledger, gives full coverage', () => {
    for (const attestation of [
      { kind: 'attested_by' as const, by: ['notary.example'], detail: 'attested by "notary.example"', problem: null },
      { kind: 'ledger_issued' as const, by: ['ledger.test'], detail: 'issued by this ledger', problem: null },
    ]) {
      const r = reconcile({
        plan: plan(sixPlan),
        plan_meta: META,
        record: { kind: 'timeline', entries: rebuilt, commitments: [{ id: 'c1', value: forged, recorded_position: 10, attestation }] },
        receipts: receiptsFor(rebuilt, SIX_STEPS),
        as_of_position: 100,
      });
      expect(r.result).toBe('full_coverage');
      expect(r.findings).toEqual([]);
      expect(r.integrity.commitment.attestation).toBe(attestation.kind);
      expect(r.integrity.commitments[0]).toMatchObject({ attestation: attestation.kind, attested_by: attestation.by });
    }
  });

  it('a self-asserted binding commitment beside a ledger-issued one: the ledger-issued one decides, coverage is full', () => {
    const r = reconcile({
      plan: plan(sixPlan),
      plan_meta: META,
      record: {
        kind: 'timeline',
        entries: rebuilt,
        commitments: [
          { id: 'c1', value: forged, recorded_position: 10 },
          { id: 'c2', value: commitmentFor(rebuilt), recorded_position: 11, attestation: { kind: 'ledger_issued', by: ['ledger.test'], detail: 'issued by this ledger', problem: null } },
        ],
      },
      receipts: receiptsFor(rebuilt, SIX_STEPS),
      as_of_position: 100,
    });
    expect(r.result).toBe('full_coverage');
    expect(r.integrity.commitment).toMatchObject({ attestation: 'ledger_issued', recorded_position: 11 });
    expect(r.integrity.commitments.map((c) => c.attestation)).toEqual(['self_asserted', 'ledger_issued']);
  });

  it('two reports on the same commitments have the same digest; another order gives another report', () => {
    expect(reportDigest(withCommitments([witness, forged]))).toBe(reportDigest(withCommitments([witness, forged])));
    expect(reportDigest(withCommitments([witness, forged]))).not.toBe(reportDigest(withCommitments([forged, witness])));
  });

  it('an entry whose receipt names another tool and other bytes is no evidence and a receipt_mismatch finding', () => {
    const doc = { job_id: 'job-wire', title: 'pay out', expected_actions: [{ action_id: 'wire', tool: 'wire_money' }] };
    const tl = buildTimeline('job-wire', [{ tool: 'wire_money' }]);
    const receipts = new Map<string, unknown>([[tl[0].id, receiptFor({ ...tl[0], tool: 'harmless_lookup', canonical_bytes: Buffer.from('other').toString('base64') })]]);
    const r = run(doc, [], { timeline: tl, receipts });
    expect(r.actions[0]).toMatchObject({ status: 'missing', evidence: [], reported_only_evidence: [], successful_count: 0 });
    expect(r.actions[0].unaccepted_unassigned[0].receipt_mismatch).toEqual(['tool', 'canonical_bytes', 'output_hash']);
    expect(r.findings.map((f) => f.code)).toEqual(['receipt_mismatch', 'missing']);
  });

  it.each([
    ['the tool only', (e: Entry) => ({ ...receiptFor(e), tool: 'harmless_lookup' }), ['tool']],
    ['the output hash only', (e: Entry) => ({ ...receiptFor(e), output_hash: 'sha256:' + '0'.repeat(64) }), ['output_hash']],
    ['the bytes (and so the hash)', (e: Entry) => receiptFor({ ...e, canonical_bytes: Buffer.from('x').toString('base64') }), ['canonical_bytes', 'output_hash']],
    ['the core-form tool name', (e: Entry) => ({ ...receiptFor(e), tool: { name: 'other', version: '1', scope: 's' } }), ['tool']],
  ])('names the disagreement: %s', (_, make, fields) => {
    const doc = { job_id: 'job-one', title: 't', expected_actions: [{ action_id: 'a', tool: 'fetch_customer' }] };
    const tl = buildTimeline('job-one', [{ tool: 'fetch_customer' }]);
    const r = run(doc, [], { timeline: tl, receipts: new Map([[tl[0].id, make(tl[0])]]) });
    expect(r.actions[0].status).toBe('missing');
    expect(r.actions[0].unaccepted_unassigned[0].receipt_mismatch).toEqual(fields);
  });

  it('a receipt that agrees, in core form with tool.name, is accepted evidence', () => {
    const doc = { job_id: 'job-one', title: 't', expected_actions: [{ action_id: 'a', tool: 'fetch_customer' }] };
    const tl = buildTimeline('job-one', [{ tool: 'fetch_customer' }]);
    const core = { ...receiptFor(tl[0]), tool: { name: 'fetch_customer', version: '1', scope: 's' } };
    const r = run(doc, [], { timeline: tl, receipts: new Map([[tl[0].id, core]]) });
    expect(r.actions[0].status).toBe('covered');
    expect(r.actions[0].evidence[0].receipt_mismatch).toBeUndefined();
  });

  it('a provenance disagreement alone stays reported-only at most, and is named', () => {
    const tl = buildTimeline('job-kyc', [{ tool: 'fetch_customer' }, { tool: 'check_sanctions' }, { tool: 'record_decision' }]);
    const receipts = receiptsFor(tl, []);
    receipts.set(tl[0].id, { ...receiptFor(tl[0]), provenance_class: 'LOGGED BY AGENT' });
    const r = run(KYC, [], { timeline: tl, receipts });
    expect(r.actions[0]).toMatchObject({ status: 'reported_only' });
    expect(r.actions[0].reported_only_evidence[0].receipt_mismatch).toEqual(['provenance_class']);
    expect(r.findings.map((f) => f.code)).toEqual(['receipt_mismatch', 'reported_only', 'out_of_order']);
  });
});
