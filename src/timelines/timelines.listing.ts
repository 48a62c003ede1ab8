/** `GET /api/jobs`: job timelines in ledger order. The SQL is kept here, apart, so it can move into the module's repository. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';

interface JobRow {
  job_id: string;
  source: string;
  entry_count: number | string;
  head_digest: string | null;
  closed: number | string | boolean;
  verdict: string;
  first_position: number | string;
}

/** SQL: timelines whose first event is after a ledger position, in that order. */
export function jobsAfter(db: Pick<DatabaseService, 'query'>, p: PageRequest): Promise<(JobRow & { position: number | string })[]> {
  return db.query<JobRow & { position: number | string }>(
    'SELECT job_id, source, entry_count, head_digest, closed, verdict, first_position, first_position AS position FROM timelines WHERE first_position > ? ORDER BY first_position LIMIT ?',
    [p.after, p.limit + 1],
  );
}

@Injectable()
export class TimelinesListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
  ) {}

  /** A page of `JobSummary` (as recorded: re-verify with verifyJob). */
  async list(p: PageRequest) {
    const rows = await jobsAfter(this.db, p);
    return toPage(rows, p.limit, (r) => ({
      job_id: r.job_id,
      source: r.source,
      verdict_at_record: r.verdict,
      historical: r.verdict === 'historical',
      entry_count: Number(r.entry_count),
      closed: r.closed === true || Number(r.closed) === 1,
      final_entry_digest: r.head_digest,
      position: Number(r.first_position),
      url: this.urls.job(r.job_id),
      verify_url: this.urls.jobVerify(r.job_id),
    }));
  }
}
