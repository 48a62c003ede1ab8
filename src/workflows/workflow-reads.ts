import { Injectable } from '@nestjs/common';
import type { Queryable } from '../database/rows';
import { WorkflowRow, WorkflowsRepository } from './workflows.repository';

/**
 * The reads of the `workflows` table other modules make (the log's record
 * pages, evidence packs, outcomes, the verification processor): exported by
 * `WorkflowsRepositoryModule` so that no other module imports the repository.
 * Each runs in the unit of work `q` its caller gives; ids are lowercase.
 */
@Injectable()
export class WorkflowReads {
  constructor(private readonly workflows: WorkflowsRepository) {}

  /** The row of workflow `workflowId`, or null. */
  get(q: Queryable, workflowId: string): Promise<WorkflowRow | null> {
    return this.workflows.get(q, workflowId);
  }

  /** The stored text of workflow `workflowId`, or null. */
  rawOf(q: Queryable, workflowId: string): Promise<string | null> {
    return this.workflows.rawOf(q, workflowId);
  }

  /** True when workflow `workflowId` names receipt `receiptId` as a step. */
  namesStep(q: Queryable, workflowId: string, receiptId: string): Promise<boolean> {
    return this.workflows.namesStep(q, workflowId, receiptId);
  }
}
