/** The coverage report's types and fixed texts (docs/coverage.md); the report is built in reconcile.ts. */
import { NormalizedPlan, UnplannedPolicy } from './plan';
import type { ActionOutcome, OutcomeRecord, OutcomesSection } from './outcomes';
import type { Attestation, AttestationKind } from '../aer1/attestation';
import { CLOSE_MARKER_TOOL } from '../aer1/call-status';

export const REPORT_FORMAT = 'aer1-coverage-report/1';

/** The reserved tool name of the ledger's closing marker (defined with the failed-call rule, core/aer1/call-status.ts); coverage does not count the marker as an action ({@link closingMarker}). */
export { CLOSE_MARKER_TOOL };

/** The ledger's closing marker as a report lists it (`close`): its entry's seq and receipt id. */
export interface ClosingMarker {
  seq: number;
  tool: typeof CLOSE_MARKER_TOOL;
  receipt_id: string | null;
}

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
export type ReceiptField = 'tool' | 'canonical_bytes' | 'output_hash' | 'provenance_class' | 'recorded_by';

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
  /**
   * Set when the receipt was corrected (S9): the latest correction's id. The
   * outcome, status and provenance shown are the latest correction's; the
   * entry still names the original, whose bytes it is compared with.
   */
  superseded_by?: string;
  /** The corrections in order, the latest last (set with `superseded_by`). */
  correction_chain?: string[];
  /** The original receipt's outcome and status (set with `superseded_by`). */
  original_outcome?: Outcome;
  original_status?: string | null;
  /** Set when the receipt was recorded by another owner than the timeline (or the plan's `recorded_by_owner`): its recorder identities. */
  receipt_recorded_by?: string[];
  /**
   * Set when the content of the entry or of its receipt was erased (issue 29):
   * counted as the ledger recorded and verified it at ingestion, its content
   * no longer re-checked (finding `evidence_erased`).
   */
  evidence_erased?: { entry: boolean; receipt: boolean; recorded_verdict: string | null };
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
  /** Set when the plan requires an outcome for this action (issue 18): its outcome status, beside `status`. */
  outcome?: ActionOutcome;
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
  /**
   * Who stands behind the binding commitments (`ledger_issued`, `attested_by`,
   * else `self_asserted`: the producer's own word, the finding
   * `commitment_self_asserted`); null when none binds.
   */
  attestation: AttestationKind | null;
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
  /** Witness metadata as given (`witness`, `retrieved_from`, `retrieved_at`), or null: for a self-asserted commitment, the poster's claim. */
  witness: unknown;
  /** Who stands behind it: `ledger_issued`, `attested_by`, `self_asserted`. */
  attestation: AttestationKind;
  /** The key names whose signatures verify (empty when self-asserted). */
  attested_by: string[];
  detail: string;
}

/** Recorder identities of a stream (src/coverage/ledger-reader.ts `recordersAsOf`): a key's owner, or its key name when it has none. */
export interface Recorders {
  owners: string[];
  key_names: string[];
  /** Events that name no key (written before attribution). */
  unattributed: number;
}

/** Who recorded the subject (docs/coverage.md, "Who recorded it"). */
export interface RecordedBySection {
  /** false offline: files carry no keys, so nothing here is checked. */
  checked: boolean;
  /** The one recorder identity of every event of the subject's stream; null when nothing is recorded, several recorded it, or an event names no key. */
  owner: string | null;
  /** Every recorder identity (key owner, or key name for a key without an owner), sorted. */
  owners: string[];
  key_names: string[];
  unattributed_events: number;
  /** The plan's `recorded_by_owner`, or null. */
  plan_owner: string | null;
  plan_owner_check: 'not_named' | 'satisfied' | 'recorded_by_other_owner' | 'not_recorded' | 'not_checked_offline';
  /**
   * Receipts the entries (or steps) name that another owner recorded: not the
   * plan's `recorded_by_owner` (then no evidence, `receipt_recorded_by_other_owner`),
   * or, when the plan names none, not one of the stream's recorders (stated only).
   */
  receipts_by_other_owner: { receipt_id: string; owners: string[]; key_names: string[] }[];
}

export interface IntegritySection {
  kind: 'timeline' | 'workflow';
  /** Who recorded the timeline (or workflow) and the receipts it names. */
  recorded_by: RecordedBySection;
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
  /**
   * Set when entries of the timeline were erased (issue 29): `verdict` is then
   * `erased` (the chain can no longer be re-checked), this is the verdict the
   * ledger recorded at ingestion, and `erased_entries` their seqs.
   */
  recorded_verdict?: string | null;
  erased_entries?: number[];
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
  /** The ledger's closing marker (timelines whose last entry is one): the close, not an action (absent otherwise). */
  close?: ClosingMarker;
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
  /** Outcome evidence (issue 18): present when the plan requires an outcome or a recorded call has one. */
  outcomes?: OutcomesSection;
}

