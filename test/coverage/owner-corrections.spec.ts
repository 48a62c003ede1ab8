/**
 * Integrity issue, second attack (coverage): who recorded the subject
 * (plan `recorded_by_owner`, `integrity.recorded_by`) and corrected receipts
 * (S9) in the pure reconciliation. See test/reliability/README.md.
 */
import { NormalizedPlan, planDigest, validatePlan } from '../../src/core/coverage/plan';
import { CoverageReportContent, reconcile, ReconcileInput, Recorders, reportDigest } from '../../src/core/coverage/reconcile';
import { renderCoverageText } from '../../src/cli/commands/coverage';
import { buildTimeline, commitmentFor, Entry, receiptFor, receiptsFor, StepSpec } from './fixtures';

function plan(doc: Record<string, unknown>): NormalizedPlan {
  const v = validatePlan(doc);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  return v.plan;
}

const META = { plan_id: 'p1', version: 1, registered_at: '2026-10-01T11:00:00.000Z', registered_position: 1, execution_first_position: 2, superseded_versions: [] };
const JOB = 'job-kyc-77';
const STEPS: StepSpec[] = [{ tool: 'fetch_customer' }, { tool: 'wire_money' }];
const PLAN = {
  job_id: JOB,
  title: 'KYC and wire',
  unplanned: 'flag',
  expected_actions: [
    { action_id: 'fetch', tool: 'fetch_customer' },
    { action_id: 'wire', tool: 'wire_money', must_succeed: true, after: ['fetch'] },
  ],
};
const by = (owner: string, key = `${owner}-key`): Recorders => ({ owners: [owner], key_names: [key], unattributed: 0 });

function run(planDoc: Record<string, unknown>, extra: Partial<ReconcileInput> = {}, timeline: Entry[] = buildTimeline(JOB, STEPS)): CoverageReportContent {
  return reconcile({
    plan: plan(planDoc),
    plan_meta: META,
    // The ledger-issued commitment of the close (issue 15: a self-asserted one alone is a finding).
    record: { kind: 'timeline', entries: timeline, commitments: [{ value: commitmentFor(timeline), recorded_position: 99, attestation: { kind: 'ledger_issued', by: ['ledger.test'], detail: 'issued by this ledger', problem: null } }] },
    receipts: receiptsFor(timeline, STEPS),
    as_of_position: 100,
    ...extra,
  });
}

/** Recorders for the timeline and every receipt of it, all by `owner`. */
function allBy(owner: string, timeline: Entry[] = buildTimeline(JOB, STEPS)): NonNullable<ReconcileInput['recorders']> {
  return { record: by(owner), receipts: new Map(timeline.map((e) => [e.id.toLowerCase(), by(owner)])) };
}

describe('plan: recorded_by_owner', () => {
  it('is optional, checked by the identifier rule, and left out when absent (old plans keep their digest)', () => {
    expect(plan({ ...PLAN, recorded_by_owner: 'platform-a' }).recorded_by_owner).toBe('platform-a');
    const without = plan(PLAN);
    expect('recorded_by_owner' in without).toBe(false);
    expect(planDigest(without)).not.toBe(planDigest(plan({ ...PLAN, recorded_by_owner: 'platform-a' })));
    for (const bad of ['', 7, null, 'a\u202Eb', ' padded']) {
      const v = validatePlan({ ...PLAN, recorded_by_owner: bad });
      expect(v.ok).toBe(false);
      if (!v.ok) expect(v.problems.map((p) => p.path)).toEqual(['recorded_by_owner']);
    }
  });
});

