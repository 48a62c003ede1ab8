/** The integrity section of a coverage report: the timeline or workflow verdict and every recorded endpoint commitment, judged together. */
import { AssessedCommitment, assessCommitments, commitmentLabel, decidingCommitment, earlierCounts, entryDigest, isObject, TimelineResult, receiptOfDocument, verifyTimeline, verifyWorkflow, whoStandsBehind } from '../aer1';
import { CommitmentItem, CommitmentSection, IntegritySection, RecordedBySection, Recorders, ReconcileInput, RecordInput } from './types';

const ABSENT_COMMITMENT = 'No endpoint commitment is recorded: truncation is not excluded. A rebuilt shorter timeline would verify (S7.3); actions cut from its end would show as missing without any sign of truncation.';

type CommitmentInput = Extract<RecordInput, { kind: 'timeline' }>['commitments'][number];

function committedOf(value: unknown): CommitmentItem['committed'] {
  const c = isObject(value) ? value : {};
  return { job_id: jsonSafe(c.job_id), entry_count: jsonSafe(c.entry_count), final_entry_digest: jsonSafe(c.final_entry_digest), published_at: jsonSafe(c.published_at) };
}

/** The reasons a report names for one commitment: the commitment checks, and `timeline_not_valid` / `commitment_job_id_mismatch` where they apply. */
function reasonsOf(a: AssessedCommitment, tl: TimelineResult): string[] {
  const reasons: string[] = a.check.reasons.filter((x) => x.startsWith('commitment_') || x === 'invalid_commitment');
  if (tl.verdict !== 'valid') reasons.push('timeline_not_valid');
  if (a.outcome === 'other_job' && !reasons.includes('commitment_job_id_mismatch')) reasons.push('commitment_job_id_mismatch');
  return reasons;
}

/**
 * The timeline part of the integrity section. Every recorded commitment is
 * judged by the core's `assessCommitments` (the function the verifier, the
 * job page and `aer1 verify` use): truncation is excluded only when one
 * binds and none contradicts.
 */
