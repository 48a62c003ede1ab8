import { Module } from '@nestjs/common';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { ReceiptsModule } from '../receipts/receipts.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { TimelinesModule } from '../timelines/timelines.module';
import { OtlpController } from './otlp.controller';
import { OtlpService } from './otlp.service';

/** OTLP/HTTP traces in (issue 31, docs/otlp.md): GenAI tool-call spans recorded as receipts and timeline entries. */
@Module({
  imports: [ReceiptsModule, ReceiptsRepositoryModule, TimelinesModule, TimelinesRepositoryModule],
  controllers: [OtlpController],
  providers: [OtlpService],
})
export class OtlpModule {}