describe('reconcile: who recorded the job', () => {
  it('a timeline recorded by another owner than the plan names is no evidence: every action missing, recorded_by_other_owner', () => {
    const timeline = buildTimeline(JOB, STEPS);
    const r = run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: allBy('producer-b') }, timeline);
    expect(r.result).toBe('findings');
    expect(r.actions.map((a) => [a.action_id, a.status])).toEqual([
      ['fetch', 'missing'],
      ['wire', 'missing'],
    ]);
    expect(r.integrity.recorded_by).toEqual({
      checked: true,
      owner: 'producer-b',
      owners: ['producer-b'],
      key_names: ['producer-b-key'],
      unattributed_events: 0,
      plan_owner: 'platform-a',
      plan_owner_check: 'recorded_by_other_owner',
      // Its receipts too: not the plan owner's.
      receipts_by_other_owner: timeline.map((e) => ({ receipt_id: e.id.toLowerCase(), owners: ['producer-b'], key_names: ['producer-b-key'] })).sort((x, y) => (x.receipt_id < y.receipt_id ? -1 : 1)),
    });
    const f = r.findings.find((x) => x.code === 'recorded_by_other_owner');
    expect(f?.message).toContain('"producer-b"');
    expect(f?.message).toContain('"platform-a"');
    expect(r.counts).toMatchObject({ covered: 0, missing: 2, recorded_actions: 2 });
    // The record is not evidence at all: no per-receipt findings on top of the one that says why.
    expect(r.findings.map((x) => x.code)).toEqual(['recorded_by_other_owner', 'missing', 'missing']);
  });

  it('a timeline with one event by another owner (or naming no key) does not satisfy the plan owner', () => {
    const mixed = { owners: ['platform-a', 'producer-b'], key_names: ['a', 'b'], unattributed: 0 };
    expect(run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: { ...allBy('platform-a'), record: mixed } }).integrity.recorded_by).toMatchObject({ owner: null, plan_owner_check: 'recorded_by_other_owner' });
    const old = { owners: ['platform-a'], key_names: ['a'], unattributed: 1 };
    expect(run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: { ...allBy('platform-a'), record: old } }).integrity.recorded_by).toMatchObject({ owner: null, plan_owner_check: 'recorded_by_other_owner' });
  });

  it('recorded by the plan owner: satisfied, full coverage', () => {
    const r = run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: allBy('platform-a') });
    expect(r.result).toBe('full_coverage');
    expect(r.integrity.recorded_by).toMatchObject({ checked: true, owner: 'platform-a', plan_owner_check: 'satisfied' });
  });

  it('a plan naming no owner: the report still names the recorder', () => {
    const r = run(PLAN, { recorders: allBy('producer-b') });
    expect(r.result).toBe('full_coverage');
    expect(r.integrity.recorded_by).toMatchObject({ checked: true, owner: 'producer-b', key_names: ['producer-b-key'], plan_owner: null, plan_owner_check: 'not_named' });
  });

  it('a receipt named by an entry but recorded by another owner than the plan names is no evidence (receipt_recorded_by_other_owner)', () => {
    const timeline = buildTimeline(JOB, STEPS);
    const rec = allBy('platform-a', timeline);
    const wireId = timeline[1].id.toLowerCase();
    (rec.receipts as Map<string, Recorders>).set(wireId, by('producer-b'));
    // A plan naming no owner: stated (a gateway's key may record receipts for another's timeline), not judged.
    const plain = run(PLAN, { recorders: rec }, timeline);
    expect(plain.result).toBe('full_coverage');
    expect(plain.integrity.recorded_by.receipts_by_other_owner).toEqual([{ receipt_id: wireId, owners: ['producer-b'], key_names: ['producer-b-key'] }]);
    for (const doc of [{ ...PLAN, recorded_by_owner: 'platform-a' }]) {
      const r = run(doc, { recorders: rec }, timeline);
      expect(r.actions.find((a) => a.action_id === 'wire')?.status).toBe('missing');
      expect(r.integrity.recorded_by.receipts_by_other_owner).toEqual([{ receipt_id: wireId, owners: ['producer-b'], key_names: ['producer-b-key'] }]);
      const f = r.findings.filter((x) => x.code === 'receipt_recorded_by_other_owner');
      expect(f).toHaveLength(1);
      expect(f[0]).toMatchObject({ seq: 2 });
      expect(r.actions[0].unaccepted_unassigned).toEqual([]);
      expect(r.actions[1].unaccepted_unassigned[0]).toMatchObject({ seq: 2, receipt_recorded_by: ['producer-b'], receipt_mismatch: ['recorded_by'] });
      expect(r.findings.some((x) => x.code === 'receipt_mismatch')).toBe(false);
    }
  });

  it('offline (no recorders): a plan owner is "not checked offline", a finding, never satisfied', () => {
    const r = run({ ...PLAN, recorded_by_owner: 'platform-a' });
    expect(r.result).toBe('findings');
    expect(r.integrity.recorded_by).toMatchObject({ checked: false, plan_owner: 'platform-a', plan_owner_check: 'not_checked_offline' });
    expect(r.findings.map((f) => f.code)).toEqual(['recorded_by_owner_not_checked']);
    expect(r.does_not_prove.join(' ')).toMatch(/not checked offline/);
    // A plan naming no owner offline: not a finding, but still said.
    const plain = run(PLAN);
    expect(plain.result).toBe('full_coverage');
    expect(plain.integrity.recorded_by).toMatchObject({ checked: false, plan_owner_check: 'not_named' });
  });

  it('the offline text output says the recorder is not checked', () => {
    const r = run({ ...PLAN, recorded_by_owner: 'platform-a' });
    const text = renderCoverageText(r, reportDigest(r), { used: 2, rejected: [] });
    expect(text).toContain('recorded by: not checked offline (files carry no keys or owners); plan recorded_by_owner platform-a: not checked offline');
    expect(text).toContain('recorded_by_owner_not_checked');
    const online = run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: allBy('producer-b') });
    expect(renderCoverageText(online, reportDigest(online), { used: 2, rejected: [] })).toContain('recorded by: producer-b (keys producer-b-key); plan recorded_by_owner platform-a: recorded by other owner');
  });

  it('is reproducible: the same inputs give the same digest', () => {
    const a = reportDigest(run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: allBy('producer-b') }));
    const b = reportDigest(run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: allBy('producer-b') }));
    expect(a).toBe(b);
    expect(reportDigest(run({ ...PLAN, recorded_by_owner: 'platform-a' }, { recorders: allBy('platform-a') }))).not.toBe(a);
  });
});

