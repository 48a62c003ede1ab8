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
import { actionsFromTimeline, actionsFromWorkflow, closingMarker, evidenceItem, noEvidence } from './evidence';
import { describeRecorders, recordedBySection, timelineIntegrity, workflowIntegrity } from './integrity';
import { judge } from './judgement';
import { OUTCOME_LIMIT, outcomeNamesSubject, reconcileOutcomes } from './outcomes';
import { OutcomeRequirement } from './plan';
import { ActionStatus, ClosingMarker, CoverageReportContent, DOES_NOT_PROVE, ErasureNote, EvidenceItem, Finding, IntegritySection, MATCHING_RULES_REF, PlanMeta, ReconcileInput, RecordedAction, REPORT_FORMAT } from './types';

/** Build the coverage report content. Pure and deterministic: the same inputs give the same content, and so the same digest. */
export function reconcile(input: ReconcileInput): CoverageReportContent {
  const { plan, record, receipts } = input;
  const subject: PlanSubject = plan.subject;
  let integrity: IntegritySection;
  let recorded: RecordedAction[];
  let close: ClosingMarker | null = null;
  const erasedSeqs = [...(input.erased?.entries.keys() ?? [])].sort((a, b) => a - b);
  if (record.kind === 'timeline') {
    integrity =
      erasedSeqs.length > 0 && record.entries !== null
        ? erasedTimelineIntegrity(subject.id, record.entries, erasedSeqs, input.erased?.timeline_recorded_verdict ?? 'valid', record.commitments.length)
        : timelineIntegrity(subject.id, record.entries, record.commitments).integrity;
    recorded = record.entries === null ? [] : actionsFromTimeline(record.entries);
    // The ledger's closing marker is the close, not an action (docs/coverage.md).
    close = record.entries === null ? null : closingMarker(record.entries);
    if (close) recorded = recorded.slice(0, -1);
  } else {
    integrity = workflowIntegrity(record.workflow, receipts);
    // Step receipts erased (issue 29): their retained tool, provenance and status stand in; the workflow is not re-checked against them.
    const kept = new Map<string, unknown>(receipts);
    for (const [id, r] of input.erased?.receipts ?? []) kept.set(id, { tool: r.tool, provenance_class: r.provenance_class, status: r.status });
    recorded = record.workflow === null ? [] : actionsFromWorkflow(record.workflow, kept);
    const erasedSteps = recorded.filter((a) => a.receipt_id !== null && input.erased?.receipts.has(a.receipt_id.toLowerCase())).map((a) => a.seq);
    if (erasedSteps.length > 0 && integrity.recorded) integrity = { ...integrity, verdict: 'erased', reasons: ['step_receipts_erased'], recorded_verdict: null, erased_entries: erasedSteps };
  }
  const who = recordedBySection(input, recorded.map((a) => a.receipt_id?.toLowerCase()).filter((x): x is string => typeof x === 'string'), integrity.recorded);
  integrity = { ...integrity, recorded_by: who.section };
  const items = recorded.map((a) => evidenceItem(a, receipts, { corrections: input.corrections, otherOwner: who.otherOwner, erased: input.erased }));
  // Recorded by another owner than the plan names: the record is no evidence at all (every action missing).
  const foreign = who.section.plan_owner_check === 'recorded_by_other_owner';
  const { allocations, unplanned } = allocate(plan, foreign ? [] : items);
  const actions = judge(allocations);
  const requirements = new Map<string, OutcomeRequirement>(plan.expected_actions.flatMap((a) => (a.outcome ? [[a.action_id, a.outcome] as [string, OutcomeRequirement]] : [])));
  // An outcome counts only for the subject it names (issue 26): another job's outcome of a shared receipt is not this job's.
  const ownOutcomes = (input.outcomes ?? []).filter((o) => outcomeNamesSubject(o.job_id, subject));
  const outcomeResult = reconcileOutcomes(actions, requirements, foreign ? [] : items, ownOutcomes, receipts);

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
  } else if (integrity.verdict === 'erased') {
    const seqs = integrity.erased_entries ?? [];
    findings.push({
      code: 'evidence_erased',
      message:
        record.kind === 'timeline'
          ? `the content of ${seqs.length === 1 ? 'entry' : 'entries'} seq ${seqs.join(', ')} of the timeline was erased${erasureText(input.erased?.entries.get(seqs[0]) ?? null)}: the chain can no longer be re-checked; the ledger recorded it as ${integrity.recorded_verdict ?? 'unknown'} at ingestion`
          : `the receipts of ${seqs.length === 1 ? 'step' : 'steps'} seq ${seqs.join(', ')} of the workflow were erased: the workflow can no longer be re-checked against them`,
    });
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
  if (c.state === 'binding' && c.attestation === 'self_asserted') {
    const named = integrity.commitments.filter((ci) => ci.binding && isWitnessNamed(ci.witness)).map((ci) => JSON.stringify((ci.witness as { witness: string }).witness));
    const claim = named.length ? ` It names ${named.length === 1 ? 'witness' : 'witnesses'} ${[...new Set(named)].join(', ')}: the poster's claim, not checked.` : '';
    findings.push({
      code: 'commitment_self_asserted',
      commitment: integrity.commitments.find((ci) => ci.binding)?.commitment,
      message: `the binding endpoint commitment is self-asserted: posted by the producer's side and signed by no key trusted here (neither issued by the ledger nor attested by a key in TRUSTED_COMMITMENT_KEYS), so nothing independent fixes the endpoint (rev 09: two files, one trust domain).${claim}`,
    });
  }
  if (foreign) {
    findings.push({
      code: 'recorded_by_other_owner',
      message: `the plan names recorded_by_owner ${JSON.stringify(plan.recorded_by_owner)}, but the ${record.kind === 'timeline' ? 'timeline' : 'workflow receipt'} was recorded by ${describeRecorders(who.section)}: none of its ${items.length} recorded action(s) is evidence`,
    });
  }
  if (!who.section.checked && plan.recorded_by_owner !== undefined) {
    findings.push({ code: 'recorded_by_owner_not_checked', message: `the plan names recorded_by_owner ${JSON.stringify(plan.recorded_by_owner)}; who recorded the ${record.kind} cannot be known from files (offline): not checked, so not satisfied` });
  }
  for (const e of foreign ? [] : items) {
    if (e.receipt_recorded_by) {
      findings.push({
        code: 'receipt_recorded_by_other_owner',
        seq: e.seq,
        message: `seq ${e.seq}: the receipt ${e.receipt_id ?? ''} was recorded by ${e.receipt_recorded_by.length ? e.receipt_recorded_by.map((o) => JSON.stringify(o)).join(', ') : 'a key before attribution'}, not by ${plan.recorded_by_owner !== undefined ? JSON.stringify(plan.recorded_by_owner) : `the ${record.kind}'s recorder`}: the entry is no evidence`,
      });
    }
    if (e.superseded_by) {
      findings.push({
        code: 'evidence_corrected',
        seq: e.seq,
        message: `seq ${e.seq}: the receipt ${e.receipt_id ?? ''} was corrected by ${e.superseded_by}${e.correction_chain && e.correction_chain.length > 1 ? ` (through ${e.correction_chain.join(' -> ')})` : ''}: the outcome used is the correction's, ${e.outcome}${e.receipt_status ? ` (status ${e.receipt_status})` : ''}; the original recorded ${e.original_outcome}${e.original_status ? ` (status ${e.original_status})` : ''}`,
      });
    }
    const mismatch = (e.receipt_mismatch ?? []).filter((f) => f !== 'recorded_by');
    if (mismatch.length > 0) {
      findings.push({
        code: 'receipt_mismatch',
        seq: e.seq,
        message: `seq ${e.seq}: the recorded receipt ${e.receipt_id ?? ''}${e.superseded_by ? ` (or its correction ${e.superseded_by})` : ''} disagrees with the entry on ${mismatch.join(', ')}: the entry is ${noEvidence(e) ? 'no evidence' : 'not accepted evidence (reported only at most)'}`,
      });
    }
  }
  findings.push(...erasureFindings(input, foreign ? [] : items));
  // One recorded call claimed by two jobs (issue 26): a finding at the first entry naming the receipt.
  const sharedSeen = new Set<string>();
  for (const e of record.kind === 'timeline' ? items : []) {
    const id = e.receipt_id?.toLowerCase();
    const others = id === undefined ? undefined : input.other_jobs?.get(id);
    if (id === undefined || !others || others.length === 0 || sharedSeen.has(id)) continue;
    sharedSeen.add(id);
    findings.push({
      code: 'receipt_shared_with_other_job',
      seq: e.seq,
      message: `seq ${e.seq}: the receipt ${id} is also named by an entry of ${others.length === 1 ? 'job' : 'jobs'} ${others.map((j) => JSON.stringify(j)).join(', ')}: one recorded call is claimed by more than one job (its outcomes count only for the job each names)`,
    });
  }
  for (const a of actions) {
    if (a.status !== 'covered') findings.push({ code: a.status, action_id: a.action_id, message: `${a.action_id} (${a.tool}): ${a.detail}` });
  }
  findings.push(...outcomeResult.findings);
  if (plan.unplanned === 'flag') {
    for (const u of unplanned) findings.push({ code: 'unplanned_action', seq: u.seq, message: `seq ${u.seq}: ${u.tool === null ? 'an entry without a tool name' : `tool ${u.tool}`} is not in the plan` });
  }

  const count = (s: ActionStatus): number => actions.filter((a) => a.status === s).length;
  const covered = count('covered');
  const total = actions.length;
  const permille = Math.floor((covered * 1000) / total);
  const doesNotProve = [...DOES_NOT_PROVE];
  if (!who.section.checked) doesNotProve.push(`Who recorded the ${record.kind} and its receipts is not checked offline: files carry no keys or owners${plan.recorded_by_owner !== undefined ? `, so the plan's recorded_by_owner ${JSON.stringify(plan.recorded_by_owner)} is not checked (never satisfied)` : ''}. Issue the report on the ledger to check it.`);
  if (record.kind === 'timeline' && input.other_jobs === undefined) doesNotProve.push('Whether entries of other jobs name the same receipts (one recorded call claimed by two jobs) is not checked offline: files do not show other jobs. Issue the report on the ledger to check it.');
  if (outcomeResult.section) doesNotProve.push(OUTCOME_LIMIT);
  if (input.erased) doesNotProve.push(ERASED_LIMIT);
  if (c.state === 'binding' && c.attestation === 'self_asserted') doesNotProve.push('The binding endpoint commitment is self-asserted: a producer that controls both the chain and its commitment can rebuild both; only a ledger-issued or attested commitment fixes the endpoint independently.');
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
    ...(close ? { close } : {}),
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
    ...(outcomeResult.section ? { outcomes: outcomeResult.section } : {}),
  };
}

