/**
 * Outcome evidence in the pure reconciliation (issue 18): each scenario its
 * own case with exact statuses. The plan requires `payment.settled` from
 * PAYMENTS for the payment call; outcomes are matched by receipt id, the
 * latest of the required system and effect in ledger order decides.
 */
import { reconcile, reportDigest, CoverageReportContent, ReconcileInput } from '../../src/core/coverage/reconcile';
import { validatePlan, NormalizedPlan, planDigest } from '../../src/core/coverage/plan';
import { verifyOutcome } from '../../src/core/outcomes/outcome';
import type { OutcomeRecord } from '../../src/core/coverage/outcomes';
import { buildTimeline, commitmentFor, receiptsFor, StepSpec } from './fixtures';
import { outcomeFor, OutcomeSpec, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import type { Attestation } from '../../src/core/aer1/attestation';

/** The scenarios' binding commitment is the ledger's own (issue 15: a self-asserted one would be a finding of its own). */
const LEDGER_ISSUED: Attestation = { kind: 'ledger_issued', by: ['ledger.test'], detail: 'issued by this ledger when the timeline closed', problem: null };

const JOB = 'job-pay';

function plan(doc: Record<string, unknown>): NormalizedPlan {
  const v = validatePlan(doc);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  return v.plan;
}

function record(o: Record<string, string>): OutcomeRecord {
  const v = verifyOutcome(o);
  if (!v.fields) throw new Error(v.reasons.join(','));
  return v.fields;
}

/** Reconcile the payment job (receipts "ok" unless the steps say otherwise) with these outcomes, in this (ledger) order. */
function run(outcomes: Omit<OutcomeSpec, 'job_id' | 'receipt_id'>[], opts: { steps?: StepSpec[]; outcome?: Record<string, unknown>; receiptOf?: number } = {}): CoverageReportContent {
  const steps = opts.steps ?? PAYMENT_STEPS;
  const tl = buildTimeline(JOB, steps);
  const receiptId = tl[opts.receiptOf ?? 1].id;
  const input: ReconcileInput = {
    plan: plan(paymentPlan(JOB, opts.outcome)),
    plan_meta: { plan_id: null, version: null, registered_at: null, registered_position: null, execution_first_position: null, superseded_versions: [] },
    record: { kind: 'timeline', entries: tl, commitments: [{ value: commitmentFor(tl), recorded_position: null, attestation: LEDGER_ISSUED }] },
    receipts: receiptsFor(tl, steps),
    as_of_position: null,
    outcomes: outcomes.map((o) => record(outcomeFor({ job_id: JOB, receipt_id: receiptId, ...o }))),
  };
  return reconcile(input);
}

const pay = (r: CoverageReportContent) => r.actions.find((a) => a.action_id === 'pay')!;
const codes = (r: CoverageReportContent) => r.findings.map((f) => f.code);

describe('outcome evidence in coverage reports', () => {
  it('confirmed: PAYMENTS confirms payment.settled for the payment call; full coverage', () => {
    const r = run([{ name: 'c1' }]);
    expect(pay(r).status).toBe('covered');
    expect(pay(r).outcome).toMatchObject({ status: 'confirmed', required: { effect: 'payment.settled', from_system: 'PAYMENTS', within_seconds: null } });
    expect(pay(r).outcome!.evidence).toHaveLength(1);
    expect(pay(r).outcome!.evidence[0]).toMatchObject({ seq: 2, status: 'confirmed', receipt_outcome: 'success', late: false, elapsed_ms: 60_000 });
    expect(pay(r).outcome!.evidence[0].outcomes.map((o) => [o.result, o.counted, o.note])).toEqual([['confirmed', true, 'latest']]);
    expect(r.actions.find((a) => a.action_id === 'lookup')!.outcome).toBeUndefined();
    expect(r.outcomes!.counts).toEqual({ required: 1, confirmed: 1, contradicted: 0, unconfirmed: 0, wrong_system: 0, outcomes_matched: 1 });
    expect(r.findings).toEqual([]);
    expect(r.result).toBe('full_coverage');
  });

  it('contradicted: the agent\'s receipt says ok, the payment system says failed', () => {
    const r = run([{ name: 'f1', result: 'failed' }]);
    expect(pay(r).status).toBe('covered');
    expect(pay(r).outcome!.status).toBe('contradicted');
    expect(pay(r).outcome!.detail).toContain('while the agent\'s receipt');
    expect(codes(r)).toEqual(['outcome_contradicted']);
    expect(r.result).toBe('findings');
  });

  it('settled, then reversed: the later outcome supersedes the confirmation (contradicted, supersession shown)', () => {
    const r = run([{ name: 's1', observed_at: '2026-10-01T12:01:00Z' }, { name: 'r1', result: 'reversed', observed_at: '2026-10-02T09:00:00Z' }]);
    const e = pay(r).outcome!.evidence[0];
    expect(pay(r).outcome!.status).toBe('contradicted');
    const [settled, reversed] = e.outcomes;
    expect([settled.result, settled.counted, settled.note, settled.superseded_by]).toEqual(['confirmed', false, 'superseded', reversed.outcome_id]);
    expect([reversed.result, reversed.counted, reversed.note, reversed.superseded_by]).toEqual(['reversed', true, 'latest', null]);
    expect(e.deciding_outcome).toBe(reversed.outcome_id);
    expect(pay(r).outcome!.detail).toContain(`supersedes the confirmation ${settled.outcome_id}`);
    expect(codes(r)).toEqual(['outcome_contradicted']);
  });

  it('a confirmation after a failure report is the latest word: confirmed', () => {
    const r = run([{ name: 'nf', result: 'not_found' }, { name: 'late-ok', observed_at: '2026-10-01T12:05:00Z' }]);
    expect(pay(r).outcome!.status).toBe('confirmed');
    expect(r.result).toBe('full_coverage');
  });

  it('unconfirmed: nothing from the payment system', () => {
    const r = run([]);
    expect(pay(r).status).toBe('covered');
    expect(pay(r).outcome).toMatchObject({ status: 'unconfirmed', evidence: [{ seq: 2, status: 'unconfirmed', outcomes: [], deciding_outcome: null }] });
    expect(codes(r)).toEqual(['outcome_unconfirmed']);
    expect(r.result).toBe('findings');
    expect(r.outcomes!.counts).toMatchObject({ required: 1, unconfirmed: 1, outcomes_matched: 0 });
  });

  it('wrong_system: an outcome from CRM is shown, never counted', () => {
    const r = run([{ name: 'crm', system: 'CRM' }]);
    expect(pay(r).outcome!.status).toBe('wrong_system');
    expect(pay(r).outcome!.evidence[0].outcomes.map((o) => [o.system, o.counted, o.note])).toEqual([['CRM', false, 'other_system']]);
    expect(codes(r)).toEqual(['outcome_wrong_system']);
  });

  it('an outcome of the right system for another effect does not confirm', () => {
    const r = run([{ name: 'other-effect', effect: 'payment.initiated' }]);
    expect(pay(r).outcome!.status).toBe('unconfirmed');
    expect(pay(r).outcome!.evidence[0].outcomes.map((o) => o.note)).toEqual(['other_effect']);
  });

  it('within a window, late: confirmed 600 s after the receipt with within_seconds 300 is unconfirmed (late)', () => {
    const outcome = { effect: 'payment.settled', from_system: 'PAYMENTS', within_seconds: 300 };
    const inTime = run([{ name: 'w-ok', observed_at: '2026-10-01T12:04:59Z' }], { outcome });
    expect(pay(inTime).outcome!.evidence[0]).toMatchObject({ status: 'confirmed', elapsed_ms: 299_000, late: false });
    const late = run([{ name: 'w-late', observed_at: '2026-10-01T12:10:00Z' }], { outcome });
    expect(pay(late).outcome!.status).toBe('unconfirmed');
    expect(pay(late).outcome!.evidence[0]).toMatchObject({ status: 'unconfirmed', elapsed_ms: 600_000, late: true });
    expect(codes(late)).toEqual(['outcome_unconfirmed']);
    expect(pay(late).outcome!.detail).toContain('late (within_seconds 300)');
  });

  it('the agent recorded a failure and the system agrees: not confirmed, not a contradiction', () => {
    const steps: StepSpec[] = [{ tool: 'fetch_customer' }, { tool: 'send_payment', status: 'provider_error' }];
    const r = run([{ name: 'agree', result: 'failed' }], { steps, outcome: { effect: 'payment.settled', from_system: 'PAYMENTS' } });
    expect(pay(r).status).toBe('failed');
    expect(pay(r).outcome!.status).toBe('unconfirmed');
    expect(codes(r)).toEqual(['failed', 'outcome_unconfirmed']);
  });

  it('outcomes for a call whose action requires none are listed as information, never counted', () => {
    const r = run([{ name: 'pay-ok' }]);
    const withInfo = run([{ name: 'lookup-info', system: 'CRM', effect: 'customer.read' }], { receiptOf: 0 });
    expect(r.outcomes!.information).toEqual([]);
    expect(withInfo.outcomes!.information).toEqual([
      expect.objectContaining({ seq: 1, action_id: 'lookup', outcomes: [expect.objectContaining({ system: 'CRM', effect: 'customer.read', counted: false, note: 'information' })] }),
    ]);
    expect(pay(withInfo).outcome!.status).toBe('unconfirmed');
  });

  it('a plan without outcome requirements and no outcomes: the report has no outcomes member (digests as before)', () => {
    const tl = buildTimeline(JOB, PAYMENT_STEPS);
    const doc = { job_id: JOB, title: 't', expected_actions: [{ action_id: 'lookup', tool: 'fetch_customer' }, { action_id: 'pay', tool: 'send_payment' }] };
    const base = { plan: plan(doc), plan_meta: { plan_id: null, version: null, registered_at: null, registered_position: null, execution_first_position: null, superseded_versions: [] }, record: { kind: 'timeline' as const, entries: tl, commitments: [] }, receipts: receiptsFor(tl, PAYMENT_STEPS), as_of_position: null };
    const without = reconcile(base);
    const withEmpty = reconcile({ ...base, outcomes: [] });
    expect(without.outcomes).toBeUndefined();
    expect(without.actions.every((a) => a.outcome === undefined)).toBe(true);
    expect(reportDigest(withEmpty)).toBe(reportDigest(without));
    // A plan without `outcome` keeps its digest: the member is left out.
    expect(plan(doc).expected_actions[1]).not.toHaveProperty('outcome');
    expect(planDigest(plan(doc))).not.toBe(planDigest(plan(paymentPlan(JOB))));
  });

  it('plans: outcome {effect, from_system, within_seconds?} is validated with every problem', () => {
    const v = validatePlan({ job_id: 'j', title: 't', expected_actions: [{ action_id: 'a', tool: 'x', outcome: { effect: '', from_system: 'P\u202eX', within_seconds: 0, extra: 1 } }, { action_id: 'b', tool: 'y', outcome: 'PAYMENTS' }] });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.problems.map((p) => [p.path, p.code])).toEqual([
      ['expected_actions[0].outcome.extra', 'unknown_member'],
      ['expected_actions[0].outcome.effect', 'invalid_outcome_effect'],
      ['expected_actions[0].outcome.from_system', 'unsupported_character'],
      ['expected_actions[0].outcome.within_seconds', 'invalid_within_seconds'],
      ['expected_actions[1].outcome', 'invalid_outcome'],
    ]);
    expect(plan(paymentPlan('j', { effect: 'payment.settled', from_system: 'PAYMENTS', within_seconds: 60 })).expected_actions[1].outcome).toEqual({ effect: 'payment.settled', from_system: 'PAYMENTS', within_seconds: 60 });
  });
});

