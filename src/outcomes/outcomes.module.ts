import { Module } from '@nestjs/common';
import { ErasureReadsModule } from '../erasure/erasure-reads.module';
import { WorkflowsRepositoryModule } from '../workflows/workflows-repository.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { OutcomesRepositoryModule } from './outcomes-repository.module';
import { OutcomesController } from './outcomes.controller';
import { OutcomesService } from './outcomes.service';

/** Outcome reports (issue 18): the owning system confirms (or not) what a recorded call claims. */
@Module({
  imports: [ErasureReadsModule, OutcomesRepositoryModule, ReceiptsRepositoryModule, TimelinesRepositoryModule, WorkflowsRepositoryModule],
  controllers: [OutcomesController],
  providers: [OutcomesService],
  exports: [OutcomesRepositoryModule, OutcomesService],
})
export class OutcomesModule {}
