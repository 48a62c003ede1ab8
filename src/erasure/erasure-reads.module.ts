import { Module } from '@nestjs/common';
import { ErasedRecords } from './erased-records';

/** The read side of erasure (issue 29) for pages and verifiers: no writes, no dependency on the record modules. */
@Module({
  providers: [ErasedRecords],
  exports: [ErasedRecords],
})
export class ErasureReadsModule {}