describe('verifyOutcome (the commitment discipline of a receipt)', () => {
  const good = outcomeFor({ name: 'v', job_id: JOB, receipt_id: '6f1f6c1e-1a1b-5c2d-8e3f-4a5b6c7d8e9f' });
  it('a well-formed report verifies', () => {
    expect(verifyOutcome(good)).toMatchObject({ verdict: 'valid', reasons: [], fields: { system: 'PAYMENTS', result: 'confirmed' } });
  });
  it('a bad commitment is refused with the receipt reason codes', () => {
    const hash = good.output_hash;
    const flipped = hash.slice(0, -1) + (hash.endsWith('0') ? '1' : '0');
    expect(verifyOutcome({ ...good, output_hash: flipped })).toMatchObject({ verdict: 'invalid', reasons: ['output_hash_mismatch'], fields: null });
    expect(verifyOutcome({ ...good, canonical_bytes: good.canonical_bytes + '\n' }).reasons).toEqual(['invalid_base64']);
    expect(verifyOutcome({ ...good, canonical_bytes: 'QQ' }).reasons).toEqual(['invalid_base64']);
    expect(verifyOutcome({ ...good, output_hash: hash.toUpperCase() }).reasons).toEqual(['invalid_output_hash_format']);
  });
  it('every member is required and checked; unknown members are refused', () => {
    const { system: _s, ...noSystem } = good;
    expect(verifyOutcome(noSystem).reasons).toEqual(['missing_field:system']);
    expect(verifyOutcome({ ...good, result: 'settled' }).reasons).toEqual(['invalid_field:result']);
    expect(verifyOutcome({ ...good, observed_at: '2026-02-30T00:00:00Z' }).reasons).toEqual(['invalid_timestamp']);
    expect(verifyOutcome({ ...good, outcome_id: 'x' }).reasons).toEqual(['invalid_id']);
    expect(verifyOutcome({ ...good, supersedes: 'x' }).reasons).toEqual(['invalid_field:unknown_member']);
    expect(verifyOutcome({ ...good, effect: 'pay\u200bment' }).reasons).toEqual(['invalid_field:effect']);
    expect(verifyOutcome([good]).reasons).toEqual(['not_object']);
  });
});
