import { Module } from '@nestjs/common';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { WorkflowsRepositoryModule } from './workflows-repository.module';
import { ReceiptsModule } from '../receipts/receipts.module';
import { ErasureReadsModule } from '../erasure/erasure-reads.module';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsListing } from './workflows.listing';
import { WorkflowsService } from './workflows.service';

/** Workflow receipts (S8): record, assemble, verify. */
@Module({
  imports: [WorkflowsRepositoryModule, ReceiptsRepositoryModule, ReceiptsModule, ErasureReadsModule],
  controllers: [WorkflowsController],
  providers: [WorkflowsService, WorkflowsListing],
  exports: [WorkflowsRepositoryModule, WorkflowsService],
})
export class WorkflowsModule {}
