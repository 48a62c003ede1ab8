import { Module } from '@nestjs/common';
import { ReceiptsModule } from '../receipts/receipts.module';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsListing } from './workflows.listing';
import { WorkflowsService } from './workflows.service';

/** Workflow receipts (S8): record, assemble, verify. */
@Module({
  imports: [ReceiptsModule],
  controllers: [WorkflowsController],
  providers: [WorkflowsService, WorkflowsListing],
  exports: [WorkflowsService],
})
export class WorkflowsModule {}
