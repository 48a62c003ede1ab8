/**
 * Reads one job timeline and its endpoint commitments straight from the
 * read-model tables and verifies them with the core (S7, rev 09), so the
 * public page does not depend on the timelines module's service API.
 */
import { Attestation, AttestationKind, CommitmentTrust, judgeAttestation, NO_TRUST } from '../core/aer1/attestation';
import { assessCommitments, chainVerdict, failedCallStatus, isClosingMarkerEntry, Check, CommitmentFinding, CommitmentOutcome, CommitmentsStatus, earlierCounts, has, isObject, isUuid, JsonObject, RecordedCommitment, TimelineResult, TimelineVerifier, JobAssessment, jobAssessment } from '../core/aer1';
import { parseStoredJson, Queryable } from '../database/rows';
import { TimelineReads } from '../timelines/timeline-reads';

export interface TimelineEntryView {
  seq: number;
  tool: string | null;
  provenance_class: string | null;
  receipt_id: string | null;
  /** Recomputed -07 entry digest (S7.1), or the stored one when it cannot be recomputed. */
  entry_digest: string | null;
  reasons: string[];
  close: boolean;
  /** The entry's `status` when it records a failed call (present and not `ok`), else null. */
  failed_status: string | null;
  /** Whether this ledger holds the entry's receipt (set by the public pages; absent where not looked up). */
  receipt_recorded?: boolean;
  /** The entry's content was erased (issue 29): its digest and links cannot be re-checked. */
  erased: boolean;
}

/** What was erased of a job (issue 29), as its page counts it. */
export interface TimelineViewErasure {
  entries: number;
  links_rechecked: number;
  links_not_rechecked: number;
  /** The ledger positions of the erased entries (the first 100) and of erased commitments, for their erasures. */
  positions: number[];
  /** Endpoint commitments whose content was erased (not judged). */
  commitments: { id: string; recorded_at: string; position: number }[];
}

export interface CommitmentView {
  id: string;
  recorded_at: string;
  /** The key that posted the commitment (null before attribution). */
  recorded_by: { key_id: string; name: string } | null;
  /** Re-checked now against the visible timeline. */
  binding: boolean;
  /** What it shows, judged with every other commitment by the core's assessCommitments. */
  outcome: CommitmentOutcome;
  /** Proves truncation or a substituted entry: no other commitment hides it. */
  contradicts: boolean;
  detail: string;
  verdict: string;
  reasons: string[];
  checks: Check[];
  commitment: unknown;
  /** Who stands behind it (the witness metadata of a self-asserted one is the poster's claim). */
  attestation: Attestation;
  /** `ledger` for the ledger's own commitment. */
  issued_by: 'ledger' | null;
  /** The signed note, when one is stored. */
  note: string | null;
  witness: Record<string, unknown> | null;
}

export interface TimelineView {
  job_id: string;
  verdict: string;
  reasons: string[];
  construction: string | null;
  entry_count: number;
  closed: boolean;
  final_entry_digest: string | null;
  checks: Check[];
  limits: string[];
  provenance: Record<string, number>;
  /** Entries (of all, not only this page) recording a failed call: a `status` member present and not `ok`. */
  failed_calls: number;
  /** Entries (of all) recording a call: all but the ledger's closing marker ({@link isClosingMarkerEntry}). */
  calls: number;
  /** Who stands behind the binding commitments (null: none binds); `self_asserted` is the producer's own word. */
  binding_attestation: AttestationKind | null;
  /** True only when some endpoint commitment binds the visible timeline now and none contradicts it (S7.3). */
  truncation_excluded: boolean;
  /** The job's one assessment, as GET /api/jobs/{id}/verify answers it (jobAssessment). */
  assessment: JobAssessment;
  commitment_status: CommitmentsStatus;
  /** One per commitment that contradicts the visible timeline. */
  findings: CommitmentFinding[];
  commitments: CommitmentView[];
  /** One page of the entries: those with seq > `page.after`, at most `page.limit` (the verdict covers them all). */
  entries: TimelineEntryView[];
  page: EntryPage;
  stored: { verdict: string | null; source: string | null } | null;
  /** Set when entries or commitments were erased (issue 29); null otherwise. */
  erased: TimelineViewErasure | null;
}

/** Which entries a page shows: seq > `after`, at most `limit`; `next_after` continues, null on the last page. */
export interface EntryPage {
  after: number;
  limit: number;
  next_after: number | null;
}

/** Entries per job page unless `?limit=` says otherwise (at most {@link MAX_PAGE_ENTRIES}). */
export const DEFAULT_PAGE_ENTRIES = 200;
export const MAX_PAGE_ENTRIES = 1000;

