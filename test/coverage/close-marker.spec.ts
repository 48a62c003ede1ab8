/**
 * The ledger's closing marker in coverage (docs/coverage.md): the last entry
 * of a timeline whose tool is `aer1.job.close` and which carries
 * `close: true` is the close, not an action; an entry with that tool
 * anywhere else, or without `close: true`, is counted like any other (it
 * cannot be written through the API, but an imported or offline file may
 * hold one).
 */
import { validatePlan } from '../../src/core/coverage/plan';
import { CLOSE_MARKER_TOOL, CoverageReportContent, reconcile, reportDigest } from '../../src/core/coverage/reconcile';
import { renderCoverageText } from '../../src/cli/commands/coverage';
import { buildTimeline, commitmentFor, Entry, receiptsFor, StepSpec, uuidFor } from './fixtures';

const PLAN = {
  job_id: 'job-close',
  title: 'two tools',
  unplanned: 'flag',
  expected_actions: [
    { action_id: 'fetch', tool: 'fetch_customer' },
    { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'] },
  ],
};

/** The valid timeline of `steps`, closed by its last entry unless `closeLast` is false (then open: nothing follows it to link). */
function timeline(steps: StepSpec[], closeLast = true): Entry[] {
  const t = buildTimeline(PLAN.job_id, steps);
  if (!closeLast) delete t[t.length - 1].close;
  return t;
}

function report(steps: StepSpec[], closeLast = true): CoverageReportContent {
  const v = validatePlan(PLAN);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  const t = timeline(steps, closeLast);
  return reconcile({
    plan: v.plan,
    plan_meta: { plan_id: 'p-close', version: 1, registered_at: '2026-10-01T11:00:00.000Z', registered_position: 1, execution_first_position: 2, superseded_versions: [] },
    record: { kind: 'timeline', entries: t, commitments: [{ value: commitmentFor(t), recorded_position: 99, attestation: { kind: 'ledger_issued', by: ['ledger.test'], detail: 'issued by this ledger', problem: null } }] },
    receipts: receiptsFor(t, steps),
    as_of_position: 100,
  });
}

const FETCH = { tool: 'fetch_customer' };
const SCREEN = { tool: 'check_sanctions' };
const MARKER = { tool: CLOSE_MARKER_TOOL };

describe('the ledger closing marker', () => {
  test('the last entry aer1.job.close with close: true is the close, not an action: full coverage', () => {
    const r = report([FETCH, SCREEN, MARKER]);
    expect(r.result).toBe('full_coverage');
    expect(r.findings).toEqual([]);
    expect(r.unplanned).toEqual({ policy: 'flag', finding: false, actions: [] });
    expect(r.close).toEqual({ seq: 3, tool: 'aer1.job.close', receipt_id: uuidFor('job-close/3') });
    expect(r.counts).toMatchObject({ recorded_actions: 2, unplanned_actions: 0, covered: 2 });
    // The marker still counts in the chain: three entries, closed, bound by the commitment.
    expect(r.integrity).toMatchObject({ verdict: 'valid', entry_count: 3, closed: true, commitment: { state: 'binding' } });
    // `aer1 coverage` says so.
    const text = renderCoverageText(r, reportDigest(r), { used: 3, rejected: [] });
    expect(text).toContain('unplanned actions (flag): none');
    expect(text).toContain(`close: seq 3, the ledger's closing marker (aer1.job.close, receipt ${uuidFor('job-close/3')}): not an action`);
  });

  test('an aer1.job.close entry that is not the last is an action (unplanned)', () => {
    const r = report([FETCH, MARKER, SCREEN]);
    expect(r.close).toBeUndefined();
    expect(r.unplanned.actions.map((a) => [a.seq, a.tool])).toEqual([[2, 'aer1.job.close']]);
    expect(r.findings.map((f) => [f.code, f.seq])).toEqual([['unplanned_action', 2]]);
    expect(r.counts.recorded_actions).toBe(3);
  });

  test('a last aer1.job.close entry without close: true is an action (unplanned)', () => {
    const r = report([FETCH, SCREEN, MARKER], false);
    expect(r.close).toBeUndefined();
    expect(r.unplanned.actions.map((a) => [a.seq, a.tool])).toEqual([[3, 'aer1.job.close']]);
    expect(r.findings.map((f) => f.code)).toContain('unplanned_action');
    expect(r.counts.recorded_actions).toBe(3);
  });

  test('a timeline without the marker has no close member: its report content (and digest) is as before', () => {
    const r = report([FETCH, SCREEN]);
    expect(r.result).toBe('full_coverage');
    expect('close' in r).toBe(false);
    expect(renderCoverageText(r, reportDigest(r), { used: 2, rejected: [] })).not.toContain('closing marker');
  });

  test('only the exact reserved name is the marker', () => {
    const t = report([FETCH, SCREEN, { tool: 'aer1.job.closed' }]);
    expect('close' in t).toBe(false);
    expect(t.unplanned.actions.map((a) => a.tool)).toEqual(['aer1.job.closed']);
  });
});
