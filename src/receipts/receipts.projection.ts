import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, unhandled } from '../ledger/projections';
import { RECEIPT_EVENT_TYPES, ReceiptEvent } from './receipts.events';
import { ReceiptsRepository } from './receipts.repository';

/** The `receipts` read model. */
export class ReceiptsProjection implements Projection<ReceiptEvent> {
  readonly name = 'receipts';
  readonly tables = ['receipts'];
  readonly eventTypes = RECEIPT_EVENT_TYPES;

  constructor(
    private readonly receipts: ReceiptsRepository,
  ) {}

  /** Issue 29: the rows of erased payloads keep only what their retained data replays. */
  erasePayloads(tx: Tx, positions: readonly number[]): Promise<void> {
    return this.receipts.erasePayloads(tx, positions);
  }

  async evolve(tx: Tx, e: RecordedEvent<ReceiptEvent>): Promise<void> {
    switch (e.type) {
      case 'ReceiptRecorded':
        return this.receipts.insert(tx, e.data, e.position, e.recorded_at);
      case 'ReceiptCorrected':
        return this.receipts.markSuperseded(tx, e.data.id, e.data.superseded_by);
      default:
        return unhandled(e);
    }
  }
}
