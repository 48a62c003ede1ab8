/** `GET /api/plans` (without a subject) and `GET /api/coverage-reports`: lists in ledger order. The SQL is kept here, apart, so it can move into the module's repository. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';

interface PlanListRow {
  plan_id: string;
  subject_kind: string;
  subject_id: string;
  current_version: number | string;
  title: string;
  position: number | string;
}

interface ReportListRow {
  report_id: string;
  subject_kind: string;
  subject_id: string;
  plan_id: string;
  plan_version: number | string;
  as_of_position: number | string;
  result: string;
  digest: string;
  issued_at: string;
  position: number | string;
}

/** SQL: plans registered after a ledger position (of their first version), in that order. */
export function plansAfter(db: Pick<DatabaseService, 'query'>, p: PageRequest): Promise<PlanListRow[]> {
  return db.query<PlanListRow>(
    'SELECT plan_id, subject_kind, subject_id, current_version, title, first_position AS position FROM plans WHERE first_position > ? ORDER BY first_position LIMIT ?',
    [p.after, p.limit + 1],
  );
}

/** SQL: coverage reports recorded after a ledger position, in that order (without their content). */
export function reportsAfter(db: Pick<DatabaseService, 'query'>, p: PageRequest): Promise<ReportListRow[]> {
  return db.query<ReportListRow>(
    'SELECT report_id, subject_kind, subject_id, plan_id, plan_version, as_of_position, result, digest, issued_at, position FROM coverage_reports WHERE position > ? ORDER BY position LIMIT ?',
    [p.after, p.limit + 1],
  );
}

const subject = (kind: string, id: string): { job_id: string } | { workflow_id: string } => (kind === 'workflow' ? { workflow_id: id } : { job_id: id });

@Injectable()
export class CoverageListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
  ) {}

  /** A page of `PlanSummary`. */
  async plans(p: PageRequest) {
    const rows = await plansAfter(this.db, p);
    return toPage(rows, p.limit, (r) => ({
      plan_id: r.plan_id,
      subject: subject(r.subject_kind, r.subject_id),
      title: r.title,
      current_version: Number(r.current_version),
      position: Number(r.position),
      url: this.urls.path(`/api/plans/${r.plan_id}`),
    }));
  }

  /** A page of `CoverageReportSummary`. */
  async reports(p: PageRequest) {
    const rows = await reportsAfter(this.db, p);
    return toPage(rows, p.limit, (r) => ({
      report_id: r.report_id,
      subject: subject(r.subject_kind, r.subject_id),
      plan_id: r.plan_id,
      plan_version: Number(r.plan_version),
      as_of_position: Number(r.as_of_position),
      result: r.result,
      digest: r.digest,
      issued_at: r.issued_at,
      position: Number(r.position),
      url: this.urls.coverageReport(r.report_id),
    }));
  }
}