/** Load and verify the timeline of `jobId`; null when the ledger holds no such job. */
export async function loadTimelineView(
  timelines: TimelineReads,
  db: Queryable,
  jobId: string,
  range: { after: number; limit: number } = { after: 0, limit: DEFAULT_PAGE_ENTRIES },
  trust: CommitmentTrust = NO_TRUST,
): Promise<TimelineView | null> {
  const summary = await timelines.get(db, jobId);
  const stored = summary ? { verdict: summary.verdict, source: summary.source } : null;
  const rows = await timelines.entries(db, jobId);
  if (!stored && rows.length === 0) return null;
  const v = new TimelineVerifier({ collectEntries: true });
  // Per row, the status of a failed call (null: none recorded or `ok`).
  const erasedPositions: number[] = [];
  const failed = rows.map((r) => {
    if (r.raw === '') {
      // Issue 29: erased content; what the ledger still holds of the entry keeps its place in the chain.
      v.pushErased({ seq: r.seq, close: r.close, provenance_class: r.provenance_class });
      if (erasedPositions.length < 100) erasedPositions.push(r.position);
      return null;
    }
    const e = parseStoredJson(r.raw);
    v.push(e);
    return failedCallStatus(e);
  });
  const result: TimelineResult = v.finish();
  const allCommitments = await timelines.commitmentsWithWriters(db, jobId);
  const commitmentRows = allCommitments.filter((c) => c.raw !== '');
  const erasedCommitments = allCommitments.filter((c) => c.raw === '').map((c) => ({ id: c.id, recorded_at: c.recorded_at, position: c.position }));
  const recorded: RecordedCommitment[] = commitmentRows.map((c) => {
    const parsed = parseStoredJson(c.raw);
    // Stored either as the commitment itself or as an envelope {commitment, witness, ...}.
    const attestation = judgeAttestation(c.raw, c.attestation, trust, c.recorded_by?.name ?? null);
    if (isObject(parsed) && has(parsed, 'commitment') && !has(parsed, 'final_entry_digest')) return { id: c.id, value: parsed.commitment, envelope: parsed as JsonObject, recorded_at: c.recorded_at, attestation };
    return { id: c.id, value: parsed, recorded_at: c.recorded_at, attestation };
  });
  const digestAt = new Map<number, string | null>(earlierCounts(result, recorded).map((k) => [k, result.entries?.[k - 1]?.entry_digest ?? null]));
  const assessment = assessCommitments(result, recorded, { job_id: jobId, digest_at: digestAt });
  const commitments: CommitmentView[] = assessment.commitments.map((a) => ({
    id: a.id!,
    recorded_at: a.recorded_at!,
    recorded_by: commitmentRows[a.index].recorded_by,
    binding: a.binding,
    outcome: a.outcome,
    contradicts: a.contradicts,
    detail: a.detail,
    verdict: a.check.verdict,
    reasons: a.check.reasons,
    checks: a.check.checks,
    commitment: recorded[a.index].value,
    witness: a.check.witness,
    attestation: a.attestation,
    issued_by: commitmentRows[a.index].issued_by,
    note: commitmentRows[a.index].attestation?.note ?? null,
  }));
  const first = rows.findIndex((r) => r.seq > range.after);
  const from = first < 0 ? rows.length : first;
  const shown = rows.slice(from, from + range.limit);
  const entries: TimelineEntryView[] = shown.map((r, j) => {
    const o = result.entries?.[from + j];
    return {
      seq: r.seq,
      tool: r.tool,
      provenance_class: r.provenance_class,
      receipt_id: r.receipt_id,
      entry_digest: o?.entry_digest ?? r.entry_digest,
      reasons: o?.reasons ?? [],
      close: r.close,
      failed_status: failed[from + j],
      erased: r.raw === '',
    };
  });
  const verdict = chainVerdict(result);
  return {
    job_id: jobId,
    verdict,
    reasons: result.reasons,
    construction: result.construction,
    entry_count: result.entry_count,
    closed: result.closed,
    final_entry_digest: result.final_entry_digest,
    checks: result.checks,
    limits: result.limits,
    provenance: result.provenance,
    failed_calls: failed.filter((x) => x !== null).length,
    calls: rows.filter((r) => !isClosingMarkerEntry({ tool: r.tool, close: Boolean(r.close) })).length,
    truncation_excluded: assessment.truncation_excluded,
    binding_attestation: assessment.binding_attestation,
    assessment: jobAssessment(verdict, assessment),
    commitment_status: assessment.status,
    findings: assessment.findings,
    commitments,
    entries,
    page: { after: range.after, limit: range.limit, next_after: from + shown.length < rows.length && shown.length > 0 ? shown[shown.length - 1].seq : null },
    stored,
    erased:
      result.erased || erasedCommitments.length > 0
        ? { entries: result.erased?.entries ?? 0, links_rechecked: result.erased?.links_rechecked ?? 0, links_not_rechecked: result.erased?.links_not_rechecked ?? 0, positions: [...erasedPositions, ...erasedCommitments.map((c) => c.position)], commitments: erasedCommitments }
        : null,
  };
}

/** True when `id` can be linked as a receipt page. */
export function linkableReceiptId(id: string | null): id is string {
  return isUuid(id);
}
