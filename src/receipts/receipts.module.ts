import { Module } from '@nestjs/common';
import { ReceiptsController } from './receipts.controller';
import { ReceiptsProjection } from './receipts.projection';
import { ReceiptsService } from './receipts.service';

@Module({
  controllers: [ReceiptsController],
  providers: [ReceiptsService, ReceiptsProjection],
  exports: [ReceiptsService],
})
export class ReceiptsModule {}
