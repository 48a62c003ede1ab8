import { Module } from '@nestjs/common';
import { OutcomesRepositoryModule } from '../outcomes/outcomes-repository.module';
import { ReceiptsModule } from '../receipts/receipts.module';
import { TimelinesModule } from '../timelines/timelines.module';
import { WorkflowsModule } from '../workflows/workflows.module';
import { BadgesController } from './badges.controller';
import { BadgesService } from './badges.service';

/** Verify badges (SVG) for receipts, jobs and workflows. */
@Module({
  imports: [OutcomesRepositoryModule, ReceiptsModule, TimelinesModule, WorkflowsModule],
  controllers: [BadgesController],
  providers: [BadgesService],
})
export class BadgesModule {}
