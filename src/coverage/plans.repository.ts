import { int, pages, placeholders, Queryable } from '../database/rows';
import { canonicalJson } from '../core/coverage/canonical';
import type { PlanVersionData } from './coverage.events';

/** A row of `plan_versions`. */
export interface PlanVersionRow {
  plan_id: string;
  version: number;
  subject_kind: 'job' | 'workflow';
  subject_id: string;
  /** The normalized plan's canonical JSON. */
  plan: string;
  digest: string;
  reason: string | null;
  registered_at: string;
  position: number;
}

/** A version's title; '' when its payload was erased (its retained data has `plan: null`). */
function titleOf(d: PlanVersionData): string {
  return d.plan === null ? '' : d.plan.title;
}

function toVersion(r: PlanVersionRow): PlanVersionRow {
  return { ...r, version: int(r.version), position: int(r.position) };
}

export interface PlanListRow {
  plan_id: string;
  subject_kind: string;
  subject_id: string;
  current_version: number | string;
  title: string;
  position: number | string;
}

/**
 * The `plans` and `plan_versions` tables: their SQL, rows and mapping. Every
 * method runs on the unit of work it is given.
 */
export class PlansRepository {
  /**
   * Erase the content of the plan versions recorded at `positions` (issue 29): `plan` and `digest` '' (the mark of
   * erased content), `reason` NULL; a plan whose current version is one of them loses its `title`. As their retained
   * data replays ({@link titleOf}).
   */
  async erasePayloads(q: Queryable, positions: readonly number[]): Promise<void> {
    for (const page of pages([...positions], 500)) {
      const inList = placeholders(page.length);
      await q.query(`UPDATE plan_versions SET plan = '', digest = '', reason = NULL WHERE position IN (${inList})`, page);
      await q.query(`UPDATE plans SET title = '' WHERE last_position IN (${inList})`, page);
    }
  }

  /** Insert a registered plan's row (version 1). */
  async insertPlan(q: Queryable, d: PlanVersionData, position: number): Promise<void> {
    await q.query('INSERT INTO plans (plan_id, subject_kind, subject_id, current_version, title, first_position, last_position) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      d.plan_id,
      d.subject.kind,
      d.subject.id,
      d.version,
      titleOf(d),
      position,
      position,
    ]);
  }

  /** Move a plan to an amended version. */
  async updateCurrent(q: Queryable, d: PlanVersionData, position: number): Promise<void> {
    await q.query('UPDATE plans SET current_version = ?, title = ?, last_position = ? WHERE plan_id = ?', [d.version, titleOf(d), position, d.plan_id]);
  }

  /** Insert one version's row. */
  async insertVersion(q: Queryable, d: PlanVersionData, position: number): Promise<void> {
    await q.query('INSERT INTO plan_versions (plan_id, version, subject_kind, subject_id, plan, digest, reason, registered_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      d.plan_id,
      d.version,
      d.subject.kind,
      d.subject.id,
      d.plan === null ? '' : canonicalJson(d.plan),
      d.digest ?? '',
      d.reason ?? null,
      d.registered_at,
      position,
    ]);
  }

  /** The plan id of a job's or workflow's plan, or null. */
  async planIdOf(q: Queryable, subject: { kind: string; id: string }): Promise<string | null> {
    return (await q.query<{ plan_id: string }>('SELECT plan_id FROM plans WHERE subject_kind = ? AND subject_id = ?', [subject.kind, subject.id]))[0]?.plan_id ?? null;
  }

  /** The latest version of a plan, or null. */
  async latest(q: Queryable, planId: string): Promise<PlanVersionRow | null> {
    const row = (await q.query<PlanVersionRow>('SELECT * FROM plan_versions WHERE plan_id = ? ORDER BY version DESC LIMIT 1', [planId]))[0];
    return row ? toVersion(row) : null;
  }

  /** One version of a plan, or null. */
  async version(q: Queryable, planId: string, version: number): Promise<PlanVersionRow | null> {
    const row = (await q.query<PlanVersionRow>('SELECT * FROM plan_versions WHERE plan_id = ? AND version = ?', [planId, version]))[0];
    return row ? toVersion(row) : null;
  }

  /** The highest version number of a plan, or null. */
  async latestVersionNumber(q: Queryable, planId: string): Promise<number | null> {
    const n = (await q.query<{ n: number | string | null }>('SELECT MAX(version) AS n FROM plan_versions WHERE plan_id = ?', [planId]))[0]?.n;
    return n === null || n === undefined ? null : int(n);
  }

  /** Every version of a plan, oldest first. */
  async versions(q: Queryable, planId: string): Promise<PlanVersionRow[]> {
    return (await q.query<PlanVersionRow>('SELECT * FROM plan_versions WHERE plan_id = ? ORDER BY version', [planId])).map(toVersion);
  }

  /** The plan document (JSON text) of the latest version for job `jobId`, or null when it has no plan. */
  async latestPlanOfJob(q: Queryable, jobId: string): Promise<string | null> {
    const row = (await q.query<{ plan: string }>("SELECT plan FROM plan_versions WHERE subject_kind = 'job' AND subject_id = ? ORDER BY version DESC LIMIT 1", [jobId]))[0];
    return row?.plan ?? null;
  }

  /** Every version of the plan of a job or workflow, oldest first. */
  async versionsOfSubject(q: Queryable, subject: { kind: string; id: string }): Promise<PlanVersionRow[]> {
    return (await q.query<PlanVersionRow>('SELECT * FROM plan_versions WHERE subject_kind = ? AND subject_id = ? ORDER BY version', [subject.kind, subject.id])).map(toVersion);
  }

  /** plans registered after a ledger position (of their first version), in that order. */
  async plansAfter(q: Queryable, p: { after: number; limit: number }): Promise<PlanListRow[]> {
    return q.query<PlanListRow>(
      'SELECT plan_id, subject_kind, subject_id, current_version, title, first_position AS position FROM plans WHERE first_position > ? ORDER BY first_position LIMIT ?',
      [p.after, p.limit + 1],
    );
  }
}
