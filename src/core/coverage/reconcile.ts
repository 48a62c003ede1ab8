/**
 * Coverage reconciliation (rev 09 article: "register the expected-action set
 * before execution; reconcile visible receipts against it afterwards").
 *
 * A pure function: a normalized plan, the recorded timeline (or workflow
 * receipt), the recorded receipts and the endpoint commitment in, a report
 * out. No framework, database or file imports: the ledger service and the
 * `aer1 coverage` CLI call the same code. The matching rules are documented
 * in docs/coverage.md and restated on {@link allocate}.
 *
 * The report is built here from its parts: evidence.ts (recorded actions and
 * their receipts), allocation.ts (which evidence counts for which expected
 * action), judgement.ts (each action's status), integrity.ts (the verdict and
 * the endpoint commitments); types.ts holds the report's types.
 */
import { canonicalDigest } from './canonical';
import { PlanSubject, subjectMember } from './plan';
import { allocate } from './allocation';
import { actionsFromTimeline, actionsFromWorkflow, evidenceItem, noEvidence } from './evidence';
import { timelineIntegrity, workflowIntegrity } from './integrity';
import { judge } from './judgement';
import { ActionStatus, CoverageReportContent, DOES_NOT_PROVE, Finding, IntegritySection, MATCHING_RULES_REF, PlanMeta, ReconcileInput, RecordedAction, REPORT_FORMAT } from './types';

