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