export function timelineIntegrity(jobId: string, entries: unknown[] | null, recorded: readonly CommitmentInput[]): { integrity: IntegritySection; timeline: TimelineResult | null } {
  const timeline = entries === null ? null : verifyTimeline(entries, { collectEntries: false });
  const base: IntegritySection = {
    kind: 'timeline',
    recorded_by: NOT_CHECKED,
    recorded: timeline !== null,
    verdict: timeline?.verdict ?? null,
    reasons: timeline?.reasons ?? [],
    construction: timeline?.construction ?? null,
    entry_count: timeline?.entry_count ?? 0,
    final_entry_digest: timeline?.final_entry_digest ?? null,
    closed: timeline?.closed ?? null,
    merkle_root_confirmed: null,
    commitment: noCommitment('absent', ABSENT_COMMITMENT),
    commitments: [],
  };
  if (recorded.length === 0) return { integrity: base, timeline };
  const tl = timeline ?? verifyTimeline([]);
  const list = recorded.map((c) => ({ id: c.id ?? null, value: c.value, envelope: c.envelope, position: c.recorded_position, ...(c.attestation ? { attestation: c.attestation } : {}) }));
  const digestAt = new Map<number, string | null>(earlierCounts(tl, list).map((k) => [k, entryDigest(entries?.[k - 1])]));
  const assessment = assessCommitments(tl, list, { job_id: jobId, digest_at: digestAt });
  const items: CommitmentItem[] = assessment.commitments.map((a) => ({
    commitment: commitmentLabel(a),
    recorded_position: a.position,
    outcome: a.outcome,
    binding: a.binding,
    contradicts: a.contradicts,
    missing_entries: a.missing_entries,
    reasons: a.binding ? [] : reasonsOf(a, tl),
    committed: committedOf(a.check.commitment),
    witness: jsonSafe(a.check.witness),
    attestation: a.attestation.kind,
    attested_by: a.attestation.by,
    detail: a.detail,
  }));
  const chosen = decidingCommitment(assessment)!;
  const excluded = assessment.truncation_excluded;
  const truncations = assessment.commitments.filter((a) => a.outcome === 'truncation_detected');
  const c = isObject(chosen.check.commitment) ? chosen.check.commitment : {};
  let statement: string;
  if (excluded) {
    const others = items.length > 1 ? ` None of the ${items.length} recorded commitments contradicts the visible timeline.` : '';
    const self = assessment.binding_attestation === 'self_asserted' ? ' It is self-asserted: the producer\'s own word, signed by no key trusted here, so the endpoint is not independently fixed (finding commitment_self_asserted).' : '';
    statement = `Binding: the visible timeline reaches the endpoint the commitment published at ${describeValue(c.published_at)} (${tl.entry_count} entries, final digest ${tl.final_entry_digest}); ${whoStandsBehind(chosen.attestation, chosen.check.witness)}. Truncation and substitution of the final entry are excluded up to that publication, as far as whoever stands behind it is trusted.${self}${others}`;
  } else {
    const parts = assessment.commitments.filter((a) => !a.binding).map((a) => (items.length > 1 ? `commitment ${commitmentLabel(a)}: ${a.detail}` : a.detail));
    if (tl.verdict !== 'valid') parts.push(`the timeline does not verify under -07 (${tl.verdict}), so no commitment can bind it`);
    const bound = assessment.binding.length > 0 ? ` ${assessment.binding.length} other commitment(s) bind the visible timeline; that does not hide a contradiction.` : '';
    statement = `Non-binding: ${parts.join('; ')}.${bound}`;
  }
  return {
    timeline,
    integrity: {
      ...base,
      commitments: items,
      commitment: {
        state: excluded ? 'binding' : 'non_binding',
        reasons: excluded ? [] : reasonsOf(chosen, tl),
        truncation: excluded ? 'excluded' : truncations.length > 0 ? 'detected' : 'not_excluded',
        truncation_detected: truncations.length > 0,
        final_entry_substituted: assessment.commitments.some((a) => a.outcome === 'final_entry_substituted'),
        other_job: assessment.commitments.some((a) => a.outcome === 'other_job'),
        missing_entries: truncations.length > 0 ? Math.max(...truncations.map((a) => a.missing_entries!)) : null,
        committed: committedOf(chosen.check.commitment),
        recorded_position: chosen.position,
        attestation: excluded ? assessment.binding_attestation : null,
        statement,
      },
    },
  };
}

/** The commitment section when no commitment is checked: truncation is not excluded. */
function noCommitment(state: 'absent' | 'not_applicable', statement: string): CommitmentSection {
  return {
    state,
    reasons: [],
    truncation: 'not_excluded',
    truncation_detected: false,
    final_entry_substituted: false,
    other_job: false,
    missing_entries: null,
    committed: null,
    recorded_position: null,
    attestation: null,
    statement,
  };
}

export function workflowIntegrity(workflow: unknown | null, receipts: ReadonlyMap<string, unknown>): IntegritySection {
  const statement = 'Not applicable: a workflow receipt binds its own step list with its Merkle root (S8.1); it does not show that no step happened outside the workflow.';
  const commitment = noCommitment('not_applicable', statement);
  if (workflow === null) {
    return { kind: 'workflow', recorded_by: NOT_CHECKED, recorded: false, verdict: null, reasons: [], construction: null, entry_count: 0, final_entry_digest: null, closed: null, merkle_root_confirmed: null, commitment, commitments: [] };
  }
  const steps = isObject(workflow) && Array.isArray(workflow.steps) ? workflow.steps : [];
  const stepReceipts = new Map<string, unknown>();
  for (const s of steps) {
    if (isObject(s) && typeof s.receipt_id === 'string') {
      const r = receipts.get(s.receipt_id.toLowerCase());
      if (r !== undefined) stepReceipts.set(s.receipt_id.toLowerCase(), receiptOfDocument(r));
    }
  }
  const w = verifyWorkflow(workflow, stepReceipts);
  return {
    kind: 'workflow',
    recorded_by: NOT_CHECKED,
    recorded: true,
    verdict: w.verdict,
    reasons: w.reasons,
    construction: null,
    entry_count: steps.length,
    final_entry_digest: null,
    closed: null,
    merkle_root_confirmed: w.merkle.confirmed,
    commitment,
    commitments: [],
  };
}

