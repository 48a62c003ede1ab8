import { Module } from '@nestjs/common';
import { CoverageReads } from './coverage-reads';
import { CoverageReportsRepository } from './coverage-reports.repository';
import { PlansRepository } from './plans.repository';

/** The plans' (`plans`, `plan_versions`) and coverage reports' (`coverage_reports`) repositories (for this module) and `CoverageReads` (the reads other modules make). Provided and exported here (its owner); a module that reads them imports this module. */
@Module({ providers: [PlansRepository, CoverageReportsRepository, CoverageReads], exports: [PlansRepository, CoverageReportsRepository, CoverageReads] })
export class CoverageRepositoryModule {}
