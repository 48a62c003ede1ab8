import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, unhandled } from '../ledger/projections';
import { ERASURE_EVENT_TYPES, ErasureEvent } from './erasure.events';
import { ErasuresRepository } from './erasures.repository';

/**
 * The read model of erasures (issue 29): `erasures` (who, when, why, on what
 * basis) and `erased_events` (which positions). The content of the erased
 * records' own rows is cleared by their projections (`erasePayloads`), which
 * the registry calls for every `PayloadsErased` event.
 */
export class ErasureProjection implements Projection<ErasureEvent> {
  readonly name = 'erasures';
  readonly tables = ['erasures', 'erased_events'];
  readonly eventTypes = ERASURE_EVENT_TYPES;

  constructor(private readonly erasures: ErasuresRepository) {}

  async evolve(tx: Tx, e: RecordedEvent<ErasureEvent>): Promise<void> {
    switch (e.type) {
      case 'PayloadsErased':
        return this.erasures.insert(tx, e.data, e.position, e.data.erased_by);
      default: {
        const missed: never = e.type;
        return unhandled(missed);
      }
    }
  }
}
