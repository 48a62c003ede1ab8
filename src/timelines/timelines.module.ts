import { Module } from '@nestjs/common';
import { TimelinesController } from './timelines.controller';
import { TimelinesProjection } from './timelines.projection';
import { TimelinesService } from './timelines.service';

/** Hash-chained job timelines (S7) and endpoint commitments (rev 09). */
@Module({
  controllers: [TimelinesController],
  providers: [TimelinesService, TimelinesProjection],
  exports: [TimelinesService],
})
export class TimelinesModule {}
