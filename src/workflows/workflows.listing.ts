/** `GET /api/workflows`: workflow receipts in ledger order. The SQL is kept here, apart, so it can move into the module's repository. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';

interface WorkflowListRow {
  workflow_id: string;
  receipt_id: string;
  goal: string | null;
  status: string | null;
  merkle_root: string | null;
  assembled: number | string | boolean;
  position: number | string;
  recorded_at: string;
  step_count: number | string;
}

/** SQL: workflows recorded after a ledger position, in that order, with their step counts. */
export function workflowsAfter(db: Pick<DatabaseService, 'query'>, p: PageRequest): Promise<WorkflowListRow[]> {
  return db.query<WorkflowListRow>(
    `SELECT w.workflow_id, w.receipt_id, w.goal, w.status, w.merkle_root, w.assembled, w.position, w.recorded_at,
            (SELECT COUNT(*) FROM workflow_steps s WHERE s.workflow_id = w.workflow_id) AS step_count
       FROM workflows w WHERE w.position > ? ORDER BY w.position LIMIT ?`,
    [p.after, p.limit + 1],
  );
}

@Injectable()
export class WorkflowsListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
  ) {}

  /** A page of `WorkflowSummary` (as recorded: re-verify with verifyWorkflow). */
  async list(p: PageRequest) {
    const rows = await workflowsAfter(this.db, p);
    return toPage(rows, p.limit, (r) => ({
      workflow_id: r.workflow_id,
      receipt_id: r.receipt_id,
      goal: r.goal,
      status: r.status,
      merkle_root: r.merkle_root,
      assembled: r.assembled === true || Number(r.assembled) === 1,
      step_count: Number(r.step_count),
      position: Number(r.position),
      recorded_at: r.recorded_at,
      url: this.urls.workflow(r.workflow_id),
      verify_url: this.urls.workflowVerify(r.workflow_id),
    }));
  }
}
