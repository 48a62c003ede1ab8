import { Injectable, OnModuleInit } from '@nestjs/common';
import { Tx } from '../database/database.service';
import { StoredEvent } from '../core/ledger/event-hash';
import { Projection, ProjectionRegistry } from '../ledger/projections';
import { canonicalJson } from '../core/coverage/canonical';
import { NormalizedPlan, PlanSubject } from '../core/coverage/plan';
import { CoverageReportContent } from '../core/coverage/reconcile';

/** Data of `PlanRegistered` (version 1) and `PlanAmended` (version n+1), stream `plan:<plan_id>`. */
export interface PlanVersionData {
  plan_id: string;
  version: number;
  subject: PlanSubject;
  /** The normalized plan: what `digest` covers. */
  plan: NormalizedPlan;
  /** SHA-256 over the canonical JSON of `plan`. */
  digest: string;
  /** Server time of registration. */
  registered_at: string;
  /** Amendments: the version superseded and an optional note. */
  supersedes_version?: number;
  reason?: string | null;
}

/** Data of `CoverageReportIssued`, stream `coverage:<report_id>`. */
export interface CoverageReportIssuedData {
  report_id: string;
  issued_at: string;
  /** SHA-256 over the canonical JSON of `report` (report_id and issued_at excluded). */
  digest: string;
  report: CoverageReportContent;
}

export const PLAN_EVENT_TYPES = ['PlanRegistered', 'PlanAmended'];

/** The `plans`, `plan_versions` and `coverage_reports` read models. */
@Injectable()
export class CoverageProjection implements Projection, OnModuleInit {
  readonly name = 'coverage';
  readonly tables = ['plans', 'plan_versions', 'coverage_reports'];

  constructor(private readonly registry: ProjectionRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  canHandle(type: string): boolean {
    return type === 'PlanRegistered' || type === 'PlanAmended' || type === 'CoverageReportIssued';
  }

  async evolve(tx: Tx, e: StoredEvent): Promise<void> {
    if (e.type === 'CoverageReportIssued') {
      const d = JSON.parse(e.data) as CoverageReportIssuedData;
      const r = d.report;
      const subjectKind = 'job_id' in r.subject ? 'job' : 'workflow';
      const subjectId = 'job_id' in r.subject ? r.subject.job_id : r.subject.workflow_id;
      await tx.query(
        `INSERT INTO coverage_reports (report_id, subject_kind, subject_id, plan_id, plan_version, as_of_position, result, digest, report, issued_at, position)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [d.report_id, subjectKind, subjectId, r.plan.plan_id ?? '', r.plan.version ?? 0, r.as_of_position ?? 0, r.result, d.digest, JSON.stringify(r), d.issued_at, e.position],
      );
      return;
    }
    const d = JSON.parse(e.data) as PlanVersionData;
    if (e.type === 'PlanRegistered') {
      await tx.query('INSERT INTO plans (plan_id, subject_kind, subject_id, current_version, title, first_position, last_position) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        d.plan_id,
        d.subject.kind,
        d.subject.id,
        d.version,
        d.plan.title,
        e.position,
        e.position,
      ]);
    } else {
      await tx.query('UPDATE plans SET current_version = ?, title = ?, last_position = ? WHERE plan_id = ?', [d.version, d.plan.title, e.position, d.plan_id]);
    }
    await tx.query(
      'INSERT INTO plan_versions (plan_id, version, subject_kind, subject_id, plan, digest, reason, registered_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [d.plan_id, d.version, d.subject.kind, d.subject.id, canonicalJson(d.plan), d.digest, d.reason ?? null, d.registered_at, e.position],
    );
  }
}
