import { Module } from '@nestjs/common';
import { TimelineReads } from './timeline-reads';
import { TimelinesRepository } from './timelines.repository';

/** The `timelines`, `timeline_entries` and `commitments` tables' repository and `TimelineReads` (the reads other modules make). Provided and exported here (its owner); a module that reads them imports this module. */
@Module({ providers: [TimelinesRepository, TimelineReads], exports: [TimelinesRepository, TimelineReads] })
export class TimelinesRepositoryModule {}
