import { Module } from '@nestjs/common';
import { ReceiptsModule } from '../receipts/receipts.module';
import { TimelinesModule } from '../timelines/timelines.module';
import { OtlpController } from './otlp.controller';
import { OtlpService } from './otlp.service';

/** OTLP/HTTP traces in (issue 31, docs/otlp.md): GenAI tool-call spans recorded as receipts and timeline entries. */
@Module({
  imports: [ReceiptsModule, TimelinesModule],
  controllers: [OtlpController],
  providers: [OtlpService],
})
export class OtlpModule {}
