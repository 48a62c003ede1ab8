import { Module } from '@nestjs/common';
import { ReceiptsModule } from '../receipts/receipts.module';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsProjection } from './workflows.projection';
import { WorkflowsService } from './workflows.service';

/** Workflow receipts (S8): record, assemble, verify. */
@Module({
  imports: [ReceiptsModule],
  controllers: [WorkflowsController],
  providers: [WorkflowsService, WorkflowsProjection],
  exports: [WorkflowsService],
})
export class WorkflowsModule {}
