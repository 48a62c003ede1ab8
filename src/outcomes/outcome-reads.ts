import { Injectable } from '@nestjs/common';
import type { Queryable } from '../database/rows';
import { OutcomeRow, OutcomesRepository } from './outcomes.repository';

/**
 * The reads of the `outcomes` table other modules make (badges, the public
 * pages, coverage reports and evidence packs): exported by
 * `OutcomesRepositoryModule` so that no other module imports the repository.
 * Each runs in the unit of work `q` its caller gives; ids are lowercase.
 */
@Injectable()
export class OutcomeReads {
  constructor(private readonly outcomes: OutcomesRepository) {}

  /** The ledger positions of the outcome reports of job `jobId` (issue 29: erasing a job erases them). */
  positionsOfJob(q: Queryable, jobId: string): Promise<number[]> {
    return this.outcomes.positionsOfJob(q, jobId);
  }

  /** The outcomes answering any of `receiptIds` recorded at or below ledger position `asOf`, in ledger order. */
  ofReceiptsAsOf(q: Queryable, receiptIds: string[], asOf: number): Promise<OutcomeRow[]> {
    return this.outcomes.ofReceiptsAsOf(q, receiptIds, asOf);
  }

  /**
   * The deciding outcome against receipt `scope.receipt` or any receipt named
   * by job `scope.job` (the latest not superseded, not `confirmed`), with how
   * many such there are; null when none (see `OutcomesRepository.decidingAgainst`).
   */
  decidingAgainst(q: Queryable, scope: { receipt: string } | { job: string }): Promise<{ row: OutcomeRow; count: number } | null> {
    return this.outcomes.decidingAgainst(q, scope);
  }
}