describe('reconcile: corrected receipts (S9)', () => {
  const timeline = buildTimeline(JOB, STEPS);
  const wire = timeline[1];
  const rid = wire.id.toLowerCase();
  const correction = (id: string, status: string): unknown => ({ ...receiptFor(wire, status), id });

  function withCorrections(chain: [string, string][]): Partial<ReconcileInput> {
    const receipts = receiptsFor(timeline, STEPS);
    for (const [id, status] of chain) receipts.set(id, correction(id, status));
    return { receipts, corrections: new Map([[rid, chain.map(([id]) => id)]]) };
  }

  it('a correction to a failure makes a must_succeed action failed, and names the correction', () => {
    const r = run(PLAN, withCorrections([['c0000000-0000-4000-8000-000000000001', 'error']]), timeline);
    const w = r.actions.find((a) => a.action_id === 'wire')!;
    expect(w.status).toBe('failed');
    expect(w.evidence[0]).toMatchObject({
      seq: 2,
      receipt_id: wire.id,
      outcome: 'failure',
      receipt_status: 'error',
      superseded_by: 'c0000000-0000-4000-8000-000000000001',
      correction_chain: ['c0000000-0000-4000-8000-000000000001'],
      original_outcome: 'success',
      original_status: 'ok',
    });
    expect(r.result).toBe('findings');
    const f = r.findings.filter((x) => x.code === 'evidence_corrected');
    expect(f).toHaveLength(1);
    expect(f[0].message).toContain(rid);
    expect(f[0].message).toContain('c0000000-0000-4000-8000-000000000001');
  });

  it('follows corrections of corrections to the latest', () => {
    const r = run(PLAN, withCorrections([['c0000000-0000-4000-8000-000000000001', 'error'], ['c0000000-0000-4000-8000-000000000002', 'ok']]), timeline);
    const w = r.actions.find((a) => a.action_id === 'wire')!;
    expect(w.status).toBe('covered');
    expect(w.evidence[0]).toMatchObject({ outcome: 'success', superseded_by: 'c0000000-0000-4000-8000-000000000002', correction_chain: ['c0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000002'] });
    // Never silent: a corrected receipt is always a finding, even when the outcome still holds.
    expect(r.result).toBe('findings');
    expect(r.findings.map((x) => x.code)).toEqual(['evidence_corrected']);
  });

  it('a correction naming another tool makes the entry no evidence', () => {
    const receipts = receiptsFor(timeline, STEPS);
    const cid = 'c0000000-0000-4000-8000-000000000003';
    receipts.set(cid, { ...receiptFor(wire, 'ok'), id: cid, tool: 'refund_money' });
    const r = run(PLAN, { receipts, corrections: new Map([[rid, [cid]]]) }, timeline);
    expect(r.actions.find((a) => a.action_id === 'wire')?.status).toBe('missing');
    expect(r.findings.find((x) => x.code === 'receipt_mismatch')?.message).toContain('tool');
  });
});

describe('reconcile: who recorded a workflow', () => {
  it('a workflow recorded by another owner than the plan names: every step is no evidence', () => {
    const tl = buildTimeline('wf', [{ tool: 'fetch_customer' }]);
    const wfId = 'a0000000-0000-4000-8000-0000000000aa';
    const workflow = { type: 'verifiable-workflow-receipt', version: '1', workflow_id: wfId, steps: [{ seq: 1, tool: 'fetch_customer', receipt_id: tl[0].id, status: 'ok' }] };
    const p = plan({ workflow_id: wfId, title: 'wf', recorded_by_owner: 'platform-a', expected_actions: [{ action_id: 'f', tool: 'fetch_customer' }] });
    const base = { plan: p, plan_meta: META, record: { kind: 'workflow' as const, workflow }, receipts: new Map<string, unknown>([[tl[0].id.toLowerCase(), receiptFor(tl[0])]]), as_of_position: 10 };
    const other = reconcile({ ...base, recorders: { record: by('producer-b'), receipts: new Map([[tl[0].id.toLowerCase(), by('platform-a')]]) } });
    expect(other.actions[0].status).toBe('missing');
    expect(other.integrity.recorded_by).toMatchObject({ owner: 'producer-b', plan_owner_check: 'recorded_by_other_owner' });
    // (This minimal workflow does not verify: workflow_not_valid comes first, as before.)
    const f = other.findings.find((x) => x.code === 'recorded_by_other_owner');
    expect(f?.message).toContain('workflow receipt was recorded by owner "producer-b"');
    const own = reconcile({ ...base, recorders: { record: by('platform-a'), receipts: new Map([[tl[0].id.toLowerCase(), by('platform-a')]]) } });
    expect(own.actions[0].status).toBe('covered');
    expect(own.integrity.recorded_by.plan_owner_check).toBe('satisfied');
  });
});
