/** `GET /api/workflows`: workflow receipts in ledger order. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { WorkflowsRepository } from './workflows.repository';
import { DatabaseService } from '../database/database.service';



@Injectable()
export class WorkflowsListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
    private readonly workflows: WorkflowsRepository,
  ) {}

  /** A page of `WorkflowSummary` (as recorded: re-verify with verifyWorkflow). */
  async list(p: PageRequest) {
    const rows = await this.workflows.workflowsAfter(this.db, p);
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
