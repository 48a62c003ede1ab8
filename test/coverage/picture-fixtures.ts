/**
 * Reports for the coverage picture and PDF tests: one plan of 5 actions with
 * every status the picture marks, and one of N (500) actions over a long
 * timeline. Built with the real reconcile() over fixture timelines.
 */
import { validatePlan } from '../../src/core/coverage/plan';
import { CoverageReportContent, reconcile } from '../../src/core/coverage/reconcile';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyOutcome } from '../../src/core/outcomes/outcome';
import { buildTimeline, commitmentFor, Entry, receiptsFor, StepSpec } from './fixtures';

function report(planDoc: Record<string, unknown>, steps: StepSpec[]): CoverageReportContent {
  const v = validatePlan(planDoc);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  const timeline = buildTimeline(planDoc.job_id as string, steps);
  return reconcile({
    plan: v.plan,
    plan_meta: { plan_id: 'p-picture', version: 2, registered_at: '2026-10-01T11:00:00.000Z', registered_position: 1, execution_first_position: 2, superseded_versions: [1] },
    record: { kind: 'timeline', entries: timeline, commitments: [{ value: commitmentFor(timeline), recorded_position: 99 }] },
    receipts: receiptsFor(timeline, steps),
    as_of_position: 100,
  });
}

/** The plan of the 5-action picture (a job id with markup in it, to see it escaped). */
export const FIVE_PLAN = {
  job_id: 'job-<kyc>&5',
  title: 'KYC refresh <b>5</b>',
  unplanned: 'flag',
  expected_actions: [
    { action_id: 'fetch', tool: 'fetch_customer' },
    { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'] },
    { action_id: 'score', tool: 'score_risk', after: ['screen'] },
    { action_id: 'decide', tool: 'record_decision', after: ['score'] },
    { action_id: 'notify<script>', tool: 'notify_customer', after: ['decide'] },
  ],
};

/** covered, out_of_order, reported_only, failed, missing, and one unplanned action. */
export const FIVE_STEPS: StepSpec[] = [
  { tool: 'check_sanctions' },
  { tool: 'fetch_customer' },
  { tool: 'score_risk', provenance: 'LOGGED BY AGENT' },
  { tool: 'record_decision', status: 'provider_unavailable' },
  { tool: 'delete_records' },
  { tool: 'record_decision', status: 'error' },
];

export function fiveActionReport(): CoverageReportContent {
  return report(FIVE_PLAN, FIVE_STEPS);
}

/** A plan of `n` actions (tool t-i after t-(i-1)) over a timeline with gaps, agent reports, failures, swaps and unplanned calls. */
export function manyActionReport(n = 500): CoverageReportContent {
  const actions = Array.from({ length: n }, (_, i) => ({ action_id: `step-${String(i).padStart(3, '0')}`, tool: `t${i}`, ...(i > 0 ? { after: [`step-${String(i - 1).padStart(3, '0')}`] } : {}) }));
  const steps: StepSpec[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 41 === 17) continue; // missing
    if (i % 97 === 50) steps.push({ tool: 'shell_exec' }); // unplanned
    if (i % 53 === 9) steps.push({ tool: `t${i}`, provenance: 'LOGGED BY AGENT' });
    else if (i % 67 === 30) steps.push({ tool: `t${i}`, status: 'error' });
    else steps.push({ tool: `t${i}` });
  }
  // Two swaps: out of order.
  for (const k of [120, 333]) [steps[k], steps[k + 1]] = [steps[k + 1], steps[k]];
  return report({ job_id: 'job-many', title: `A plan of ${n} actions`, unplanned: 'flag', expected_actions: actions }, steps);
}

const EXAMPLE_OUTCOMES = join(__dirname, '../../examples/outcomes');
const exampleJson = (f: string): unknown => JSON.parse(readFileSync(join(EXAMPLE_OUTCOMES, f), 'utf8'));

/**
 * The README's job-pay-7 (examples/outcomes) reconciled with these outcome
 * files in this (ledger) order: `['outcome-settled.json']` is full coverage,
 * `['outcome-settled.json', 'outcome-reversed.json']` the payment confirmed
 * then charged back (outcome contradicted). The commitment is the ledger's
 * own (a self-asserted one would be a finding of its own). `rename` replaces
 * the payment's action id, `system` the reporting system's name (hostile
 * strings), as if the plan and the outcomes had said so.
 */
export function payReport(outcomeFiles: string[], opts: { rename?: string; system?: string } = {}): CoverageReportContent {
  const planDoc = exampleJson('plan.json') as { expected_actions: { action_id: string; after?: string[]; outcome?: { from_system: string } }[] };
  if (opts.rename) planDoc.expected_actions[1].action_id = opts.rename;
  if (opts.system) planDoc.expected_actions[1].outcome!.from_system = opts.system;
  const v = validatePlan(planDoc);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  const timeline = exampleJson('timeline.json') as Entry[];
  const receipts = new Map<string, unknown>();
  for (const l of readFileSync(join(EXAMPLE_OUTCOMES, 'receipts.ndjson'), 'utf8').split('\n').filter(Boolean)) {
    const r = JSON.parse(l) as { id: string };
    receipts.set(r.id.toLowerCase(), r);
  }
  const outcomes = outcomeFiles.map((f) => {
    const o = verifyOutcome(exampleJson(f));
    if (!o.fields) throw new Error(o.reasons.join(','));
    return opts.system ? { ...o.fields, system: opts.system } : o.fields;
  });
  return reconcile({
    plan: v.plan,
    plan_meta: { plan_id: 'p-pay', version: 1, registered_at: '2026-10-01T11:00:00.000Z', registered_position: 1, execution_first_position: 2, superseded_versions: [] },
    record: { kind: 'timeline', entries: timeline, commitments: [{ value: exampleJson('commitment.json'), recorded_position: 9, attestation: { kind: 'ledger_issued', by: ['ledger.test'], detail: 'issued by this ledger when the timeline closed', problem: null } }] },
    receipts,
    as_of_position: 12,
    outcomes,
  });
}
