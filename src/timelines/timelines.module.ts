import { Module } from '@nestjs/common';
import { ErasureReadsModule } from '../erasure/erasure-reads.module';
import { TimelinesRepositoryModule } from './timelines-repository.module';
import { JobsController, TimelinesController } from './timelines.controller';
import { TimelinesListing } from './timelines.listing';
import { CommitmentsService } from './commitments.service';
import { TimelineVerificationService } from './timeline-verification.service';
import { TimelinesService } from './timelines.service';

/** Hash-chained job timelines (S7) and endpoint commitments (rev 09). */
@Module({
  imports: [ErasureReadsModule, TimelinesRepositoryModule],
  controllers: [TimelinesController, JobsController],
  providers: [TimelinesService, CommitmentsService, TimelineVerificationService, TimelinesListing],
  exports: [TimelinesRepositoryModule, TimelinesService, TimelineVerificationService, CommitmentsService],
})
export class TimelinesModule {}
