import { Injectable } from '@nestjs/common';
import type { Queryable } from '../database/rows';
import { CoverageReportRow, CoverageReportsRepository } from './coverage-reports.repository';
import { PlansRepository, PlanVersionRow } from './plans.repository';

/**
 * The reads of the `plan_versions` and `coverage_reports` tables other modules
 * make (evidence packs, the log's record pages): exported by
 * `CoverageRepositoryModule` so that no other module imports its
 * repositories. Each runs in the unit of work `q` its caller gives; report ids
 * are lowercase.
 */
@Injectable()
export class CoverageReads {
  constructor(
    private readonly plans: PlansRepository,
    private readonly reports: CoverageReportsRepository,
  ) {}

  /** Every version of the plan of a job or workflow, oldest first (none: no plan). */
  planVersionsOfSubject(q: Queryable, subject: { kind: string; id: string }): Promise<PlanVersionRow[]> {
    return this.plans.versionsOfSubject(q, subject);
  }

  /** The stored coverage report `reportId`, or null. */
  report(q: Queryable, reportId: string): Promise<CoverageReportRow | null> {
    return this.reports.get(q, reportId);
  }

  /** The coverage reports on a job or workflow recorded at or below ledger position `upTo`, in ledger order. */
  reportsOfSubject(q: Queryable, subject: { kind: string; id: string }, upTo: number): Promise<CoverageReportRow[]> {
    return this.reports.ofSubject(q, subject, upTo);
  }

  /** The subject of coverage report `reportId` (and the report's as-of and own ledger positions), or null. */
  reportSubject(q: Queryable, reportId: string): Promise<{ kind: 'job' | 'workflow'; id: string; as_of_position: number; position: number } | null> {
    return this.reports.subjectOf(q, reportId);
  }
}
