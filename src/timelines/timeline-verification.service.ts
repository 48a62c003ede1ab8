/**
 * Reading and re-verifying a job's timeline (S7) with every endpoint
 * commitment recorded for it (rev 09): the chain recomputed from the stored
 * entry texts, once per timeline state, and the commitments judged together.
 */
import { Injectable } from '@nestjs/common';
import { assessCommitments, chainVerdict, CommitmentsAssessment, decidingCommitment, earlierCounts, entryDigest, failedCallStatus, isClosingMarkerEntry, TimelineResult, TimelineVerifier, jobAssessment, JOB_ASSESSMENT_HEADLINE } from '../core/aer1';
import { CommitmentTrust, judgeAttestation, NO_TRUST } from '../core/aer1/attestation';
import { LogIdentityService } from '../log/log-identity.service';
import { CommitmentTrustService } from '../log/commitment-trust.service';
import { ConflictError, LedgerError, NotFoundError } from '../common/errors';
import { parseRawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository } from '../ledger/events.repository';
import { ResultCache } from '../common/result-cache';
import { ErasedRecords, ERASED_STATUS, isErasedRaw } from '../erasure/erased-records';
import { streams } from '../ledger/streams';
import { TimelineEntryRow, TimelineRow, TimelinesRepository } from './timelines.repository';
import { attestationView, commitmentVerification, CommitmentStatus, CommitmentWithWriter, EndpointAnswer, statementFor, TimelineErasure, TimelineVerification } from './dto/timelines.answers';

export type { CommitmentRow, TimelineEntryRow, TimelineRow } from './timelines.repository';
export type { AttestationView, CommitmentStatus, CommitmentVerification, CommitmentWithWriter, EndpointAnswer, TimelineErasure, TimelineVerification } from './dto/timelines.answers';
export { NOT_EXCLUDED } from './dto/timelines.answers';

const PAGE = 2000;

/** A timeline's chain result and how many of its entries record a failed call (a `status` present and not `ok`). */
export interface CountedChain {
  result: TimelineResult;
  failed_calls: number;
  /** Entries that record a call: all but the ledger's closing marker ({@link isClosingMarkerEntry}). */
  calls: number;
  /** Erased entries (issue 29): the first {@link LISTED_ERASED} by seq and ledger position. */
  erased: { seq: number; position: number }[];
}

/** At most this many erased entries are named (all are counted in `result.erased`). */
const LISTED_ERASED = 100;

