import { Injectable } from '@nestjs/common';
import type { CheckpointRef } from '../core/checkpoint-ref';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { LogService } from './log.service';

/** What a checkpoint is asked for: a record named by kind and id, at its ledger position. */
export interface CheckpointQuery {
  kind: 'receipt' | 'job' | 'workflow' | 'coverage_report';
  id: string;
  /** The ledger position of the record's (latest) event, when known; else the newest event of its stream. */
  position: number | null;
}

/**
 * Which signed checkpoint proves a record, for the coverage page and PDF
 * and the badges: the checkpoint `LogService.locate` proved the record's
 * event against (its inclusion proof checked). Null when none does yet, or
 * the proof did not check: every renderer then says "not yet proven against
 * a signed checkpoint" (badges omit the size). Provided by the log module
 * (API processes).
 */
@Injectable()
export class CheckpointLocator {
  constructor(
    private readonly log: LogService,
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
  ) {}

  async locate(query: CheckpointQuery): Promise<CheckpointRef | null> {
    const stream = query.kind === 'job' ? streams.timeline(query.id) : query.kind === 'workflow' ? streams.workflow(query.id) : query.kind === 'receipt' ? streams.receipt(query.id) : streams.coverage(query.id);
    const position = query.position ?? (await this.events.lastPositionOf(this.db, stream));
    if (position === null) return null;
    const loc = await this.log.locate(position, this.log.proofUrlOf(position));
    if (loc.status !== 'proven' || !loc.checkpoint) return null;
    return { size: loc.checkpoint.size, root: loc.checkpoint.root, leaf_index: loc.leaf_index, url: loc.checkpoint.url };
  }
}
