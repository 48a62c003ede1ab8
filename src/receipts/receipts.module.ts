import { Module } from '@nestjs/common';
import { ReceiptsController } from './receipts.controller';
import { ReceiptsListing } from './receipts.listing';
import { ReceiptsProjection } from './receipts.projection';
import { ReceiptsService } from './receipts.service';

@Module({
  controllers: [ReceiptsController],
  providers: [ReceiptsService, ReceiptsProjection, ReceiptsListing],
  exports: [ReceiptsService],
})
export class ReceiptsModule {}