/** The stored timeline of a job re-verified, its commitments judged, its endpoint. */
@Injectable()
export class TimelineVerificationService {
  /** Chain results per timeline state (job and last position: the entries as of it never change), at most 512, a few KB each. */
  readonly closedChains = new ResultCache<CountedChain>(512);

  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
    private readonly timelines: TimelinesRepository,
    private readonly events: EventsRepository,
    private readonly guard: ProjectionGuard,
    private readonly identity: LogIdentityService,
    private readonly trust: CommitmentTrustService,
    private readonly erasedRecords: ErasedRecords,
  ) {}

  /**
   * The timeline row, or 404; the job's rows (timeline, entries,
   * commitments) checked against its events first: 409 `projection_mismatch`.
   */
  async get(jobId: string): Promise<TimelineRow> {
    await checkTimelineRows(this.guard, this.db, jobId);
    const row = await this.timelines.get(this.db, jobId);
    if (!row) throw new NotFoundError('job', jobId);
    return row;
  }

  /** Pages of stored entries in seq order (constant memory in the timeline length). */
  async *entryRows(q: Queryable, jobId: string, after = 0, limit = Number.MAX_SAFE_INTEGER): AsyncGenerator<TimelineEntryRow> {
    let last = after;
    let left = limit;
    while (left > 0) {
      const n = Math.min(PAGE, left);
      const rows = await this.timelines.entryPage(q, jobId, last, n);
      yield* rows;
      if (rows.length < n) return;
      left -= rows.length;
      last = rows[rows.length - 1].seq;
    }
  }

  /**
   * Re-verify the stored entries with the core, fed from their stored texts (never the stored verdict). The
   * entries of a timeline as of its last position can never change (closed or open: appends only add), so
   * its chain result is computed once per state and kept, keyed by job and last position (see
   * `closedChains`); an append makes a new key. The result is shared: callers must not modify it.
   */
  async verifyEntries(q: Queryable, jobId: string): Promise<TimelineResult> {
    return (await this.countedChain(q, jobId)).result;
  }

  /** {@link verifyEntries} with the count of entries recording a failed call ({@link failedCallStatus}). */
  async countedChain(q: Queryable, jobId: string): Promise<CountedChain> {
    const row = await this.timelines.get(q, jobId);
    // A timeline's entries as of its last position never change (append-only), open or closed, unless erased (issue 29):
    // the ledger-wide count of erased events is part of the key, so an erasure anywhere makes a new one.
    const key = row ? `${row.last_position}:${row.entry_count}:${await this.erasedRecords.erasedCount(q)}:${jobId}` : null;
    const kept = key === null ? undefined : this.closedChains.get(key);
    if (kept) return kept;
    const v = new TimelineVerifier();
    let failedCalls = 0;
    let calls = 0;
    const erased: CountedChain['erased'] = [];
    for await (const r of this.entryRows(q, jobId)) {
      // The closing marker closes the job; it is no call (neither counted nor failed), erased or not.
      if (!isClosingMarkerEntry({ tool: r.tool, close: Boolean(r.close) })) calls++;
      if (isErasedRaw(r.raw)) {
        // Issue 29: what the ledger still holds of the entry; its links are counted as not re-checkable.
        v.pushErased({ seq: r.seq, close: r.close, provenance_class: r.provenance_class });
        if (erased.length < LISTED_ERASED) erased.push({ seq: r.seq, position: r.position });
        continue;
      }
      const e = parseStored(r.raw);
      if (failedCallStatus(e) !== null) failedCalls++;
      v.push(e);
    }
    const counted = { result: v.finish(), failed_calls: failedCalls, calls, erased };
    if (key !== null) this.closedChains.set(key, counted);
    return counted;
  }

  /**
   * Every commitment recorded for the job, judged together against the
   * timeline by the core's {@link assessCommitments} (the same function the
   * job page, coverage reports and `aer1` use).
   */
  async assess(q: Queryable, jobId: string, timeline: TimelineResult): Promise<{ rows: CommitmentWithWriter[]; erased: CommitmentWithWriter[]; assessment: CommitmentsAssessment }> {
    return assessJobCommitments(q, jobId, timeline, this.timelines, this.trust.trust);
  }

  /**
   * GET /api/jobs/:job_id/verify: the stored entries re-verified (S7), every
   * recorded commitment re-checked against the timeline as it is now and
   * judged together: truncation is excluded only when one binds and none
   * contradicts (a commitment counting more entries, or naming another
   * digest for an entry, is a finding no other commitment hides). The
   * deciding commitment is reported in `commitment`, all in `commitments`.
   */
  async verify(jobId: string): Promise<TimelineVerification> {
    const row = await this.get(jobId);
    const { result, failed_calls, calls, erased } = await this.countedChain(this.db, jobId);
    const { rows, erased: erasedCommitments, assessment } = await this.assess(this.db, jobId, result);
    const chosen = decidingCommitment(assessment);
    const excluded = assessment.truncation_excluded;
    const commitment: CommitmentStatus = chosen
      ? {
          status: excluded ? 'binding' : 'non_binding',
          outcome: chosen.outcome,
          reasons: chosen.check.reasons,
          id: chosen.id,
          commitment: chosen.check.commitment,
          witness: chosen.check.witness,
          recorded_at: chosen.recorded_at,
          checks: chosen.check.checks,
          recorded: rows.length,
          attestation: attestationView(chosen.attestation, rows[chosen.index].recorded_by?.name ?? null, rows[chosen.index].attestation?.note ?? null),
        }
      : { status: 'absent', outcome: null, reasons: [], id: null, commitment: null, witness: null, recorded_at: null, checks: [], recorded: 0, attestation: null };
    const verdict = chainVerdict(result);
    const overall = jobAssessment(verdict, assessment);
    const erasure = await this.erasure(result, erased, erasedCommitments);
    return {
      assessment: overall,
      // The chain's assessment, and (as the job page says) how many recorded calls failed: never CLEAN alone then.
      headline: (overall === 'partly_erased' && result.erased ? erasedHeadline(result.erased, result.entry_count) : JOB_ASSESSMENT_HEADLINE[overall]) + (failed_calls > 0 ? `; ${failed_calls} of ${calls} recorded calls failed` : ''),
      job_id: jobId,
      source: row.source,
      verdict,
      historical: result.verdict === 'historical',
      reasons: result.reasons,
      checks: result.checks,
      construction: result.construction,
      entry_count: result.entry_count,
      final_entry_digest: result.final_entry_digest,
      closed: result.closed,
      provenance: result.provenance,
      failed_calls,
      commitment,
      commitment_assessment: assessment.status,
      commitments: assessment.commitments.map((a) => commitmentVerification(a, rows[a.index])),
      findings: assessment.findings,
      truncation_excluded: excluded,
      binding_attestation: assessment.binding_attestation,
      // Issue 29: commitments whose content was erased were recorded: never "none is recorded".
      statement:
        erasedCommitments.length > 0 && assessment.commitments.length === 0
          ? `Truncation is not excluded (S7.3): ${erasedCommitments.length} endpoint commitment(s) were recorded for this job and their content was erased, so none can be judged.`
          : statementFor(assessment, chosen),
      limits: excluded ? chosen!.check.limits : result.limits,
      url: this.urls.job(jobId),
      erased: erasure,
    };
  }

  /** What was erased of the job (issue 29), with the erasures that took it; null when nothing was. */
  async erasure(result: TimelineResult, entries: CountedChain['erased'], commitments: CommitmentWithWriter[]): Promise<TimelineErasure | null> {
    if (!result.erased && commitments.length === 0) return null;
    const notices = await this.erasedRecords.ofPositions([...entries.map((e) => e.position), ...commitments.map((c) => c.position)]);
    const erasures = [...new Map([...notices.values()].map((n) => [n.erasure_id, n])).values()];
    const n = result.erased?.entries ?? 0;
    return {
      entries: n,
      entry_count: result.entry_count,
      seqs: entries.map((e) => e.seq),
      links_rechecked: result.erased?.links_rechecked ?? 0,
      links_not_rechecked: result.erased?.links_not_rechecked ?? 0,
      commitments: commitments.map((c) => ({ id: c.id, recorded_at: c.recorded_at, position: c.position })),
      erasures,
      statement: `${erasures.map((e) => e.statement).join('; ') || 'Content erased'}. ${n} of ${result.entry_count} entries${commitments.length ? ` and ${commitments.length} endpoint commitment(s)` : ''} erased: their links cannot be re-checked (${result.erased?.links_not_rechecked ?? 0} links); every other link was recomputed now. The leaves of the job's events (format 3: ids, seq, type, key and time, no content) still prove that every entry was recorded, in order.`,
    };
  }

  /**
   * GET /api/jobs/:job_id/endpoint: the endpoint of a closed job whose
   * timeline verifies, `{job_id, final_entry_digest, entry_count,
   * published_at}` (`published_at`: when the ledger recorded the close), and
   * the ledger-issued commitment over it (`ledger_commitment`: its record,
   * the exact commitment text, and the signed note a verifier checks with
   * the log's vkey), or null with `statement` saying why none was issued
   * (no log key, or closed before the ledger issued commitments).
   * 409 `timeline_not_closed` / `timeline_not_valid`; 410 `content_erased`
   * (entries erased: the endpoint cannot be recomputed); 404 unknown job.
   */
  async endpoint(jobId: string): Promise<EndpointAnswer> {
    await this.get(jobId);
    const result = await this.verifyEntries(this.db, jobId);
    if (!result.closed) throw new ConflictError('timeline_not_closed', `job ${jobId} is not closed: its endpoint is not final yet`, { reasons: ['timeline_not_closed'], job_id: jobId });
    if (result.erased) {
      throw new LedgerError(ERASED_STATUS, 'content_erased', `${result.erased.entries} of ${result.entry_count} entries of job ${jobId} were erased: its endpoint can no longer be recomputed (see /api/jobs/${jobId}/verify)`, { job_id: jobId, erased_entries: result.erased.entries, entry_count: result.entry_count });
    }
    if (result.verdict !== 'valid' || result.final_entry_digest === null) {
      throw new ConflictError('timeline_not_valid', `the timeline of job ${jobId} does not verify under -07 (verdict ${result.verdict}); no commitment can bind it`, { reasons: result.reasons, verdict: result.verdict, job_id: jobId });
    }
    const publishedAt = (await this.timelines.lastEntryRecordedAt(this.db, jobId))!;
    const issued = await this.timelines.ledgerIssued(this.db, jobId);
    const end = { job_id: jobId, final_entry_digest: result.final_entry_digest, entry_count: result.entry_count, published_at: publishedAt };
    if (!issued) {
      const why = this.identity.current ? 'the timeline closed before this ledger issued endpoint commitments' : `this deployment has no log signing key (${this.identity.reason})`;
      return { ...end, ledger_commitment: null, statement: `No ledger-issued endpoint commitment: ${why}. The endpoint above is computed now from the stored entries; it is signed by nobody.` };
    }
    const a = judgeAttestation(issued.raw, issued.attestation, this.trust.trust, null);
    const event = await this.events.at(this.db, issued.position);
    return {
      ...end,
      ledger_commitment: {
        id: issued.id,
        commitment: parseStored(issued.raw),
        text: issued.raw,
        note: issued.attestation?.note ?? '',
        log_vkey: issued.attestation?.keys[0]?.vkey ?? null,
        signature_verifies: a.kind === 'ledger_issued',
        position: issued.position,
        event_hash: event?.event_hash ?? null,
        recorded_at: issued.recorded_at,
      },
      statement:
        a.kind === 'ledger_issued'
          ? `Issued by this ledger when the timeline closed, in the same transaction, and signed with its log key ${a.by.join(', ')}: the note's text is the commitment's JSON text and a newline. It is leaf ${issued.position - 1} of the log (event ${issued.position}).`
          : `A ledger-issued commitment is recorded, but its signature does not verify now: ${a.problem ?? 'unknown'}.`,
    };
  }
}

