import { Module } from '@nestjs/common';
import { ErasureReadsModule } from '../erasure/erasure-reads.module';
import { OutcomesRepositoryModule } from '../outcomes/outcomes-repository.module';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { OutcomesModule } from '../outcomes/outcomes.module';
import { ReceiptsModule } from '../receipts/receipts.module';
import { WorkflowsModule } from '../workflows/workflows.module';
import { PublicPagesController } from './public-pages.controller';
import { PublicPagesService } from './public-pages.service';

/** Public HTML pages (S9) with JSON content negotiation. */
@Module({
  imports: [ErasureReadsModule, TimelinesRepositoryModule, ReceiptsRepositoryModule, OutcomesRepositoryModule, ReceiptsModule, WorkflowsModule, OutcomesModule],
  controllers: [PublicPagesController],
  providers: [PublicPagesService],
})
export class PublicPagesModule {}
