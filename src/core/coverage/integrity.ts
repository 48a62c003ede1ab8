/** The integrity section of a coverage report: the timeline or workflow verdict and every recorded endpoint commitment, judged together. */
import { AssessedCommitment, assessCommitments, commitmentLabel, decidingCommitment, earlierCounts, entryDigest, isObject, TimelineResult, receiptOfDocument, verifyTimeline, verifyWorkflow } from '../aer1';
import { CommitmentItem, CommitmentSection, IntegritySection, RecordInput } from './types';

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
  const list = recorded.map((c) => ({ id: c.id ?? null, value: c.value, envelope: c.envelope, position: c.recorded_position }));
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
    detail: a.detail,
  }));
  const chosen = decidingCommitment(assessment)!;
  const excluded = assessment.truncation_excluded;
  const truncations = assessment.commitments.filter((a) => a.outcome === 'truncation_detected');
  const c = isObject(chosen.check.commitment) ? chosen.check.commitment : {};
  let statement: string;
  if (excluded) {
    const others = items.length > 1 ? ` None of the ${items.length} recorded commitments contradicts the visible timeline.` : '';
    statement = `Binding: the visible timeline reaches the endpoint the commitment published at ${describeValue(c.published_at)} (${tl.entry_count} entries, final digest ${tl.final_entry_digest}). Truncation and substitution of the final entry are excluded up to that publication; it is only as independent as its witness.${others}`;
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
    statement,
  };
}

export function workflowIntegrity(workflow: unknown | null, receipts: ReadonlyMap<string, unknown>): IntegritySection {
  const statement = 'Not applicable: a workflow receipt binds its own step list with its Merkle root (S8.1); it does not show that no step happened outside the workflow.';
  const commitment = noCommitment('not_applicable', statement);
  if (workflow === null) {
    return { kind: 'workflow', recorded: false, verdict: null, reasons: [], construction: null, entry_count: 0, final_entry_digest: null, closed: null, merkle_root_confirmed: null, commitment, commitments: [] };
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
