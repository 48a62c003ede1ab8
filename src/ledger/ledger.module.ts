import { Global, Module } from '@nestjs/common';
import { EventStreamService } from './event-stream.service';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';
import { LedgerNotifier } from './ledger-notifier';
import { ProjectionGuard } from './projection-guard';
import { AppendGate } from './append-gate';

/**
 * The event ledger: append, read, verify, rebuild projections. Used by the API and by workers.
 * Its process provides the `ProjectionRegistry` (`ProjectionsModule`, src/projections.ts) and a
 * `LEAF_SINK` (the verifiable log's `LogTreeModule`).
 */
@Global()
@Module({
  providers: [LedgerService, LedgerNotifier, ProjectionGuard, AppendGate],
  exports: [LedgerService, LedgerNotifier, ProjectionGuard, AppendGate],
})
export class EventLedgerModule {}

/** The ledger's HTTP endpoints (head, verify, the live event stream): API processes only, not workers. */
@Module({ controllers: [LedgerController], providers: [EventStreamService] })
export class LedgerHttpModule {}
