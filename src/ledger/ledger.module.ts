import { Global, Module } from '@nestjs/common';
import { EventStreamService } from './event-stream.service';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';
import { ProjectionRegistry } from './projections';
import { LedgerNotifier } from './ledger-notifier';
import { ProjectionGuard } from './projection-guard';
import { AppendGate } from './append-gate';

/** The event ledger: append, read, verify, rebuild projections. Used by the API and by workers. */
@Global()
@Module({
  providers: [LedgerService, ProjectionRegistry, LedgerNotifier, ProjectionGuard, AppendGate],
  exports: [LedgerService, ProjectionRegistry, LedgerNotifier, ProjectionGuard, AppendGate],
})
export class EventLedgerModule {}

/** The ledger's HTTP endpoints (head, verify, the live event stream): API processes only, not workers. */
@Module({ controllers: [LedgerController], providers: [EventStreamService] })
export class LedgerHttpModule {}
