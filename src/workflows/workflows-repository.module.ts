import { Module } from '@nestjs/common';
import { WorkflowsRepository } from './workflows.repository';

/** The `workflows` and `workflow_steps` tables' repository. Provided and exported here (its owner); a module that reads it imports this module. */
@Module({ providers: [WorkflowsRepository], exports: [WorkflowsRepository] })
export class WorkflowsRepositoryModule {}
