import { Module } from '@nestjs/common';
import { ReceiptsRepository } from './receipts.repository';

/** The `receipts` table's repository. Provided and exported here (its owner); a module that reads it imports this module. */
@Module({ providers: [ReceiptsRepository], exports: [ReceiptsRepository] })
export class ReceiptsRepositoryModule {}
