import { Module } from '@nestjs/common';
import { CoverageController } from './coverage.controller';
import { CoverageListing } from './coverage.listing';
import { CoverageService } from './coverage.service';
import { PlansController } from './plans.controller';
import { PlansService } from './plans.service';

/** Expected-action plans and coverage reports (rev 09 "coverage plan"; docs/coverage.md). */
@Module({
  controllers: [PlansController, CoverageController],
  providers: [PlansService, CoverageService, CoverageListing],
  exports: [PlansService, CoverageService],
})
export class CoverageModule {}
