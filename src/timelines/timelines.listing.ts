/** `GET /api/jobs`: job timelines in ledger order. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { TimelinesRepository } from './timelines.repository';
import { DatabaseService } from '../database/database.service';



@Injectable()
export class TimelinesListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
    private readonly timelines: TimelinesRepository,
  ) {}

  /** A page of `JobSummary` (as recorded: re-verify with verifyJob). */
  async list(p: PageRequest) {
    const rows = await this.timelines.jobsAfter(this.db, p);
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
