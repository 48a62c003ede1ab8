import { Injectable } from '@nestjs/common';
import type { RecordedBy } from '../core/ledger/event-hash';
import type { Queryable } from '../database/rows';
import type { Writer } from '../ledger/events.repository';
import { CommitmentRow, TimelineEntryRow, TimelineRow, TimelinesRepository } from './timelines.repository';

/**
 * The reads of the `timelines`, `timeline_entries` and `commitments` tables
 * other modules make (OTLP ingestion, plans and coverage reports, evidence
 * packs, outcomes, the public pages, the verification processor): exported by
 * `TimelinesRepositoryModule` so that no other module imports the repository.
 * Each runs in the unit of work `q` its caller gives (the `DatabaseService`,
 * or a write's `Tx`).
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

  /** Every entry of the job, in seq order. */
  entries(q: Queryable, jobId: string): Promise<TimelineEntryRow[]> {
    return this.timelines.entries(q, jobId);
  }

  /** At most `limit` entries with seq > `after`, in seq order. */
  entryPage(q: Queryable, jobId: string, after: number, limit: number): Promise<TimelineEntryRow[]> {
    return this.timelines.entryPage(q, jobId, after, limit);
  }

  /** At most `limit` entries recorded by the event at ledger position `position` (an import) with seq > `after`, in seq order. */
  entryPageAt(q: Queryable, jobId: string, position: number, after: number, limit: number): Promise<TimelineEntryRow[]> {
    return this.timelines.entryPageAt(q, jobId, position, after, limit);
  }

  /** Which of `ids` (as written in entries) an entry of the job with seq below `beforeSeq` (null: any entry) names. */
  receiptIdsNamedBefore(q: Queryable, jobId: string, beforeSeq: number | null, ids: string[]): Promise<Set<string>> {
    return this.timelines.receiptIdsNamedBefore(q, jobId, beforeSeq, ids);
  }

  /** The receipt ids the job's entries name (lowercase), without repeats. */
  receiptIds(q: Queryable, jobId: string): Promise<string[]> {
    return this.timelines.receiptIds(q, jobId);
  }

  /** At most `limit` distinct receipt ids (lowercase) the job's entries at or below ledger position `upTo` name, greater than `after`, in order. */
  receiptIdPage(q: Queryable, jobId: string, after: string, upTo: number, limit: number): Promise<string[]> {
    return this.timelines.receiptIdPage(q, jobId, after, upTo, limit);
  }

  /**
   * For each of `receiptIds` (lowercase) named by an entry of another job than
   * `jobId` recorded at or below ledger position `asOf`, those jobs, sorted
   * (ids without another job are absent); the answer for a position never changes.
   */
  otherJobsNamingAsOf(q: Queryable, jobId: string, receiptIds: string[], asOf: number): Promise<Map<string, string[]>> {
    return this.timelines.otherJobsNamingAsOf(q, jobId, receiptIds, asOf);
  }

  /** The job timeline entries naming receipt `receiptId` (lowercase), ordered by job and seq, each with the key (and owner) that recorded it (null before attribution). */
  placesOfReceipt(q: Queryable, receiptId: string): Promise<{ job_id: string; seq: number; writer: Writer | null }[]> {
    return this.timelines.placesOfReceipt(q, receiptId);
  }

  /** The job's endpoint commitments in record order, each with the key that recorded it (null before attribution). */
  commitmentsWithWriters(q: Queryable, jobId: string): Promise<(CommitmentRow & { recorded_by: RecordedBy | null })[]> {
    return this.timelines.commitmentsWithWriters(q, jobId);
  }
}
