import { Injectable, Optional } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { describe, has, isObject, isUuid } from '../core/aer1';
import { BadInputError, NotFoundError, UnprocessableError } from '../common/errors';
import { RawJson } from '../common/raw-json';
import { identifierProblem } from '../core/text';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { LedgerService, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { canonicalDigest } from '../core/coverage/canonical';
import { CoverageReportRow, CoverageReportsRepository } from './coverage-reports.repository';
import { ErasedRecords, isErasedRaw, LocatedErasureNotice } from '../erasure/erased-records';
import { CoverageEvent, CoverageReportIssuedData } from './coverage.events';
import { recordersAsOf, reportEventsAsOf } from './ledger-reader';
import { assembleReportInput, subjectRecord } from '../core/coverage/assemble';
import { PlanSubject } from '../core/coverage/plan';
import { planInForce } from '../core/coverage/report-inputs';
import { PlansRepository } from './plans.repository';
import { OutcomeReads } from '../outcomes/outcome-reads';
import { TimelineReads } from '../timelines/timeline-reads';
import type { Principal } from '../auth/api-keys.service';
import { recordedBy } from '../auth/permissions';
import { WebhookDispatcher } from '../webhooks/webhook.dispatcher';
import type { RecordedBy } from '../core/ledger/event-hash';
import { CoverageReportContent, reconcile, reportDigest } from '../core/coverage/reconcile';
import { NO_TRUST } from '../core/aer1/attestation';
import { CommitmentTrustService } from '../log/commitment-trust.service';
import { ErasureService } from '../erasure/erasure.service';

/** What `POST /api/coverage-reports` answers. */
export interface IssuedReport {
  report_id: string;
  url: string;
  digest: string;
  as_of_position: number;
  result: string;
}

/** A stored report as `GET /api/coverage-reports/{id}` shows it. */
export interface StoredReport {
  report_id: string;
  url: string;
  issued_at: string;
  /** SHA-256 over the canonical JSON of `report` (docs/coverage.md). */
  digest: string;
  /** The digest recomputed from the stored content now. */
  digest_verified: boolean;
  position: number;
  /** The key that issued the report. */
  issued_by: RecordedBy | null;
  report: CoverageReportContent;
  /** Evidence the report counted that was erased after it was issued (issue 29; a job's records, the subject's plan versions): it can no longer be recomputed. Null when none. */
  evidence_erased_since?: { count: number; erased_at: string; erasure_id: string } | null;
}

/**
 * A recorded report whose payload was erased (issue 29, named by position):
 * what its leaf and retained data still say (subject, plan version, as-of
 * position and the result it recorded), the erasure, and nothing of its
 * content: `report` and `digest` null, nothing recomputed.
 */
export interface ErasedStoredReport {
  report_id: string;
  url: string;
  issued_at: string;
  digest: null;
  /** Null: nothing is left to recompute a digest from. */
  digest_verified: null;
  position: number;
  issued_by: RecordedBy | null;
  report: null;
  erased: true;
  /** What was retained: the subject, the plan version, the as-of position and the result recorded at issue. */
  recorded: { subject: { job_id: string } | { workflow_id: string }; plan: { plan_id: string; version: number }; as_of_position: number; result: string };
  erasure: LocatedErasureNotice | null;
  /** "Content erased on <date> by <key name> (<legal basis>): <reason>", then what is left. */
  statement: string;
}

/** 422 `plan_erased`: the plan version in force was erased (issue 29); nothing can be reconciled against it. */
function planErased(subject: PlanSubject, used: { plan_id: string; version: number; position: number }): UnprocessableError {
  return new UnprocessableError('plan_erased', `the plan version in force for ${subject.kind} ${subject.id} (plan ${used.plan_id} version ${used.version}, position ${used.position}) was erased: nothing can be reconciled against it; amend the plan (POST /api/plans/${used.plan_id}/amendments) to report again`, { plan_id: used.plan_id, version: used.version, position: used.position });
}

/** Parse `{job_id | workflow_id, as_of_position?}`; 400 `invalid_request` listing every problem. */
function parseRequest(value: unknown): { subject: PlanSubject; asOf: number | null } {
  if (!isObject(value)) throw new BadInputError('invalid_request', 'the body is a JSON object {job_id | workflow_id, as_of_position?}');
  const problems: { path: string; code: string; message: string }[] = [];
  const add = (path: string, code: string, message: string): void => void problems.push({ path, code, message });
  for (const k of Object.keys(value)) if (!['job_id', 'workflow_id', 'as_of_position'].includes(k)) add(k, 'unknown_member', `unknown member ${describe(k)}`);
  let subject: PlanSubject | null = null;
  if (has(value, 'job_id') && has(value, 'workflow_id')) add('', 'two_subjects', 'give job_id or workflow_id, not both');
  else if (has(value, 'job_id')) {
    const idProblem = typeof value.job_id === 'string' && value.job_id.length > 0 ? identifierProblem('job_id', value.job_id) : null;
    // No plan can name a job id the identifier rule refuses (src/common/text.ts): say why instead of "no plan".
    if (idProblem) add('job_id', idProblem.code, idProblem.message);
    else if (typeof value.job_id === 'string' && value.job_id.length > 0) subject = { kind: 'job', id: value.job_id };
    else add('job_id', 'invalid_job_id', `job_id must be a non-empty string, got ${describe(value.job_id)}`);
  } else if (has(value, 'workflow_id')) {
    if (isUuid(value.workflow_id)) subject = { kind: 'workflow', id: value.workflow_id.toLowerCase() };
    else add('workflow_id', 'invalid_workflow_id', `workflow_id must be a UUID, got ${describe(value.workflow_id)}`);
  } else add('', 'missing_subject', 'job_id or workflow_id is required');
  let asOf: number | null = null;
  if (has(value, 'as_of_position') && value.as_of_position !== null) {
    if (Number.isSafeInteger(value.as_of_position) && (value.as_of_position as number) >= 1) asOf = value.as_of_position as number;
    else add('as_of_position', 'invalid_position', `as_of_position must be a positive integer, got ${describe(value.as_of_position)}`);
  }
  // `reasons`: one code per problem; the prose stays in `message` and `problems`.
  if (problems.length > 0 || subject === null) throw new BadInputError('invalid_request', problems.map((p) => p.message).join('; '), { reasons: problems.map((p) => p.code), problems });
  return { subject, asOf };
}

/**
 * Coverage reports: reconcile what the ledger records for a job (or a
 * workflow) against its plan, as of a ledger position, and record the
 * report as a `CoverageReportIssued` event.
 */
@Injectable()
export class CoverageService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly plans: PlansRepository,
    private readonly reports: CoverageReportsRepository,
    private readonly events: EventsRepository,
    private readonly outcomes: OutcomeReads,
    private readonly timelines: TimelineReads,
    private readonly guard: ProjectionGuard,
    private readonly erasure: ErasureService,
    private readonly erased: ErasedRecords,
    @Optional() private readonly webhooks?: WebhookDispatcher,
    @Optional() private readonly trust?: CommitmentTrustService,
  ) {}

  /**
   * Build and record a report, then emit the `coverage.report.issued` webhook
   * (its result and findings) to subscribers, after the commit. 422 `position_beyond_head` when as_of_position
   * is past the ledger head; 422 `no_plan` when no plan version for the subject
   * is recorded at or before the position; 422 `plan_erased` when the version in force was erased.
   */
  async issue(body: RawJson, by: Principal): Promise<IssuedReport> {
    const { subject, asOf } = parseRequest(body.value);
    // The head under the write lock (a moment: every event at or below it is committed), then the report is built
    // from immutable events at or below its position outside the lock, and only the append takes the lock again.
    const head = (await this.db.write((tx) => this.ledger.head(tx)))?.position ?? 0;
    // Built outside any transaction, from events at or below `position` (they never change).
    const tx: Queryable = this.db;
    if (asOf !== null && asOf > head) throw new UnprocessableError('position_beyond_head', `as_of_position ${asOf} is beyond the ledger head ${head}`, { head });
    const position = asOf ?? head;
    const versions = await this.plans.versionsOfSubject(tx, subject);
    const inForce = planInForce(versions, position);
    if (inForce === null) {
      const later = versions[0];
      throw new UnprocessableError(
        'no_plan',
        later
          ? `the plan for ${subject.kind} ${subject.id} was registered at position ${later.position}, after as_of_position ${position}`
          : `no plan is registered for ${subject.kind} ${subject.id}: register one with POST /api/plans`,
        later ? { plan_id: later.plan_id } : {},
      );
    }
    if (inForce.plan === null) throw planErased(subject, inForce.used);
    // The events the subject spans as of the position (fetched), assembled by the core (src/core/coverage/assemble.ts),
    // as `aer1 verify-pack` assembles them from a pack's leaves.
    const planIds = [...new Set(versions.map((v) => v.plan_id))];
    const outcomeIds = async (ids: string[], at: number): Promise<string[]> => (await this.outcomes.ofReceiptsAsOf(tx, ids, at)).map((o) => o.outcome_id);
    const events = await reportEventsAsOf(tx, subject, position, { planIds, outcomeIds, erasuresOf: (ps) => this.erasure.erasuresOf(ps, tx) });
    const { receipt_ids: receiptIds } = subjectRecord(events, subject, NO_TRUST);
    // Who recorded the subject's stream and its receipts, and (a job) the other jobs naming its receipts (issue 26): keys
    // and other timelines are not among the subject's events, so these are read here.
    const subjectStream = subject.kind === 'job' ? streams.timeline(subject.id) : streams.workflow(subject.id);
    const recordStreams = await recordersAsOf(tx, [subjectStream], position);
    const receiptStreams = await recordersAsOf(tx, receiptIds.map((id) => streams.receipt(id)), position, ['ReceiptRecorded']);
    const recorders = {
      record: recordStreams.get(subjectStream) ?? null,
      receipts: new Map([...receiptStreams].map(([k, v]) => [k.slice('receipt:'.length), v])),
    };
    const otherJobs = subject.kind === 'job' ? await this.timelines.otherJobsNamingAsOf(tx, subject.id, receiptIds, position) : undefined;
    // Who stands behind each commitment is judged now (ledger-issued: the log key; attested: TRUSTED_COMMITMENT_KEYS).
    const assembled = assembleReportInput(events, { subject, asOf: position, trust: this.trust?.trust ?? NO_TRUST, recorders, ...(otherJobs ? { otherJobs } : {}) });
    if (!assembled.ok && assembled.code === 'plan_erased') throw planErased(subject, inForce.used);
    if (!assembled.ok) throw new UnprocessableError('no_plan', `no plan version for ${subject.kind} ${subject.id} is recorded at or before position ${position}`);
    const report = reconcile(assembled.input);
    const digest = reportDigest(report);
    const reportId = randomUUID();
    const data: CoverageReportIssuedData = { report_id: reportId, issued_at: new Date().toISOString(), digest, report };
    // A fresh UUID names the stream.
    // The webhook event commits with the report's event (webhook.dispatcher.ts): a crash cannot keep one without the other.
    await this.db.write(async (w) => {
      await this.ledger.append<CoverageEvent>(w, streams.coverage(reportId), STREAM_DOES_NOT_EXIST, [{ type: 'CoverageReportIssued', data }], recordedBy(by));
      await this.webhooks?.record(
        w,
        'coverage.report.issued',
        { report_id: reportId, url: this.urls.coverageReport(reportId), subject: report.subject, result: report.result, findings: report.findings, digest, as_of_position: position, issued_at: data.issued_at },
        reportId,
      );
    });
    return { report_id: reportId, url: this.urls.coverage(reportId), digest, as_of_position: position, result: report.result };
  }

  /** A stored report, its digest recomputed; an erased one (issue 29) as {@link ErasedStoredReport}. 404 when unknown. */
  async get(reportId: string): Promise<StoredReport | ErasedStoredReport> {
    // Checked against the report's event first: 409 `projection_mismatch` (ProjectionGuard).
    await this.guard.check(this.db, streams.coverage(reportId), [{ table: 'coverage_reports', column: 'report_id', value: reportId }]);
    const row = await this.reports.get(this.db, reportId);
    if (!row) throw new NotFoundError('coverage report', reportId);
    if (isErasedRaw(row.report)) return this.erasedReport(row);
    const report = JSON.parse(row.report) as CoverageReportContent;
    return {
      report_id: row.report_id,
      url: this.urls.coverage(row.report_id),
      issued_at: row.issued_at,
      digest: row.digest,
      digest_verified: canonicalDigest(report) === row.digest,
      position: row.position,
      issued_by: await this.events.recordedByOne(this.db, row.position),
      report,
      evidence_erased_since: await this.erasedSince(report, row.position),
    };
  }

  /**
   * What a report issued at `position` read that was erased since (issue 29): a job's evidence, and the
   * subject's plan versions (named by position); the count and the newest erasure, or null.
   */
  private async erasedSince(report: CoverageReportContent, position: number): Promise<StoredReport['evidence_erased_since']> {
    const job = 'job_id' in report.subject ? await this.erasure.erasedOfJob(report.subject.job_id, position) : null;
    const subject = 'job_id' in report.subject ? { kind: 'job', id: report.subject.job_id } : { kind: 'workflow', id: report.subject.workflow_id.toLowerCase() };
    const plans = (await this.plans.versionsOfSubject(this.db, subject)).filter((v) => v.position <= position).map((v) => v.position);
    const gone = [...(await this.erasure.erasuresOf(plans)).values()].filter((r) => r.position > position);
    if (gone.length === 0) return job;
    const newest = gone.reduce((a, b) => (b.erased_at > a.erased_at ? b : a));
    if (job && job.erased_at >= newest.erased_at) return { ...job, count: job.count + gone.length };
    return { count: (job?.count ?? 0) + gone.length, erased_at: newest.erased_at, erasure_id: newest.erasure_id };
  }

  private async erasedReport(row: CoverageReportRow): Promise<ErasedStoredReport> {
    const s = await this.reports.subjectOf(this.db, row.report_id);
    const meta = await this.reports.summaryOf(this.db, row.report_id);
    const erasure = await this.erased.located(row.position);
    return {
      report_id: row.report_id,
      url: this.urls.coverage(row.report_id),
      issued_at: row.issued_at,
      digest: null,
      digest_verified: null,
      position: row.position,
      issued_by: await this.events.recordedByOne(this.db, row.position),
      report: null,
      erased: true,
      recorded: {
        subject: s?.kind === 'workflow' ? { workflow_id: s.id } : { job_id: s?.id ?? '' },
        plan: { plan_id: meta?.plan_id ?? '', version: meta?.plan_version ?? 0 },
        as_of_position: s?.as_of_position ?? 0,
        result: meta?.result ?? '',
      },
      erasure,
      statement: `${erasure?.statement ?? 'Content erased'}. The report's content and digest are gone for good: nothing is recomputed. Its leaf (format 3: report id, type, key and time) still proves it was issued at position ${row.position}; the result it recorded at issue is kept.`,
    };
  }
}
