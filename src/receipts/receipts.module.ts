import { Module } from '@nestjs/common';
import { ReceiptsRepositoryModule } from './receipts-repository.module';
import { ReceiptsController } from './receipts.controller';
import { ReceiptsListing } from './receipts.listing';
import { ReceiptsService } from './receipts.service';

@Module({
  imports: [ReceiptsRepositoryModule],
  controllers: [ReceiptsController],
  providers: [ReceiptsService, ReceiptsListing],
  exports: [ReceiptsRepositoryModule, ReceiptsService],
})
export class ReceiptsModule {}
