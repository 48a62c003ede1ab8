import { Module } from '@nestjs/common';
import { ReceiptsController } from './receipts.controller';
import { ReceiptsListing } from './receipts.listing';
import { ReceiptsService } from './receipts.service';

@Module({
  controllers: [ReceiptsController],
  providers: [ReceiptsService, ReceiptsListing],
  exports: [ReceiptsService],
})
export class ReceiptsModule {}