/** What a report cannot show about erased evidence (issue 29). */
export const ERASED_LIMIT = 'Erased evidence (findings evidence_erased) counts as the ledger recorded and verified it at ingestion: its content is gone for good, so neither this ledger nor an evidence pack can re-check it now; the ledger\'s leaves still prove that it was recorded, when, by which key and in which order.';

/** ` on <date> by <key name> (<legal basis>): <reason> (erasure event at position <n>)`, or '' when the erasure is not known. */
function erasureText(e: ErasureNote | null | undefined): string {
  return e ? ` on ${e.erased_at.slice(0, 10)} by ${e.by} (${e.legal_basis}): ${e.reason} (erasure event at position ${e.position})` : '';
}

/** The integrity section of a timeline some of whose entries were erased: verdict `erased`, the verdict recorded at ingestion kept, no commitment judged. */
function erasedTimelineIntegrity(jobId: string, entries: unknown[], erasedSeqs: number[], recordedVerdict: string | null, commitmentCount: number): IntegritySection {
  const base = timelineIntegrity(jobId, null, []).integrity;
  const last = entries[entries.length - 1];
  const statement = `Not re-checked: ${erasedSeqs.length === 1 ? 'entry' : 'entries'} seq ${erasedSeqs.join(', ')} of the timeline ${erasedSeqs.length === 1 ? 'was' : 'were'} erased, so the chain and ${commitmentCount === 1 ? 'its endpoint commitment' : `its ${commitmentCount} endpoint commitments`} can no longer be judged: truncation is not excluded by this report.`;
  return {
    ...base,
    recorded: true,
    verdict: 'erased',
    reasons: ['entries_erased'],
    entry_count: entries.length,
    closed: typeof last === 'object' && last !== null && (last as { close?: unknown }).close === true,
    commitment: { ...base.commitment, statement },
    recorded_verdict: recordedVerdict,
    erased_entries: erasedSeqs,
  };
}

