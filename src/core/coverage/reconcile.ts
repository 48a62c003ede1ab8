/**
 * Coverage reconciliation (rev 09 article: "register the expected-action set
 * before execution; reconcile visible receipts against it afterwards").
 *
 * A pure function: a normalized plan, the recorded timeline (or workflow
 * receipt), the recorded receipts and the endpoint commitment in, a report
 * out. No framework, database or file imports: the ledger service and the
 * `aer1 coverage` CLI call the same code. The matching rules are documented
 * in docs/coverage.md and restated on {@link allocate}.
 */
import {
  AssessedCommitment,
  assessCommitments,
  commitmentLabel,
  decidingCommitment,
  decodeStrictBase64,
  earlierCounts,
  entryDigest,
  isObject,
  JsonObject,
  receiptForm,
  TimelineResult,
  receiptOfDocument,
  sha256Hex,
  verifyTimeline,
  verifyWorkflow,
} from '../aer1';
import { canonicalDigest } from './canonical';
import { ExpectedAction, NormalizedPlan, PlanSubject, provenanceAccepted, subjectMember, UnplannedPolicy } from './plan';

export const REPORT_FORMAT = 'aer1-coverage-report/1';

/** Statuses of an expected action, most severe first: the reported status is the first that holds. */
export const ACTION_STATUSES = ['missing', 'reported_only', 'failed', 'out_of_order', 'over_count', 'covered'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/** success: core receipt, or transport `status` "ok"; failure: any other transport status; unknown: no receipt recorded. */
export type Outcome = 'success' | 'failure' | 'unknown';

/** One recorded action: a timeline entry or a workflow step. */
export interface RecordedAction {
  seq: number;
  tool: string | null;
  receipt_id: string | null;
  /** As recorded on the entry (timelines) or on the step receipt (workflows); null when unknown. */
  provenance_class: string | null;
  /** Bare hex SHA-256 of the entry's decoded canonical bytes (timelines); null for workflow steps or undecodable bytes. */
  bytes_hash?: string | null;
}

/** What an entry and the recorded receipt with its id are compared on (docs/coverage.md). */
export type ReceiptField = 'tool' | 'canonical_bytes' | 'output_hash' | 'provenance_class';

/** A recorded action as shown in a report, with its receipt's outcome. */
export interface EvidenceItem {
  seq: number;
  receipt_id: string | null;
  tool: string | null;
  provenance_class: string | null;
  outcome: Outcome;
  /** The receipt's own `status` (transport form), null for core receipts or when no receipt is recorded. */
  receipt_status: string | null;
  receipt_recorded: boolean;
  /** Set when the recorded receipt names another provenance class than the entry: the entry then counts as no accepted evidence. */
  receipt_provenance_class?: string;
  /**
   * Set when the recorded receipt with the entry's id disagrees with the entry
   * on its tool, its canonical bytes or its output hash: the entry is then no
   * evidence at all (not accepted, not reported-only) and a `receipt_mismatch`
   * finding. (A provenance disagreement alone is named here too.)
   */
  receipt_mismatch?: ReceiptField[];
}

export interface ActionReport {
  action_id: string;
  tool: string;
  status: ActionStatus;
  /** Every condition that holds, most severe first (`status` is the first). */
  conditions: ActionStatus[];
  min_count: number;
  max_count: number | null;
  must_succeed: boolean;
  accepted_provenance: string[];
  after: string[];
  /** Accepted evidence, in seq order. */
  evidence: EvidenceItem[];
  /** Accepted entries above max_count. */
  over_count_evidence: EvidenceItem[];
  /** Entries of the tool whose provenance the plan does not accept, counted toward reported_only only. */
  reported_only_evidence: EvidenceItem[];
  /** Further unaccepted entries of the tool, listed here (the last action of the tool) and counted nowhere. */
  unaccepted_unassigned: EvidenceItem[];
  successful_count: number;
  failed_count: number;
  unknown_outcome_count: number;
  /** Why `after` holds or not, per prerequisite. */
  order: { after: string; ok: boolean; detail: string }[];
  detail: string;
}

export interface Finding {
  code: string;
  message: string;
  action_id?: string;
  seq?: number;
  /** The commitment a commitment finding is about (its record id, or `#n` offline). */
  commitment?: string;
}

export interface CommitmentSection {
  state: 'binding' | 'non_binding' | 'absent' | 'not_applicable';
  reasons: string[];
  truncation: 'excluded' | 'detected' | 'not_excluded';
  truncation_detected: boolean;
  final_entry_substituted: boolean;
  other_job: boolean;
  /** Entries the commitment counts that are not visible (truncation), when detected. */
  missing_entries: number | null;
  committed: { job_id: unknown; entry_count: unknown; final_entry_digest: unknown; published_at: unknown } | null;
  recorded_position: number | null;
  statement: string;
}

/** One recorded endpoint commitment as the report judged it (src/core/aer1/commitments.ts: every one is judged, none hides another's finding). */
export interface CommitmentItem {
  /** The record id, or `#n` (1-based) for a commitment given offline. */
  commitment: string;
  recorded_position: number | null;
  outcome: string;
  binding: boolean;
  contradicts: boolean;
  missing_entries: number | null;
  reasons: string[];
  committed: { job_id: unknown; entry_count: unknown; final_entry_digest: unknown; published_at: unknown };
  /** Witness metadata as given (`witness`, `retrieved_from`, `retrieved_at`), or null. */
  witness: unknown;
  detail: string;
}

export interface IntegritySection {
  kind: 'timeline' | 'workflow';
  recorded: boolean;
  verdict: string | null;
  reasons: string[];
  construction: string | null;
  entry_count: number;
  final_entry_digest: string | null;
  closed: boolean | null;
  merkle_root_confirmed: boolean | null;
  /** All recorded commitments judged together; `committed`, `recorded_position` and `reasons` are those of the deciding one. */
  commitment: CommitmentSection;
  /** Every recorded endpoint commitment as of the report, in record order (timelines; empty for workflows). */
  commitments: CommitmentItem[];
}

export interface PlanMeta {
  plan_id: string | null;
  version: number | null;
  digest: string;
  title: string;
  unplanned: UnplannedPolicy;
  registered_at: string | null;
  registered_position: number | null;
  /** Ledger position of the first recorded event of the job (or workflow); null when none as of the report, or offline. */
  execution_first_position: number | null;
  /** true: this plan version was registered after execution began; null: cannot be judged (offline). */
  registered_after_execution_began: boolean | null;
  superseded_versions: number[];
}

/** The report content: everything the digest covers (report_id and issued_at are outside it). */
export interface CoverageReportContent {
  format: typeof REPORT_FORMAT;
  subject: { job_id: string } | { workflow_id: string };
  as_of_position: number | null;
  result: 'full_coverage' | 'findings';
  plan: PlanMeta;
  integrity: IntegritySection;
  actions: ActionReport[];
  unplanned: { policy: UnplannedPolicy; finding: boolean; actions: EvidenceItem[] };
  counts: {
    expected_actions: number;
    covered: number;
    missing: number;
    reported_only: number;
    failed: number;
    out_of_order: number;
    over_count: number;
    recorded_actions: number;
    unplanned_actions: number;
    unknown_outcome_evidence: number;
  };
  coverage: { covered: number; expected: number; ratio: string; percent: string };
  findings: Finding[];
  matching_rules: string;
  does_not_prove: string[];
}

/** What the recorded timeline or workflow is, as of the report. */
export type RecordInput =
  | {
      kind: 'timeline';
      /** Parsed entries in order; null when no timeline is recorded. */
      entries: unknown[] | null;
      /** Every endpoint commitment recorded for the job as of the report (parsed), in record order, with its record id and ledger position. */
      commitments: { id?: string | null; value: unknown; envelope?: Record<string, unknown>; recorded_position: number | null }[];
    }
  | {
      kind: 'workflow';
      /** The parsed workflow receipt; null when none is recorded. */
      workflow: unknown | null;
    };

export interface ReconcileInput {
  plan: NormalizedPlan;
  plan_meta: Omit<PlanMeta, 'digest' | 'title' | 'unplanned' | 'registered_after_execution_began'> & { digest?: string };
  record: RecordInput;
  /** Recorded receipts (parsed documents, JSON-RPC wrappers allowed), keyed by lowercase id. */
  receipts: ReadonlyMap<string, unknown>;
  as_of_position: number | null;
}

export const MATCHING_RULES_REF = 'docs/coverage.md#matching-rules';

const DOES_NOT_PROVE = [
  'Coverage is not outcome: a covered action shows that a receipt of the expected tool was recorded with an accepted provenance class, not that the action had the effect claimed. Confirm outcomes with the system that owns the effect (rev 09).',
  'This report cannot show that nothing happened outside the recorder: unlogged side-channel actions, calls that never crossed the recorder and authorizations never captured are invisible to it (rev 09, S7.3).',
  'Provenance is never upgraded: LOGGED BY AGENT evidence remains an agent report and does not cover an action whose plan does not accept it (S5, S7.3).',
  'Matching is by tool name only: the report does not check arguments, targets or results of the calls it counts.',
];

// ---------------------------------------------------------------------------
// Receipts and recorded actions

/** The outcome a receipt records: core form = success; transport `status` "ok" = success, anything else failure. */
export function receiptOutcome(doc: unknown): { outcome: Outcome; status: string | null; provenance_class: string | null } {
  const r = receiptOfDocument(doc);
  if (!isObject(r)) return { outcome: 'unknown', status: null, provenance_class: null };
  const provenance = typeof r.provenance_class === 'string' ? r.provenance_class : null;
  if (receiptForm(r) === 'core') return { outcome: 'success', status: null, provenance_class: provenance };
  const status = typeof r.status === 'string' ? r.status : null;
  return { outcome: status === 'ok' ? 'success' : 'failure', status, provenance_class: provenance };
}

/** Recorded actions of a timeline: seq (the entry's integer seq, else its 1-based position), tool, receipt id, provenance. */
export function actionsFromTimeline(entries: readonly unknown[]): RecordedAction[] {
  return entries.map((e, i) => {
    const o: JsonObject = isObject(e) ? e : {};
    const bytes = decodeStrictBase64(o.canonical_bytes);
    return {
      seq: Number.isSafeInteger(o.seq) ? (o.seq as number) : i + 1,
      tool: typeof o.tool === 'string' ? o.tool : null,
      receipt_id: typeof o.id === 'string' ? o.id : null,
      provenance_class: typeof o.provenance_class === 'string' ? o.provenance_class : null,
      bytes_hash: bytes === null ? null : sha256Hex(bytes),
    };
  });
}

/** Recorded actions of a workflow: its steps, with provenance from the step receipts (null when not recorded). */
export function actionsFromWorkflow(workflow: unknown, receipts: ReadonlyMap<string, unknown>): RecordedAction[] {
  const steps = isObject(workflow) && Array.isArray(workflow.steps) ? workflow.steps : [];
  return steps.map((s: unknown, i: number) => {
    const o: JsonObject = isObject(s) ? s : {};
    const id = typeof o.receipt_id === 'string' ? o.receipt_id : null;
    const receipt = id ? receipts.get(id.toLowerCase()) : undefined;
    return {
      seq: Number.isSafeInteger(o.seq) ? (o.seq as number) : i + 1,
      tool: typeof o.tool === 'string' ? o.tool : null,
      receipt_id: id,
      provenance_class: receipt === undefined ? null : receiptOutcome(receipt).provenance_class,
    };
  });
}

/** The tool a receipt names: core form `tool.name`, transport form `tool`. */
function receiptTool(r: JsonObject): unknown {
  return isObject(r.tool) ? r.tool.name : r.tool;
}

/**
 * Where the recorded receipt with an action's id disagrees with the action:
 * its tool, and for timeline entries its canonical bytes and its
 * `output_hash` (both against the entry's decoded bytes). Provenance is
 * compared separately (it is never upgraded, S5).
 */
export function receiptDisagreement(a: RecordedAction, doc: unknown): ReceiptField[] {
  const r = receiptOfDocument(doc);
  if (!isObject(r)) return [];
  const out: ReceiptField[] = [];
  if (a.tool !== null && receiptTool(r) !== a.tool) out.push('tool');
  if (a.bytes_hash !== undefined) {
    const bytes = decodeStrictBase64(r.canonical_bytes);
    if (a.bytes_hash === null || bytes === null || sha256Hex(bytes) !== a.bytes_hash) out.push('canonical_bytes');
    if (a.bytes_hash === null || r.output_hash !== `sha256:${a.bytes_hash}`) out.push('output_hash');
  }
  return out;
}

function evidenceItem(a: RecordedAction, receipts: ReadonlyMap<string, unknown>): EvidenceItem {
  const doc = a.receipt_id ? receipts.get(a.receipt_id.toLowerCase()) : undefined;
  if (doc === undefined) {
    return { seq: a.seq, receipt_id: a.receipt_id, tool: a.tool, provenance_class: a.provenance_class, outcome: 'unknown', receipt_status: null, receipt_recorded: false };
  }
  const o = receiptOutcome(doc);
  const item: EvidenceItem = { seq: a.seq, receipt_id: a.receipt_id, tool: a.tool, provenance_class: a.provenance_class, outcome: o.outcome, receipt_status: o.status, receipt_recorded: true };
  const mismatch = receiptDisagreement(a, doc);
  if (o.provenance_class !== null && o.provenance_class !== a.provenance_class) {
    item.receipt_provenance_class = o.provenance_class;
    mismatch.push('provenance_class');
  }
  if (mismatch.length > 0) item.receipt_mismatch = mismatch;
  return item;
}

/** An entry whose receipt disagrees on more than provenance: it is no evidence at all. */
function noEvidence(e: EvidenceItem): boolean {
  return e.receipt_mismatch !== undefined && e.receipt_mismatch.some((f) => f !== 'provenance_class');
}

// ---------------------------------------------------------------------------
// Matching

interface Allocation {
  action: ExpectedAction;
  evidence: EvidenceItem[];
  over: EvidenceItem[];
  reported: EvidenceItem[];
  unassigned: EvidenceItem[];
}

/** Whether `e` is accepted evidence for `a`: an accepted provenance class, and a recorded receipt (if any) that agrees with the entry (never upgraded). */
function accepts(a: ExpectedAction, e: EvidenceItem): boolean {
  return e.receipt_provenance_class === undefined && !noEvidence(e) && provenanceAccepted(a.accepted_provenance, e.provenance_class);
}

/**
 * The matching rules (docs/coverage.md). Per tool, entries in seq order:
 * 1. in plan order, each action takes up to min_count of the earliest
 *    unassigned entries it accepts;
 * 2. in plan order, each action takes further unassigned accepted entries
 *    up to max_count (no max_count: all of them);
 * 3. an accepted entry still unassigned (every action of the tool that
 *    accepts it is at its max_count) is over_count evidence of the last
 *    action of the tool, in plan order, that accepts it;
 * 4. in plan order, each action still short of min_count takes as many
 *    unassigned entries of its tool (provenance it does not accept; never
 *    an entry whose receipt disagrees on tool or bytes) as it is short:
 *    reported_only evidence;
 * 5. entries of a planned tool still unassigned are listed on the last
 *    action of the tool and count nowhere; entries of other tools are
 *    unplanned.
 */
function allocate(plan: NormalizedPlan, recorded: EvidenceItem[]): { allocations: Allocation[]; unplanned: EvidenceItem[] } {
  const allocations: Allocation[] = plan.expected_actions.map((action) => ({ action, evidence: [], over: [], reported: [], unassigned: [] }));
  const byTool = new Map<string, EvidenceItem[]>();
  const unplanned: EvidenceItem[] = [];
  const planned = new Set(plan.expected_actions.map((a) => a.tool));
  for (const e of [...recorded].sort((x, y) => x.seq - y.seq)) {
    if (e.tool === null || !planned.has(e.tool)) unplanned.push(e);
    else {
      let list = byTool.get(e.tool);
      if (!list) byTool.set(e.tool, (list = []));
      list.push(e);
    }
  }
  const assigned = new Set<EvidenceItem>();
  const take = (list: EvidenceItem[], e: EvidenceItem): void => {
    list.push(e);
    assigned.add(e);
  };
  // Pass 1: min_count, earliest first.
  for (const al of allocations) {
    for (const e of byTool.get(al.action.tool) ?? []) {
      if (al.evidence.length >= al.action.min_count) break;
      if (!assigned.has(e) && accepts(al.action, e)) take(al.evidence, e);
    }
  }
  // Pass 2: up to max_count.
  for (const al of allocations) {
    const cap = al.action.max_count ?? Number.POSITIVE_INFINITY;
    for (const e of byTool.get(al.action.tool) ?? []) {
      if (al.evidence.length >= cap) break;
      if (!assigned.has(e) && accepts(al.action, e)) take(al.evidence, e);
    }
  }
  // Pass 3: over_count.
  // The allocations of each tool, in plan order (indexed once: a plan can name thousands of tools).
  const allocationsByTool = new Map<string, typeof allocations>();
  for (const al of allocations) {
    let list = allocationsByTool.get(al.action.tool);
    if (!list) allocationsByTool.set(al.action.tool, (list = []));
    list.push(al);
  }
  for (const [tool, entries] of byTool) {
    const ofTool = allocationsByTool.get(tool) ?? [];
    for (const e of entries) {
      if (assigned.has(e)) continue;
      const last = [...ofTool].reverse().find((al) => accepts(al.action, e));
      if (last) take(last.over, e);
    }
  }
  // Pass 4: reported_only.
  for (const al of allocations) {
    let short = al.action.min_count - al.evidence.length;
    for (const e of byTool.get(al.action.tool) ?? []) {
      if (short <= 0) break;
      if (!assigned.has(e) && !noEvidence(e)) {
        take(al.reported, e);
        short--;
      }
    }
  }
  // Pass 5: the rest of a planned tool.
  for (const [tool, entries] of byTool) {
    const ofTool = allocationsByTool.get(tool)!;
    const last = ofTool[ofTool.length - 1];
    for (const e of entries) if (!assigned.has(e)) take(last.unassigned, e);
  }
  return { allocations, unplanned };
}

function judge(allocations: Allocation[]): ActionReport[] {
  const byId = new Map(allocations.map((al) => [al.action.action_id, al]));
  return allocations.map((al) => {
    const a = al.action;
    const counted = [...al.evidence, ...al.over];
    const successful = counted.filter((e) => e.outcome === 'success').length;
    const failedCount = counted.filter((e) => e.outcome === 'failure').length;
    const unknown = counted.filter((e) => e.outcome === 'unknown').length;
    const n = al.evidence.length;
    const conditions = new Set<ActionStatus>();
    const notes: string[] = [];
    if (n < a.min_count) {
      if (n + al.reported.length >= a.min_count) {
        conditions.add('reported_only');
        notes.push(`${n} of ${a.min_count} required entries have an accepted provenance class; ${al.reported.length} more are only reported (${[...new Set(al.reported.map((e) => e.receipt_provenance_class ?? e.provenance_class ?? 'unknown provenance'))].join(', ')})`);
      } else {
        conditions.add('missing');
        notes.push(`${n} of ${a.min_count} required entries with an accepted provenance class${al.reported.length ? ` (and ${al.reported.length} only reported)` : ''}`);
      }
    }
    // failed: success required, evidence exists, fewer than min_count successful (unknown outcomes are not failures).
    if (a.must_succeed && counted.length > 0 && counted.length - failedCount < a.min_count) {
      conditions.add('failed');
      notes.push(`${failedCount} of ${counted.length} accepted entries recorded a failure; success was required`);
    }
    const order: ActionReport['order'] = [];
    if (a.after.length > 0 && n > 0) {
      const first = al.evidence[0].seq;
      for (const b of a.after) {
        const pre = byId.get(b)!;
        if (pre.evidence.length < pre.action.min_count) {
          order.push({ after: b, ok: false, detail: `${b} has no complete accepted evidence (${pre.evidence.length} of ${pre.action.min_count})` });
        } else {
          const done = pre.evidence[pre.action.min_count - 1].seq;
          const ok = done < first;
          order.push({ after: b, ok, detail: ok ? `${b} complete at seq ${done}, before seq ${first}` : `${b} complete only at seq ${done}, not before seq ${first}` });
        }
      }
      if (order.some((o) => !o.ok)) {
        conditions.add('out_of_order');
        notes.push(order.filter((o) => !o.ok).map((o) => o.detail).join('; '));
      }
    }
    if (al.over.length > 0) {
      conditions.add('over_count');
      notes.push(`${n + al.over.length} accepted entries, max_count ${a.max_count}`);
    }
    if (conditions.size === 0) conditions.add('covered');
    const list = ACTION_STATUSES.filter((s) => conditions.has(s));
    const status = list[0];
    if (status === 'covered') notes.push(`${n} accepted entr${n === 1 ? 'y' : 'ies'} (min_count ${a.min_count}${a.max_count !== null ? `, max_count ${a.max_count}` : ''})`);
    if (unknown > 0) notes.push(`${unknown} without a recorded receipt: outcome unknown`);
    return {
      action_id: a.action_id,
      tool: a.tool,
      status,
      conditions: list,
      min_count: a.min_count,
      max_count: a.max_count,
      must_succeed: a.must_succeed,
      accepted_provenance: a.accepted_provenance,
      after: a.after,
      evidence: al.evidence,
      over_count_evidence: al.over,
      reported_only_evidence: al.reported,
      unaccepted_unassigned: al.unassigned,
      successful_count: successful,
      failed_count: failedCount,
      unknown_outcome_count: unknown,
      order,
      detail: notes.join('; '),
    };
  });
}

// ---------------------------------------------------------------------------
// Integrity

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
function timelineIntegrity(jobId: string, entries: unknown[] | null, recorded: readonly CommitmentInput[]): { integrity: IntegritySection; timeline: TimelineResult | null } {
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

function workflowIntegrity(workflow: unknown | null, receipts: ReadonlyMap<string, unknown>): IntegritySection {
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

// ---------------------------------------------------------------------------
// The report

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
