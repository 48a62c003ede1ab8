/** `GET /api/plans` (without a subject) and `GET /api/coverage-reports`: lists in ledger order. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { CoverageReportsRepository } from './coverage-reports.repository';
import { PlansRepository } from './plans.repository';
import { DatabaseService } from '../database/database.service';





const subject = (kind: string, id: string): { job_id: string } | { workflow_id: string } => (kind === 'workflow' ? { workflow_id: id } : { job_id: id });

@Injectable()
export class CoverageListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
    private readonly reportsRepo: CoverageReportsRepository,
    private readonly plansRepo: PlansRepository,
  ) {}

  /** A page of `PlanSummary`. */
  async plans(p: PageRequest) {
    const rows = await this.plansRepo.plansAfter(this.db, p);
    return toPage(rows, p.limit, (r) => ({
      plan_id: r.plan_id,
      subject: subject(r.subject_kind, r.subject_id),
      title: r.title === '' ? null : r.title, // '': the current version's content was erased (issue 29)
      current_version: Number(r.current_version),
      position: Number(r.position),
      url: this.urls.path(`/api/plans/${r.plan_id}`),
    }));
  }

  /** A page of `CoverageReportSummary`. */
  async reports(p: PageRequest, only?: { kind: 'job' | 'workflow'; id: string }) {
    const rows = await this.reportsRepo.reportsAfter(this.db, p, only);
    return toPage(rows, p.limit, (r) => ({
      report_id: r.report_id,
      subject: subject(r.subject_kind, r.subject_id),
      plan_id: r.plan_id,
      plan_version: Number(r.plan_version),
      as_of_position: Number(r.as_of_position),
      result: r.result,
      digest: r.digest === '' ? null : r.digest, // '': erased (issue 29)
      issued_at: r.issued_at,
      position: Number(r.position),
      url: this.urls.coverageReport(r.report_id),
    }));
  }
}
