import { Global, Module } from '@nestjs/common';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';
import { ProjectionRegistry } from './projections';
import { ProjectionGuard } from './projection-guard';

/** The event ledger: append, read, verify, rebuild projections. Used by the API and by workers. */
@Global()
@Module({
  providers: [LedgerService, ProjectionRegistry, ProjectionGuard],
  exports: [LedgerService, ProjectionRegistry, ProjectionGuard],
})
export class EventLedgerModule {}

/** The ledger's HTTP endpoints (head, verify): API processes only, not workers. */
@Module({ controllers: [LedgerController] })
export class LedgerHttpModule {}
