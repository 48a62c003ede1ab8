/**
 * The answers of the job timeline endpoints (verify, endpoint, commitments)
 * and the mappers that build them from the core's judgements.
 */
import type { ErasureNotice } from '../../erasure/erased-records';
import { AssessedCommitment, Check, CommitmentFinding, CommitmentOutcome, CommitmentsAssessment, CommitmentsStatus, whoStandsBehind, isObject, JobAssessment } from '../../core/aer1';
import { Attestation, AttestationKind } from '../../core/aer1/attestation';
import type { RecordedBy } from '../../core/ledger/event-hash';
import { CommitmentRow } from '../timelines.repository';

export const NOT_EXCLUDED = 'Truncation is not excluded: no binding endpoint commitment (S7.3)';

/** The commitment part of a verification report: the deciding commitment (the first that contradicts the timeline, else the latest binding one, else the latest). */
export interface CommitmentStatus {
  /** `binding` only when truncation is excluded: some commitment binds and none contradicts. */
  status: 'binding' | 'non_binding' | 'absent';
  /** What the deciding commitment itself shows (see `commitments`); null when none is recorded. */
  outcome: CommitmentOutcome | null;
  reasons: string[];
  id: string | null;
  /** The commitment as received (parsed from the stored text). */
  commitment: unknown;
  witness: Record<string, unknown> | null;
  recorded_at: string | null;
  checks: Check[];
  /** How many commitments are recorded for the job. */
  recorded: number;
  /** Who stands behind the deciding commitment (null when none is recorded). */
  attestation: AttestationView | null;
}

/** Who stands behind a commitment, as the API shows it. */
export interface AttestationView {
  /** `ledger_issued` (this ledger's log key), `attested_by` (a key in TRUSTED_COMMITMENT_KEYS), `self_asserted`. */
  kind: AttestationKind;
  /** The key names whose signatures verify (`attested_by`, `ledger_issued`); empty when self-asserted. */
  by: string[];
  /** The key that posted it (null before attribution; for a ledger-issued one, the key whose request closed the timeline). */
  posted_by: string | null;
  detail: string;
  /** Why a stored signature does not count now (then `self_asserted`), else null. */
  problem: string | null;
  /** The signed note (text, blank line, signatures), when one is stored. */
  note: string | null;
}

/** One recorded commitment as the verifier judged it, with every other one (src/aer1/commitments.ts). */
export interface CommitmentVerification {
  id: string;
  recorded_at: string;
  position: number;
  outcome: CommitmentOutcome;
  binding: boolean;
  /** True when it proves truncation or a substituted entry: no other commitment hides that. */
  contradicts: boolean;
  missing_entries: number | null;
  detail: string;
  reasons: string[];
  commitment: unknown;
  /** Witness metadata as given: for a self-asserted commitment, the poster's claim (see `attestation`), never a fact. */
  witness: Record<string, unknown> | null;
  attestation: AttestationView;
}

/** GET /api/jobs/:job_id/verify. */
export interface TimelineVerification {
  /**
   * The one overall answer: the chain verdict and every commitment judged
   * together (`clean` only when the chain verifies, a commitment binds and none
   * contradicts). The HTTP status is 200 only for `clean`.
   */
  assessment: JobAssessment;
  /** {@link assessment} in words. */
  headline: string;
  job_id: string;
  source: string;
  verdict: string;
  historical: boolean;
  reasons: string[];
  checks: Check[];
  construction: string | null;
  entry_count: number;
  final_entry_digest: string | null;
  closed: boolean;
  provenance: Record<string, number>;
  /** Entries recording a failed call: a `status` member present and not `ok` (the chain may still be valid). */
  failed_calls: number;
  commitment: CommitmentStatus;
  /** All recorded commitments judged together: `binding`, the first contradiction (`truncation_detected`, `final_entry_substituted`, `entry_substituted`), `non_binding` or `absent`. */
  commitment_assessment: CommitmentsStatus;
  /** Every recorded commitment, in record order, with its outcome. */
  commitments: CommitmentVerification[];
  /** One per commitment that contradicts the visible timeline. */
  findings: CommitmentFinding[];
  /** True only when some commitment binds and none contradicts. */
  truncation_excluded: boolean;
  /** Who stands behind the binding commitments: `ledger_issued`, `attested_by`, or only `self_asserted` (the producer's word); null when none binds. */
  binding_attestation: AttestationKind | null;
  statement: string;
  limits: string[];
  url: string;
  /** Set when entries or commitments of the job were erased (issue 29); null otherwise. */
  erased: TimelineErasure | null;
}

