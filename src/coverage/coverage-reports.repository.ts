import { int, pages, placeholders, Queryable } from '../database/rows';
import type { CoverageReportIssuedData } from './coverage.events';

/** The columns of a stored coverage report that `GET /api/coverage-reports/{id}` reads. */
export interface CoverageReportRow {
  report_id: string;
  digest: string;
  /** The report content's JSON text. */
  report: string;
  issued_at: string;
  position: number;
  /** The ledger position the report judged as of (kept when its content is erased). */
  as_of_position: number;
}

export interface ReportListRow {
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

/** The `coverage_reports` table: its SQL, rows and mapping. Every method runs on the unit of work it is given. */
export class CoverageReportsRepository {
  /** Insert the row of an issued report. */
  async insert(q: Queryable, d: CoverageReportIssuedData, position: number): Promise<void> {
    const r = d.report;
    const subjectKind = 'job_id' in r.subject ? 'job' : 'workflow';
    const subjectId = 'job_id' in r.subject ? r.subject.job_id : r.subject.workflow_id;
    await q.query(
      `INSERT INTO coverage_reports (report_id, subject_kind, subject_id, plan_id, plan_version, as_of_position, result, digest, report, issued_at, position)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      // An erased report (issue 29) replays from its retained data: `report` and `digest` '' (the mark of erased content).
      [d.report_id, subjectKind, subjectId, r.plan.plan_id ?? '', r.plan.version ?? 0, r.as_of_position ?? 0, r.result, d.digest ?? '', d.erased ? '' : JSON.stringify(r), d.issued_at, position],
    );
  }

  /** Erase the content of the reports recorded at `positions` (issue 29): `report` and `digest` '', as their retained data replays. */
  async erasePayloads(q: Queryable, positions: readonly number[]): Promise<void> {
    for (const page of pages([...positions], 500)) await q.query(`UPDATE coverage_reports SET report = '', digest = '' WHERE position IN (${placeholders(page.length)})`, page);
  }

  /** A stored report, or null. */
  async get(q: Queryable, reportId: string): Promise<CoverageReportRow | null> {
    const row = (await q.query<CoverageReportRow>('SELECT report_id, digest, report, issued_at, position, as_of_position FROM coverage_reports WHERE report_id = ?', [reportId]))[0];
    return row ? { ...row, position: int(row.position), as_of_position: int(row.as_of_position) } : null;
  }

  /** The reports on a job or workflow recorded at or below `upTo`, in ledger order. */
  async ofSubject(q: Queryable, subject: { kind: string; id: string }, upTo: number): Promise<CoverageReportRow[]> {
    const rows = await q.query<CoverageReportRow>('SELECT report_id, digest, report, issued_at, position, as_of_position FROM coverage_reports WHERE subject_kind = ? AND subject_id = ? AND position <= ? ORDER BY position', [
      subject.kind,
      subject.id,
      upTo,
    ]);
    return rows.map((r) => ({ ...r, position: int(r.position), as_of_position: int(r.as_of_position) }));
  }

  /** The subject of a stored report, or null. */
  async subjectOf(q: Queryable, reportId: string): Promise<{ kind: 'job' | 'workflow'; id: string; as_of_position: number; position: number } | null> {
    const r = (await q.query<{ subject_kind: string; subject_id: string; as_of_position: number | string; position: number | string }>('SELECT subject_kind, subject_id, as_of_position, position FROM coverage_reports WHERE report_id = ?', [reportId]))[0];
    return r ? { kind: r.subject_kind as 'job' | 'workflow', id: r.subject_id, as_of_position: int(r.as_of_position), position: int(r.position) } : null;
  }

  /** The plan version and result a stored report names (kept when its content is erased), or null. */
  async summaryOf(q: Queryable, reportId: string): Promise<{ plan_id: string; plan_version: number; result: string } | null> {
    const r = (await q.query<{ plan_id: string; plan_version: number | string; result: string }>('SELECT plan_id, plan_version, result FROM coverage_reports WHERE report_id = ?', [reportId]))[0];
    return r ? { plan_id: r.plan_id, plan_version: int(r.plan_version), result: r.result } : null;
  }

  /** coverage reports recorded after a ledger position, in that order (without their content). */
  async reportsAfter(q: Queryable, p: { after: number; limit: number }, subject?: { kind: 'job' | 'workflow'; id: string }): Promise<ReportListRow[]> {
    const columns = 'report_id, subject_kind, subject_id, plan_id, plan_version, as_of_position, result, digest, issued_at, position';
    if (subject) {
      // coverage_reports_subject narrows to the subject's reports (a few), then ordered by position.
      return q.query<ReportListRow>(`SELECT ${columns} FROM coverage_reports WHERE subject_kind = ? AND subject_id = ? AND position > ? ORDER BY position LIMIT ?`, [subject.kind, subject.id, p.after, p.limit + 1]);
    }
    return q.query<ReportListRow>(`SELECT ${columns} FROM coverage_reports WHERE position > ? ORDER BY position LIMIT ?`, [p.after, p.limit + 1]);
  }
}
