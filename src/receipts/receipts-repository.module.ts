import { Module } from '@nestjs/common';
import { ReceiptReads } from './receipt-reads';
import { ReceiptsRepository } from './receipts.repository';

/** The `receipts` table's repository (for this module) and `ReceiptReads` (the reads other modules make): a module that reads receipts imports this module. */
@Module({ providers: [ReceiptsRepository, ReceiptReads], exports: [ReceiptsRepository, ReceiptReads] })
export class ReceiptsRepositoryModule {}