/** What was erased of a job (issue 29), as its verifier and page state it. */
export interface TimelineErasure {
  /** Entries whose content was erased, of `entry_count`. */
  entries: number;
  entry_count: number;
  /** Their seqs (the first 100). */
  seqs: number[];
  /** Links recomputed now (between entries both held) and links that join an erased entry (not re-checkable). */
  links_rechecked: number;
  links_not_rechecked: number;
  /** Endpoint commitments whose content was erased (not judged). */
  commitments: { id: string; recorded_at: string; position: number }[];
  /** The erasures that took them, one per erasure. */
  erasures: ErasureNotice[];
  statement: string;
}

/** GET /api/jobs/:job_id/endpoint. */
export interface EndpointAnswer {
  job_id: string;
  final_entry_digest: string;
  entry_count: number;
  published_at: string;
  ledger_commitment: {
    id: string;
    commitment: unknown;
    /** The commitment's exact JSON text (canonical: members sorted, no white space). */
    text: string;
    /** The signed note: `text`, a newline, a blank line, the log key's signature line. */
    note: string;
    log_vkey: string | null;
    signature_verifies: boolean;
    /** Its event's ledger position (its log leaf is position - 1). */
    position: number;
    event_hash: string | null;
    recorded_at: string;
  } | null;
  statement: string;
}

/** A commitment row with the key that recorded it. */
export type CommitmentWithWriter = CommitmentRow & { recorded_by: RecordedBy | null };

/** The API form of an attestation judged by the core. */
export function attestationView(a: Attestation, postedBy: string | null, note: string | null): AttestationView {
  return { kind: a.kind, by: a.by, posted_by: postedBy, detail: a.detail, problem: a.problem, note };
}

export function commitmentVerification(a: AssessedCommitment, row: CommitmentWithWriter): CommitmentVerification {
  return {
    id: a.id!,
    recorded_at: a.recorded_at!,
    position: a.position!,
    outcome: a.outcome,
    binding: a.binding,
    contradicts: a.contradicts,
    missing_entries: a.missing_entries,
    detail: a.detail,
    reasons: a.check.reasons,
    commitment: a.check.commitment,
    witness: a.check.witness,
    attestation: attestationView(a.attestation, row.recorded_by?.name ?? null, row.attestation?.note ?? null),
  };
}

/** The one-sentence verdict on truncation. Never says excluded when any commitment contradicts the timeline. */
export function statementFor(a: CommitmentsAssessment, chosen: AssessedCommitment | null): string {
  if (a.truncation_excluded && chosen) {
    const c = chosen.check;
    const at = isObject(c.commitment) && typeof c.commitment.published_at === 'string' ? ` at ${c.commitment.published_at}` : '';
    const others = a.commitments.length > 1 ? ` None of the ${a.commitments.length} recorded commitments contradicts it.` : '';
    const who = `It is ${whoStandsBehind(chosen.attestation, c.witness)}.`;
    const self = chosen.attestation.kind === 'self_asserted' ? ' A self-asserted commitment is the producer\'s own word: it excludes truncation only as far as the producer is trusted (rev 09: two files, one trust domain).' : '';
    return `Truncation and last-entry substitution are excluded up to the endpoint commitment published${at}: it binds job_id, entry_count and final_entry_digest of the visible -07 timeline (rev 09). ${who}${self}${others} This does not show that every real action was recorded.`;
  }
  if (a.findings.length > 0) {
    const contradiction = a.findings.map((f) => f.message).join('; ');
    if (a.binding.length === 0) return `${NOT_EXCLUDED}, and a recorded commitment contradicts the visible timeline: ${contradiction}.`;
    const n = a.binding.length;
    return `Truncation is not excluded (S7.3): a recorded commitment contradicts the visible timeline: ${contradiction}. ${n} other commitment${n === 1 ? '' : 's'} bind${n === 1 ? 's' : ''} the visible timeline; that does not hide the contradiction.`;
  }
  if (a.commitments.length > 0) return `${NOT_EXCLUDED}; no recorded commitment binds the visible timeline (${a.commitments.map((c) => `${c.id ?? `#${c.index + 1}`}: ${c.outcome}`).join(', ')}).`;
  return `${NOT_EXCLUDED}; none is recorded for this job.`;
}
