import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, unhandled } from '../ledger/projections';
import { OUTCOME_EVENT_TYPES, OutcomeEvent } from './outcomes.events';
import { OutcomesRepository } from './outcomes.repository';

/** The `outcomes` read model. */
export class OutcomesProjection implements Projection<OutcomeEvent> {
  readonly name = 'outcomes';
  readonly tables = ['outcomes'];
  readonly eventTypes = OUTCOME_EVENT_TYPES;

  constructor(
    private readonly outcomes: OutcomesRepository,
  ) {}

  /** Issue 29: the rows of erased payloads keep only what their retained data replays. */
  erasePayloads(tx: Tx, positions: readonly number[]): Promise<void> {
    return this.outcomes.erasePayloads(tx, positions);
  }

  async evolve(tx: Tx, e: RecordedEvent<OutcomeEvent>): Promise<void> {
    switch (e.type) {
      case 'OutcomeReported':
        return this.outcomes.insert(tx, e.data, e.position, e.recorded_at);
      default: {
        // A one-member union narrows the event's type, not the event: a new member makes this a compile error.
        const missed: never = e.type;
        return unhandled(missed);
      }
    }
  }
}
