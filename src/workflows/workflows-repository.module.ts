import { Module } from '@nestjs/common';
import { WorkflowReads } from './workflow-reads';
import { WorkflowsRepository } from './workflows.repository';

/** The `workflows` and `workflow_steps` tables' repository (for this module) and `WorkflowReads` (the reads other modules make): a module that reads workflows imports this module. */
@Module({ providers: [WorkflowsRepository, WorkflowReads], exports: [WorkflowsRepository, WorkflowReads] })
export class WorkflowsRepositoryModule {}
