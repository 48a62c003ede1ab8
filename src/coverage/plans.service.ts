import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { has, isObject, JsonObject } from '../core/aer1';
import { BadInputError, NotFoundError, UnprocessableError } from '../common/errors';
import { RawJson } from '../common/raw-json';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { LedgerService, NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { PlanEvent, PlanVersionData } from './coverage.events';
import { jobFirstPosition, workflowAsOf } from './ledger-reader';
import type { Principal } from '../auth/api-keys.service';
import { recordedBy } from '../auth/permissions';
import type { RecordedBy } from '../core/ledger/event-hash';
import { TimelineReads } from '../timelines/timeline-reads';
import { decideAmend, decideRegister } from './plans.decider';
import { PlanVersionRow, PlansRepository } from './plans.repository';
import { NormalizedPlan, PlanProblem, planDigest, PlanSubject, subjectMember, validatePlan } from '../core/coverage/plan';
import type { IdentifierProblem } from '../core/text';
import { ErasedRecords, ErasureNotice, isErasedRaw } from '../erasure/erased-records';

export type { PlanVersionRow } from './plans.repository';

/** One plan version as the API shows it. */
export interface PlanVersionView {
  plan_id: string;
  version: number;
  /** The normalized plan in registration form (`job_id` or `workflow_id`, every default filled in): feed it to `aer1 coverage --plan`. */
  plan: Record<string, unknown> | null;
  digest: string | null;
  registered_at: string;
  position: number;
  reason: string | null;
  superseded_by: number | null;
  /** Ledger position of the first recorded event of the job (its timeline stream, or a receipt its entries name) or workflow now; null when execution has not been recorded. */
  execution_first_position: number | null;
  registered_after_execution_began: boolean;
  /** The key that registered this version (null before attribution). */
  recorded_by: RecordedBy | null;
  /** Issue 29: the version's content was erased (named by position); `plan`, `digest` and `reason` are then null. */
  erased?: true;
  erasure?: ErasureNotice | null;
}

/** The API form of a normalized plan: the subject as `job_id` / `workflow_id`. */
export function planDocument(plan: NormalizedPlan): Record<string, unknown> {
  return { ...subjectMember(plan.subject), title: plan.title, unplanned: plan.unplanned, expected_actions: plan.expected_actions };
}

export function invalidPlan(problems: PlanProblem[]): UnprocessableError | BadInputError {
  // An identifier the service refuses (src/common/text.ts) is the same 400 as everywhere else, with every problem listed.
  const idCode = problems.map((p) => p.code).find((c): c is IdentifierProblem['code'] => c === 'unsupported_character' || c === 'value_too_large');
  if (idCode) {
    return new BadInputError(idCode, `the plan names an identifier the ledger refuses (${problems.length} problem${problems.length === 1 ? '' : 's'}); nothing was recorded`, {
      reasons: problems.map((p) => p.code), // codes, one per problem; the prose is in `problems`
      problems,
    });
  }
  return new UnprocessableError('invalid_plan', `the plan is not valid (${problems.length} problem${problems.length === 1 ? '' : 's'}); nothing was recorded`, {
    reasons: problems.map((p) => p.code), // codes, one per problem; the prose is in `problems`
    problems,
  });
}

/**
 * Ledger position of the first recorded event of the subject's execution
 * now: for a job, the earliest event of its timeline stream or of any
 * receipt its entries name; for a workflow, of its workflow stream or its
 * step receipts (docs/coverage.md). Reports compute the same as of their
 * position from the events.
 */
export async function executionFirstPosition(q: Queryable, timelines: TimelineReads, subject: PlanSubject): Promise<number | null> {
  if (subject.kind === 'workflow') return (await workflowAsOf(q, subject.id, Number.MAX_SAFE_INTEGER)).first_position;
  const ids = await timelines.receiptIds(q, subject.id);
  return jobFirstPosition(q, subject.id, Number.MAX_SAFE_INTEGER, ids);
}

/**
 * Expected-action plans: registered before execution, immutable, changed
 * only by amendments that add a version (every version stays readable).
 */
@Injectable()
export class PlansService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly plans: PlansRepository,
    private readonly timelines: TimelineReads,
    private readonly events: EventsRepository,
    private readonly guard: ProjectionGuard,
    private readonly erased: ErasedRecords,
  ) {}

  /** The plan's rows (plan, versions) checked against its events: 409 `projection_mismatch` (ProjectionGuard). */
  private async checked(planId: string): Promise<void> {
    await this.guard.check(this.db, streams.plan(planId), [
      { table: 'plans', column: 'plan_id', value: planId },
      { table: 'plan_versions', column: 'plan_id', value: planId },
    ]);
  }

  /** Register a plan (version 1). 422 `invalid_plan` with every problem; 409 `plan_exists` when the job or workflow has one. */
  async register(body: RawJson, by: Principal): Promise<PlanVersionView> {
    const v = validatePlan(body.value);
    if (!v.ok) throw invalidPlan(v.problems);
    const plan = v.plan;
    return this.db.write(async (tx) => {
      const existing = await this.plans.planIdOf(tx, plan.subject);
      const planId = randomUUID();
      const data: PlanVersionData = { plan_id: planId, version: 1, subject: plan.subject, plan, digest: planDigest(plan), registered_at: new Date().toISOString() };
      const events = decideRegister(existing, data);
      // A fresh UUID names the stream.
      await this.ledger.append<PlanEvent>(tx, streams.plan(planId), STREAM_DOES_NOT_EXIST, events, recordedBy(by));
      return this.versionView(tx, planId, 1);
    });
  }

  /**
   * Amend a plan: a new version that supersedes the current one. The body is
   * a complete plan (the subject may be omitted, and may not change), plus an
   * optional `reason` and `supersedes_version` (409 `plan_version_conflict`
   * when it is not the current version).
   */
  async amend(planId: string, body: RawJson, by: Principal): Promise<PlanVersionView> {
    if (!isObject(body.value)) throw invalidPlan([{ path: '', code: 'not_object', message: 'an amendment is a JSON object' }]);
    const doc: JsonObject = { ...body.value };
    const reason = has(doc, 'reason') ? doc.reason : null;
    const expected = has(doc, 'supersedes_version') ? doc.supersedes_version : null;
    delete doc.reason;
    delete doc.supersedes_version;
    const extra: PlanProblem[] = [];
    if (reason !== null && (typeof reason !== 'string' || reason.length > 2000)) extra.push({ path: 'reason', code: 'invalid_reason', message: 'reason must be a string of at most 2000 characters' });
    if (expected !== null && (!Number.isSafeInteger(expected) || (expected as number) < 1)) extra.push({ path: 'supersedes_version', code: 'invalid_supersedes_version', message: 'supersedes_version must be a positive integer' });
    return this.db.write(async (tx) => {
      const current = await this.latest(tx, planId);
      const subject: PlanSubject = { kind: current.subject_kind, id: current.subject_id } as PlanSubject;
      const v = validatePlan(doc, { inherit: subject });
      const problems = [...(v.ok ? [] : v.problems), ...extra];
      if (problems.length > 0 || !v.ok) throw invalidPlan(problems);
      const version = current.version + 1;
      const data: PlanVersionData = {
        plan_id: current.plan_id,
        version,
        subject,
        plan: v.plan,
        digest: planDigest(v.plan),
        registered_at: new Date().toISOString(),
        supersedes_version: current.version,
        reason: reason as string | null,
      };
      // The version the client names (`supersedes_version`) is checked by the decider against the version read in this
      // serialized write transaction; nothing can append in between, so the ledger checks nothing more.
      const events = decideAmend(planId, current.version, expected as number | null, data);
      await this.ledger.append<PlanEvent>(tx, streams.plan(current.plan_id), NO_CONCURRENCY_CHECK, events, recordedBy(by));
      return this.versionView(tx, current.plan_id, version);
    });
  }

  private async latest(q: Queryable, planId: string): Promise<PlanVersionRow> {
    const row = await this.plans.latest(q, planId);
    if (!row) throw new NotFoundError('plan', planId);
    return row;
  }

  /** Every version of a plan, oldest first. 404 when unknown. */
  async get(planId: string): Promise<{ plan_id: string; job_id?: string; workflow_id?: string; current_version: number; versions: PlanVersionView[] }> {
    await this.checked(planId);
    const rows = await this.plans.versions(this.db, planId);
    if (rows.length === 0) throw new NotFoundError('plan', planId);
    const subject = { kind: rows[0].subject_kind, id: rows[0].subject_id } as PlanSubject;
    const first = await this.firstPosition(this.db, subject);
    const by = await this.events.recordedByAt(this.db, rows.map((r) => r.position));
    const erasures = await this.erasuresOf(rows);
    return {
      plan_id: planId,
      ...subjectMember(subject),
      current_version: rows[rows.length - 1].version,
      versions: rows.map((r) => this.view(r, rows.length, first, by.get(Number(r.position)) ?? null, erasures)),
    };
  }

  /** One version. 404 when the plan or the version is unknown. */
  async getVersion(planId: string, versionText: string): Promise<PlanVersionView> {
    const n = Number(versionText);
    if (!/^[0-9]+$/.test(versionText) || !Number.isSafeInteger(n) || n < 1) throw new BadInputError('invalid_version', 'a plan version is a positive integer');
    await this.checked(planId);
    return this.versionView(this.db, planId, n);
  }

  /** The plan of a job or workflow, or 404. */
  async findBySubject(subject: PlanSubject): Promise<{ plan_id: string; job_id?: string; workflow_id?: string; current_version: number; versions: PlanVersionView[] }> {
    const planId = await this.plans.planIdOf(this.db, subject);
    if (planId === null) throw new NotFoundError(`plan for ${subject.kind}`, subject.id);
    return this.get(planId);
  }

  private async versionView(q: Queryable, planId: string, version: number): Promise<PlanVersionView> {
    const r = await this.plans.version(q, planId, version);
    if (!r) throw new NotFoundError('plan version', `${planId} v${version}`);
    const latest = await this.plans.latestVersionNumber(q, planId);
    const first = await this.firstPosition(q, { kind: r.subject_kind, id: r.subject_id } as PlanSubject);
    const by = await this.events.recordedByOne(q, r.position);
    return this.view(r, latest ?? version, first, by, await this.erasuresOf([r]));
  }

  /** The erasures of those of `rows` whose content was erased (issue 29: `plan` ''), keyed by position. */
  private async erasuresOf(rows: readonly PlanVersionRow[]): Promise<Map<number, ErasureNotice>> {
    const gone = rows.filter((r) => isErasedRaw(r.plan)).map((r) => r.position);
    return gone.length === 0 ? new Map() : this.erased.ofPositions(gone);
  }

  private firstPosition(q: Queryable, subject: PlanSubject): Promise<number | null> {
    return executionFirstPosition(q, this.timelines, subject);
  }

  private view(r: PlanVersionRow, latest: number, first: number | null, by: RecordedBy | null, erasures: ReadonlyMap<number, ErasureNotice>): PlanVersionView {
    const gone = isErasedRaw(r.plan);
    return {
      plan_id: r.plan_id,
      version: r.version,
      plan: gone ? null : planDocument(JSON.parse(r.plan) as NormalizedPlan),
      digest: gone ? null : r.digest,
      registered_at: r.registered_at,
      position: r.position,
      reason: r.reason,
      superseded_by: r.version < latest ? r.version + 1 : null,
      execution_first_position: first,
      registered_after_execution_began: first !== null && r.position > first,
      recorded_by: by,
      ...(gone ? { erased: true as const, erasure: erasures.get(r.position) ?? null } : {}),
    };
  }
}
