import { Injectable } from '@nestjs/common';
import type { CheckpointRef } from '../core/checkpoint-ref';

/** What a checkpoint is asked for: a record named by kind and id, at its ledger position. */
export interface CheckpointQuery {
  kind: 'receipt' | 'job' | 'workflow' | 'coverage_report';
  id: string;
  /** The ledger position of the record's (latest) event, when known. */
  position: number | null;
}

/**
 * The seam for signed checkpoints: which signed checkpoint proves a record,
 * for the coverage page and PDF and the badges. Until the signed-checkpoint
 * work lands it knows none and answers null, and every renderer says "not
 * yet proven against a signed checkpoint" (badges omit the size).
 */
@Injectable()
export class CheckpointLocator {
  async locate(_query: CheckpointQuery): Promise<CheckpointRef | null> {
    return null;
  }
}
