/** `GET /api/verification-batches`: batches in ledger order. The SQL is kept here, apart, so it can move into the module's repository. */
import { Injectable } from '@nestjs/common';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';

interface BatchListRow {
  batch_id: string;
  scope: string;
  total: number | string;
  done: number | string;
  created_at: string;
  completed_at: string | null;
  position: number | string;
}

/** SQL: batches requested after a ledger position, in that order. */
export function batchesAfter(db: Pick<DatabaseService, 'query'>, p: PageRequest): Promise<BatchListRow[]> {
  return db.query<BatchListRow>('SELECT batch_id, scope, total, done, created_at, completed_at, position FROM verification_batches WHERE position > ? ORDER BY position LIMIT ?', [p.after, p.limit + 1]);
}

@Injectable()
export class VerificationBatchesListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
  ) {}

  /** A page of `BatchSummary` (status as VerificationBatchesService.get derives it). */
  async list(p: PageRequest) {
    const rows = await batchesAfter(this.db, p);
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
