import { Injectable } from '@nestjs/common';
import type { Queryable } from '../database/rows';
import { TimelineRow, TimelinesRepository } from './timelines.repository';

/**
 * The reads of the `timelines` and `timeline_entries` tables other modules
 * make (OTLP ingestion): exported by `TimelinesRepositoryModule` so that no
 * other module imports the repository. Each runs in the unit of work `q` its
 * caller gives (the `DatabaseService`, or a write's `Tx`).
 */
@Injectable()
export class TimelineReads {
  constructor(private readonly timelines: TimelinesRepository) {}

  /** The timeline's summary row, or null. */
  get(q: Queryable, jobId: string): Promise<TimelineRow | null> {
    return this.timelines.get(q, jobId);
  }

  /** The entry with the highest seq (its seq and stored text), or null. */
  lastEntry(q: Queryable, jobId: string): Promise<{ seq: number; raw: string } | null> {
    return this.timelines.lastEntry(q, jobId);
  }
}
