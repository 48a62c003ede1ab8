import { Module } from '@nestjs/common';
import { CoverageReportsRepository } from './coverage-reports.repository';
import { PlansRepository } from './plans.repository';

/** The plans' (`plans`, `plan_versions`) and coverage reports' (`coverage_reports`) repositories. Provided and exported here (its owner); a module that reads it imports this module. */
@Module({ providers: [PlansRepository, CoverageReportsRepository], exports: [PlansRepository, CoverageReportsRepository] })
export class CoverageRepositoryModule {}