/** What the recorded timeline or workflow is, as of the report. */
export type RecordInput =
  | {
      kind: 'timeline';
      /** Parsed entries in order; null when no timeline is recorded. */
      entries: unknown[] | null;
      /** Every endpoint commitment recorded for the job as of the report (parsed), in record order, with its record id and ledger position. */
      commitments: { id?: string | null; value: unknown; envelope?: Record<string, unknown>; recorded_position: number | null; attestation?: Attestation }[];
    }
  | {
      kind: 'workflow';
      /** The parsed workflow receipt; null when none is recorded. */
      workflow: unknown | null;
    };

/** The erasure of one record's content (issue 29): who, when, why and the position of the `PayloadsErased` event. */
export interface ErasureNote {
  erasure_id: string;
  /** Ledger position of the `PayloadsErased` event. */
  position: number;
  erased_at: string;
  by: string;
  legal_basis: string;
  reason: string;
}

/** What the ledger retained of an erased receipt (its `ReceiptRecorded` data without content) and the erasure. */
export interface ErasedReceipt {
  tool: string | null;
  provenance_class: string | null;
  /** Transport `status`, null for the core form. */
  status: string | null;
  form: string | null;
  /** The verdict the ledger recorded at ingestion. */
  recorded_verdict: string | null;
  erasure: ErasureNote | null;
}

/**
 * Evidence whose content was erased (issue 29), from the retained data of
 * the `PayloadsErased` events: counted as recorded and verified at
 * ingestion, never re-checked, and named by the report.
 */
export interface ErasedEvidence {
  /** Lowercase receipt id -> what was retained. */
  receipts: ReadonlyMap<string, ErasedReceipt>;
  /** Erased timeline entries by seq (the import's erasure for each of its entries). */
  entries: ReadonlyMap<number, ErasureNote | null>;
  /** The verdict the ledger recorded for the timeline at ingestion when its entries were erased (appends are accepted only when they link: `valid`). */
  timeline_recorded_verdict?: string | null;
  /** Erased endpoint commitments (record id, position, erasure); left out of the commitment judgement. */
  commitments: readonly { id: string | null; position: number; erasure: ErasureNote | null }[];
  /** Erased outcome reports (lowercase outcome id): verified when recorded; their content is gone. */
  outcomes: ReadonlyMap<string, ErasureNote | null>;
}

export interface ReconcileInput {
  plan: NormalizedPlan;
  plan_meta: Omit<PlanMeta, 'digest' | 'title' | 'unplanned' | 'registered_after_execution_began'> & { digest?: string };
  record: RecordInput;
  /** Recorded receipts (parsed documents, JSON-RPC wrappers allowed), keyed by lowercase id. */
  receipts: ReadonlyMap<string, unknown>;
  as_of_position: number | null;
  /**
   * Correction chains (S9): original id -> correction ids in order, the
   * latest last (lowercase); their documents are in `receipts`. Absent: no
   * correction is known.
   */
  corrections?: ReadonlyMap<string, readonly string[]>;
  /**
   * Who recorded the subject's stream and each receipt (keyed by lowercase
   * id). Absent offline: the plan's `recorded_by_owner` is then reported as
   * not checked, never as satisfied.
   */
  recorders?: { record: Recorders | null; receipts: ReadonlyMap<string, Recorders> };
  /**
   * Outcome reports that verified (issue 18), in ledger order (offline: file
   * order). Only those naming the subject (`job_id` = the job, or for a
   * workflow its `workflow_id`) count; they are matched to recorded calls by
   * receipt id; others are ignored.
   */
  outcomes?: readonly OutcomeRecord[];
  /**
   * Timelines only: for each receipt id (lowercase) the subject's entries
   * name, the other jobs whose entries name it too as of the report, sorted
   * (receipts no other job names are absent). Each is the finding
   * `receipt_shared_with_other_job`: one recorded call claimed by two jobs.
   * Absent offline (files do not show other jobs): then not checked, and the
   * report says so in `does_not_prove`.
   */
  other_jobs?: ReadonlyMap<string, readonly string[]>;
  /** Evidence whose content was erased (issue 29); absent: none. */
  erased?: ErasedEvidence;
}

export const MATCHING_RULES_REF = 'docs/coverage.md#matching-rules';

export const DOES_NOT_PROVE = [
  'Coverage is not outcome: a covered action shows that a receipt of the expected tool was recorded with an accepted provenance class, not that the action had the effect claimed. Confirm outcomes with the system that owns the effect (rev 09).',
  'This report cannot show that nothing happened outside the recorder: unlogged side-channel actions, calls that never crossed the recorder and authorizations never captured are invisible to it (rev 09, S7.3).',
  'Provenance is never upgraded: LOGGED BY AGENT evidence remains an agent report and does not cover an action whose plan does not accept it (S5, S7.3).',
  'Matching is by tool name only: the report does not check arguments, targets or results of the calls it counts.',
];