/** Build the coverage report content. Pure and deterministic: the same inputs give the same content, and so the same digest. */
export function reconcile(input: ReconcileInput): CoverageReportContent {
  const { plan, record, receipts } = input;
  const subject: PlanSubject = plan.subject;
  let integrity: IntegritySection;
  let recorded: RecordedAction[];
  if (record.kind === 'timeline') {
    integrity = timelineIntegrity(subject.id, record.entries, record.commitments).integrity;
    recorded = record.entries === null ? [] : actionsFromTimeline(record.entries);
  } else {
    integrity = workflowIntegrity(record.workflow, receipts);
    recorded = record.workflow === null ? [] : actionsFromWorkflow(record.workflow, receipts);
  }
  const items = recorded.map((a) => evidenceItem(a, receipts));
  const { allocations, unplanned } = allocate(plan, items);
  const actions = judge(allocations);

  const meta = input.plan_meta;
  const after = meta.registered_position !== null && meta.registered_position !== undefined && input.as_of_position !== null
    ? meta.execution_first_position !== null && meta.registered_position > meta.execution_first_position
    : null;
  const planMeta: PlanMeta = {
    plan_id: meta.plan_id,
    version: meta.version,
    digest: meta.digest ?? canonicalDigest(plan),
    title: plan.title,
    unplanned: plan.unplanned,
    registered_at: meta.registered_at,
    registered_position: meta.registered_position,
    execution_first_position: meta.execution_first_position,
    registered_after_execution_began: after,
    superseded_versions: meta.superseded_versions,
  };

  const findings: Finding[] = [];
  if (after === true) {
    findings.push({ code: 'plan_registered_after_execution_began', message: `plan version ${meta.version} was registered at ledger position ${meta.registered_position}, after execution began (first recorded event at position ${meta.execution_first_position}): it could have been written to fit what was recorded` });
  }
  if (!integrity.recorded) {
    findings.push({ code: record.kind === 'timeline' ? 'timeline_absent' : 'workflow_absent', message: `no ${record.kind === 'timeline' ? 'timeline' : 'workflow receipt'} is recorded for ${subject.kind} ${subject.id}` });
  } else if (integrity.verdict !== 'valid') {
    findings.push({ code: record.kind === 'timeline' ? 'timeline_not_valid' : 'workflow_not_valid', message: `verdict ${integrity.verdict} (${integrity.reasons.join(', ')})` });
  }
  const c = integrity.commitment;
  if (c.state === 'absent') findings.push({ code: 'truncation_not_excluded', message: c.statement });
  // Every contradicting commitment is a finding of its own: a binding one never hides it.
  for (const ci of integrity.commitments) {
    if (!ci.contradicts) continue;
    const at = ci.recorded_position === null ? '' : ` (recorded at position ${ci.recorded_position})`;
    const what =
      ci.outcome === 'truncation_detected'
        ? `counts ${ci.missing_entries} more entries than are visible: the timeline was truncated`
        : ci.outcome === 'final_entry_substituted'
          ? 'names another final entry digest for the same entry count: the final entry was substituted'
          : 'names another digest for an earlier entry of the chain: an entry was substituted';
    findings.push({ code: ci.outcome, commitment: ci.commitment, message: `endpoint commitment ${ci.commitment}${at} ${what}` });
  }
  if (c.state === 'non_binding') {
    if (c.other_job) findings.push({ code: 'commitment_other_job', message: 'an endpoint commitment recorded for this job names another job' });
    findings.push({ code: 'commitment_non_binding', message: c.statement });
  }
  for (const e of items) {
    if (e.receipt_mismatch) {
      findings.push({
        code: 'receipt_mismatch',
        seq: e.seq,
        message: `seq ${e.seq}: the recorded receipt ${e.receipt_id ?? ''} disagrees with the entry on ${e.receipt_mismatch.join(', ')}: the entry is ${noEvidence(e) ? 'no evidence' : 'not accepted evidence (reported only at most)'}`,
      });
    }
  }
  for (const a of actions) {
    if (a.status !== 'covered') findings.push({ code: a.status, action_id: a.action_id, message: `${a.action_id} (${a.tool}): ${a.detail}` });
  }
  if (plan.unplanned === 'flag') {
    for (const u of unplanned) findings.push({ code: 'unplanned_action', seq: u.seq, message: `seq ${u.seq}: ${u.tool === null ? 'an entry without a tool name' : `tool ${u.tool}`} is not in the plan` });
  }

  const count = (s: ActionStatus): number => actions.filter((a) => a.status === s).length;
  const covered = count('covered');
  const total = actions.length;
  const permille = Math.floor((covered * 1000) / total);
  const doesNotProve = [...DOES_NOT_PROVE];
  if (c.state !== 'binding') doesNotProve.push(record.kind === 'timeline' ? 'Without a binding endpoint commitment the visible timeline is not bound to its end: entries removed from the end and rebuilt away would not show here (S7.3).' : c.statement);
  return {
    format: REPORT_FORMAT,
    subject: subjectMember(subject),
    as_of_position: input.as_of_position,
    result: findings.length === 0 ? 'full_coverage' : 'findings',
    plan: planMeta,
    integrity,
    actions,
    unplanned: { policy: plan.unplanned, finding: plan.unplanned === 'flag' && unplanned.length > 0, actions: unplanned },
    counts: {
      expected_actions: total,
      covered,
      missing: count('missing'),
      reported_only: count('reported_only'),
      failed: count('failed'),
      out_of_order: count('out_of_order'),
      over_count: count('over_count'),
      recorded_actions: items.length,
      unplanned_actions: unplanned.length,
      unknown_outcome_evidence: actions.reduce((s, a) => s + a.unknown_outcome_count, 0),
    },
    coverage: { covered, expected: total, ratio: `${covered}/${total}`, percent: `${Math.floor(permille / 10)}.${permille % 10}` },
    findings,
    matching_rules: MATCHING_RULES_REF,
    does_not_prove: doesNotProve,
  };
}

/** The report digest: SHA-256 over the canonical JSON of the content (report_id and issued_at are not part of it). */
export function reportDigest(content: CoverageReportContent): string {
  return canonicalDigest(content);
}

export * from './types';
export { actionsFromTimeline, actionsFromWorkflow, receiptDisagreement, receiptOutcome } from './evidence';