/**
 * Every endpoint commitment recorded for `jobId`, judged together against the
 * job's verified chain `timeline` (rev 09, see assessCommitments): the one
 * judgement the verifier, the job page, batches and coverage share.
 */
export async function assessJobCommitments(
  q: Queryable,
  jobId: string,
  timeline: TimelineResult,
  timelines: TimelinesRepository = new TimelinesRepository(),
  trust: CommitmentTrust = NO_TRUST,
): Promise<{ rows: CommitmentWithWriter[]; erased: CommitmentWithWriter[]; assessment: CommitmentsAssessment }> {
  const all = await timelines.commitmentsWithWriters(q, jobId);
  // Issue 29: an erased commitment has no content left to judge; it is named apart.
  const rows = all.filter((c) => !isErasedRaw(c.raw));
  const erased = all.filter((c) => isErasedRaw(c.raw));
  const recorded = rows.map((c) => ({ id: c.id, value: parseStored(c.raw), position: c.position, recorded_at: c.recorded_at, attestation: judgeAttestation(c.raw, c.attestation, trust, c.recorded_by?.name ?? null) }));
  const counts = earlierCounts(timeline, recorded);
  // Stored timelines have contiguous seqs from 1 (appends are checked, imports verify), so place k is seq k.
  const digest_at = new Map<number, string | null>(counts.map((k) => [k, null]));
  for (const [seq, raw] of await timelines.rawAtSeqs(q, jobId, counts)) if (!isErasedRaw(raw)) digest_at.set(seq, entryDigest(parseStored(raw)));
  return { rows, erased, assessment: assessCommitments(timeline, recorded, { job_id: jobId, digest_at }) };
}

/** "Chain: PARTLY ERASED — N of M entries erased; links checked: K, not re-checkable: L" (issue 29); "Chain: ERASED — M of M ..." when every entry was. */
export function erasedHeadline(e: Pick<NonNullable<TimelineResult['erased']>, 'entries' | 'links_rechecked' | 'links_not_rechecked'>, entryCount: number): string {
  return `Chain: ${e.entries === entryCount ? 'ERASED' : 'PARTLY ERASED'} \u2014 ${e.entries} of ${entryCount} entries erased; links checked: ${e.links_rechecked}, not re-checkable: ${e.links_not_rechecked}`;
}

/** The value of a stored JSON text (exactly as recorded). */
export function parseStored(raw: string): unknown {
  return parseRawJson(raw).value;
}

/** Check the read-model rows of job `jobId` (its timeline, entries and commitments) against its stream (ProjectionGuard). */
export async function checkTimelineRows(guard: ProjectionGuard, q: Queryable, jobId: string): Promise<void> {
  await guard.check(q, streams.timeline(jobId), [
    { table: 'timelines', column: 'job_id', value: jobId },
    { table: 'timeline_entries', column: 'job_id', value: jobId },
    { table: 'commitments', column: 'job_id', value: jobId },
  ]);
}