/** Placeholder replaced by {@link recordedBySection} in {@link reconcile}. */
const NOT_CHECKED: RecordedBySection = { checked: false, owner: null, owners: [], key_names: [], unattributed_events: 0, plan_owner: null, plan_owner_check: 'not_checked_offline', receipts_by_other_owner: [] };

/** Whether recorders `r` are exactly the owner `owner` (every event names a key of it). */
function onlyOwner(r: Recorders, owner: string): boolean {
  return r.unattributed === 0 && r.owners.length === 1 && r.owners[0] === owner;
}

/**
 * Who recorded the subject, and which receipts the actions name were
 * recorded by another owner: one not the plan's `recorded_by_owner` when it
 * names one (those are rejected: `otherOwner`), else one not among the
 * timeline's (workflow's) recorders (stated only).
 */
export function recordedBySection(input: ReconcileInput, recordedIds: readonly string[], recorded: boolean): { section: RecordedBySection; otherOwner: Map<string, string[]> } {
  const planOwner = input.plan.recorded_by_owner ?? null;
  const otherOwner = new Map<string, string[]>();
  const rec = input.recorders;
  if (!rec) return { section: { ...NOT_CHECKED, plan_owner: planOwner, plan_owner_check: planOwner === null ? 'not_named' : 'not_checked_offline' }, otherOwner };
  const r = rec.record ?? { owners: [], key_names: [], unattributed: 0 };
  const owner = r.unattributed === 0 && r.owners.length === 1 ? r.owners[0] : null;
  const byOther: RecordedBySection['receipts_by_other_owner'] = [];
  for (const id of [...new Set(recordedIds)].sort()) {
    const x = rec.receipts.get(id);
    if (!x) continue;
    const foreign = planOwner !== null ? !onlyOwner(x, planOwner) : x.owners.some((o) => !r.owners.includes(o)) || (x.unattributed > 0 && r.unattributed === 0);
    if (foreign) {
      // Rejected only when the plan names the owner: without one, a receipt recorded by another key (a gateway's,
      // say) than the timeline's is a legitimate pattern; it is stated, not judged.
      if (planOwner !== null) otherOwner.set(id, x.owners);
      byOther.push({ receipt_id: id, owners: x.owners, key_names: x.key_names });
    }
  }
  const check: RecordedBySection['plan_owner_check'] = planOwner === null ? 'not_named' : !recorded ? 'not_recorded' : onlyOwner(r, planOwner) ? 'satisfied' : 'recorded_by_other_owner';
  return {
    section: { checked: true, owner, owners: r.owners, key_names: r.key_names, unattributed_events: r.unattributed, plan_owner: planOwner, plan_owner_check: check, receipts_by_other_owner: byOther },
    otherOwner,
  };
}

/** "owner X (keys a, b)" for a message. */
export function describeRecorders(s: Pick<RecordedBySection, 'owners' | 'key_names' | 'unattributed_events'>): string {
  const parts: string[] = [];
  if (s.owners.length) parts.push(`${s.owners.length === 1 ? 'owner' : 'owners'} ${s.owners.map((o) => JSON.stringify(o)).join(', ')} (key${s.key_names.length === 1 ? '' : 's'} ${s.key_names.map((k) => JSON.stringify(k)).join(', ')})`);
  if (s.unattributed_events) parts.push(`${s.unattributed_events} event(s) naming no key`);
  return parts.join(' and ') || 'nobody';
}

/** A recorded value made safe for the canonical writer: absent as null, non-integer numbers as their text. */
function jsonSafe(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : String(v);
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}

function describeValue(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
