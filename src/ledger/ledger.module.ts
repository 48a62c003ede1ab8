import { Global, Module } from '@nestjs/common';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';
import { ProjectionRegistry } from './projections';

/** The event ledger: append, read, verify, rebuild projections. */
@Global()
@Module({
  controllers: [LedgerController],
  providers: [LedgerService, ProjectionRegistry],
  exports: [LedgerService, ProjectionRegistry],
})
export class LedgerModule {}
