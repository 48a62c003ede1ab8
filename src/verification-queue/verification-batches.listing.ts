/** `GET /api/verification-batches`: batches in ledger order. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { VerificationBatchesRepository } from './verification-batches.repository';
import { DatabaseService } from '../database/database.service';



@Injectable()
export class VerificationBatchesListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
    private readonly batches: VerificationBatchesRepository,
  ) {}

  /** A page of `BatchSummary` (status as VerificationBatchesService.get derives it). */
  async list(p: PageRequest) {
    const rows = await this.batches.batchesAfter(this.db, p);
    return toPage(rows, p.limit, (r) => {
      const done = Number(r.done);
      return {
        batch_id: r.batch_id,
        status: r.completed_at ? 'completed' : done > 0 ? 'running' : 'queued',
        scope: JSON.parse(r.scope) as unknown,
        total: Number(r.total),
        done,
        created_at: r.created_at,
        completed_at: r.completed_at,
        position: Number(r.position),
        status_url: this.urls.path(`/api/verification-batches/${r.batch_id}`),
      };
    });
  }
}
