import { Module } from '@nestjs/common';
import { VerificationBatchesRepository } from './verification-batches.repository';

/** The `verification_batches` and `verification_results` tables' repository. Provided and exported here (its owner); a module that reads it imports this module. */
@Module({ providers: [VerificationBatchesRepository], exports: [VerificationBatchesRepository] })
export class VerificationBatchesRepositoryModule {}
