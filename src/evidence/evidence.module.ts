import { Module } from '@nestjs/common';
import { ErasureModule } from '../erasure/erasure.module';
import { WorkflowsRepositoryModule } from '../workflows/workflows-repository.module';
import { TimelinesRepositoryModule } from '../timelines/timelines-repository.module';
import { OutcomesRepositoryModule } from '../outcomes/outcomes-repository.module';
import { CoverageRepositoryModule } from '../coverage/coverage-repository.module';
import { AuthModule } from '../auth/auth.module';
import { EvidenceController } from './evidence.controller';
import { WitnessCheckpointEvidence } from './checkpoint-evidence';
import { CHECKPOINT_EVIDENCE, EvidenceService } from './evidence.service';

/** Evidence packs (issue 16): one offline-verifiable download per job, workflow or coverage report. */
@Module({ imports: [CoverageRepositoryModule, OutcomesRepositoryModule, TimelinesRepositoryModule, WorkflowsRepositoryModule, AuthModule, ErasureModule], controllers: [EvidenceController], providers: [EvidenceService, { provide: CHECKPOINT_EVIDENCE, useClass: WitnessCheckpointEvidence }], exports: [EvidenceService] })
export class EvidenceModule {}
