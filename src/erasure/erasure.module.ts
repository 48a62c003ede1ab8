import { Module } from '@nestjs/common';
import { OutcomesRepositoryModule } from '../outcomes/outcomes-repository.module';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { ErasureController } from './erasure.controller';
import { ErasureService } from './erasure.service';
import { ErasuresRepository } from './erasures.repository';

/** Erasure of payloads and the erasures read model (issue 29). */
@Module({
  imports: [ReceiptsRepositoryModule, TimelinesRepositoryModule, OutcomesRepositoryModule],
  controllers: [ErasureController],
  providers: [ErasureService, ErasuresRepository],
  exports: [ErasureService, ErasuresRepository],
})
export class ErasureModule {}
