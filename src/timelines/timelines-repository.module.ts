import { Module } from '@nestjs/common';
import { TimelinesRepository } from './timelines.repository';

/** The `timelines`, `timeline_entries` and `commitments` tables' repository. Provided and exported here (its owner); a module that reads it imports this module. */
@Module({ providers: [TimelinesRepository], exports: [TimelinesRepository] })
export class TimelinesRepositoryModule {}
