import { Module } from '@nestjs/common';
import { ErasureModule } from '../erasure/erasure.module';
import { ErasureReadsModule } from '../erasure/erasure-reads.module';
import { OutcomesRepositoryModule } from '../outcomes/outcomes-repository.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { CoverageRepositoryModule } from './coverage-repository.module';
import { CoverageController } from './coverage.controller';
import { CoverageListing } from './coverage.listing';
import { CoverageService } from './coverage.service';
import { PdfRenderer } from './pdf-renderer';
import { PlansController } from './plans.controller';
import { PlansService } from './plans.service';

/** Expected-action plans and coverage reports (rev 09 "coverage plan"; docs/coverage.md). */
@Module({
  imports: [CoverageRepositoryModule, TimelinesRepositoryModule, OutcomesRepositoryModule, ErasureModule, ErasureReadsModule],
  controllers: [PlansController, CoverageController],
  providers: [PlansService, CoverageService, CoverageListing, PdfRenderer],
  exports: [CoverageRepositoryModule, PlansService, CoverageService],
})
export class CoverageModule {}
