import { Module } from '@nestjs/common';
import { JobsController, TimelinesController } from './timelines.controller';
import { TimelinesListing } from './timelines.listing';
import { TimelinesProjection } from './timelines.projection';
import { TimelinesService } from './timelines.service';

/** Hash-chained job timelines (S7) and endpoint commitments (rev 09). */
@Module({
  controllers: [TimelinesController, JobsController],
  providers: [TimelinesService, TimelinesProjection, TimelinesListing],
  exports: [TimelinesService],
})
export class TimelinesModule {}
