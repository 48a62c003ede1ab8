import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, unhandled } from '../ledger/projections';
import { VERIFICATION_TABLE_NAMES } from './schema';
import { VerificationBatchesRepository } from './verification-batches.repository';
import { BATCH_EVENT_TYPES, BatchEvent } from './verification.events';

/**
 * `verification_batches` and `verification_results` from the `batch:<id>`
 * streams (idempotent on replay: see {@link VerificationBatchesRepository}).
 */
export class VerificationProjection implements Projection<BatchEvent> {
  readonly name = 'verification_batches';
  readonly tables = VERIFICATION_TABLE_NAMES;
  readonly eventTypes = BATCH_EVENT_TYPES;

  constructor(
    private readonly batches: VerificationBatchesRepository,
  ) {}

  async evolve(tx: Tx, e: RecordedEvent<BatchEvent>): Promise<void> {
    switch (e.type) {
      case 'VerificationBatchRequested':
        return this.batches.insertBatch(tx, e.data, e.position, e.recorded_at);
      case 'VerificationResultsRecorded':
        return this.batches.insertResults(tx, e.data, e.position, e.recorded_at);
      default:
        return unhandled(e);
    }
  }
}
