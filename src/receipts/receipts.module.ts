import { Module } from '@nestjs/common';
import { ErasureReadsModule } from '../erasure/erasure-reads.module';
import { ReceiptsRepositoryModule } from './receipts-repository.module';
import { ReceiptsController } from './receipts.controller';
import { ReceiptsListing } from './receipts.listing';
import { ReceiptsService } from './receipts.service';

@Module({
  imports: [ErasureReadsModule, ReceiptsRepositoryModule],
  controllers: [ReceiptsController],
  providers: [ReceiptsService, ReceiptsListing],
  exports: [ReceiptsRepositoryModule, ReceiptsService],
})
export class ReceiptsModule {}
