import { Global, Module } from '@nestjs/common';
import { EventStreamService } from './event-stream.service';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';
import { LedgerNotifier } from './ledger-notifier';
import { ProjectionGuard } from './projection-guard';
import { AppendGate } from './append-gate';
import { EventsRepository } from './events.repository';

/**
 * The event ledger: append, read, verify, rebuild projections; the events table's `EventsRepository`
 * (global, as the ledger is). Used by the API and by workers.
 * Its process provides the `ProjectionRegistry` (`ProjectionsModule`, src/projections.ts) and a
 * `LEAF_SINK` (the verifiable log's `LogTreeModule`).
 */
@Global()
@Module({
  providers: [LedgerService, LedgerNotifier, ProjectionGuard, AppendGate, EventsRepository],
  exports: [LedgerService, LedgerNotifier, ProjectionGuard, AppendGate, EventsRepository],
})
export class EventLedgerModule {}

/** The ledger's HTTP endpoints (head, verify, the live event stream): API processes only, not workers. */
@Module({ controllers: [LedgerController], providers: [EventStreamService] })
export class LedgerHttpModule {}