/** One `evidence_erased` finding per recorded action whose entry or receipt was erased, per erased commitment and per erased outcome report. */
function erasureFindings(input: ReconcileInput, items: readonly EvidenceItem[]): Finding[] {
  const out: Finding[] = [];
  const er = input.erased;
  if (!er) return out;
  for (const e of items) {
    if (!e.evidence_erased) continue;
    const id = e.receipt_id?.toLowerCase();
    const note = (id ? er.receipts.get(id)?.erasure : undefined) ?? er.entries.get(e.seq) ?? null;
    const what = e.evidence_erased.entry && e.evidence_erased.receipt ? `the entry and its receipt ${e.receipt_id ?? ''}` : e.evidence_erased.receipt ? `the receipt ${e.receipt_id ?? ''}` : 'the entry';
    out.push({
      code: 'evidence_erased',
      seq: e.seq,
      message: `seq ${e.seq}: the content of ${what} was erased${erasureText(note)}; counted as recorded and verified at ingestion (recorded verdict ${e.evidence_erased.recorded_verdict ?? 'unknown'}), no longer re-checked`,
    });
  }
  for (const c of er.commitments) {
    out.push({ code: 'evidence_erased', commitment: c.id ?? `#${c.position}`, message: `endpoint commitment ${c.id ?? ''} (recorded at position ${c.position}): its content was erased${erasureText(c.erasure)}; it is left out of the judgement` });
  }
  for (const [id, note] of er.outcomes) {
    out.push({ code: 'evidence_erased', message: `outcome report ${id}: its observation was erased${erasureText(note)}; counted as verified when it was recorded` });
  }
  return out;
}

function isWitnessNamed(w: unknown): boolean {
  return typeof w === 'object' && w !== null && typeof (w as { witness?: unknown }).witness === 'string';
}

/** The report digest: SHA-256 over the canonical JSON of the content (report_id and issued_at are not part of it). */
export function reportDigest(content: CoverageReportContent): string {
  return canonicalDigest(content);
}

export * from './types';
export { actionsFromTimeline, actionsFromWorkflow, closingMarker, receiptDisagreement, receiptOutcome } from './evidence';
export { OUTCOME_STATUSES, outcomeNamesSubject, reconcileOutcomes } from './outcomes';
export type { ActionOutcome, OutcomeRecord, OutcomeStatus, OutcomesSection } from './outcomes';
