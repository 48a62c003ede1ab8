/**
 * The one list of the service's projections (its read models). The server
 * (`ProjectionsModule`, in the API, the worker and `npm run ledger`) and the
 * tools that read a database directly (`aer1 ledger verify --database`,
 * `npm run ledger -- verify`, the projection audit and guard) all build their
 * registry here, so a projection added here is applied, rebuilt and audited
 * everywhere. Its tables' migrations live in `migrations/`.
 */
import { Global, Module } from '@nestjs/common';
import { CoverageReportsRepository } from './coverage/coverage-reports.repository';
import { CoverageProjection } from './coverage/coverage.projection';
import { PlansRepository } from './coverage/plans.repository';
import type { Projection } from './ledger/projections';
import { ProjectionRegistry } from './ledger/projections';
import { ErasureProjection } from './erasure/erasure.projection';
import { ErasuresRepository } from './erasure/erasures.repository';
import { OutcomesProjection } from './outcomes/outcomes.projection';
import { OutcomesRepository } from './outcomes/outcomes.repository';
import { ReceiptsProjection } from './receipts/receipts.projection';
import { ReceiptsRepository } from './receipts/receipts.repository';
import { TimelinesProjection } from './timelines/timelines.projection';
import { TimelinesRepository } from './timelines/timelines.repository';
import { VerificationBatchesRepository } from './verification-queue/verification-batches.repository';
import { VerificationProjection } from './verification-queue/verification.projection';
import { WorkflowsProjection } from './workflows/workflows.projection';
import { WorkflowsRepository } from './workflows/workflows.repository';

/** Every projection of the service, in the order an event is applied to them (their event types are disjoint). Repositories hold no state, so each projection gets its own. */
export function createProjections(): Projection[] {
  return [
    new ReceiptsProjection(new ReceiptsRepository()),
    new TimelinesProjection(new TimelinesRepository()),
    new WorkflowsProjection(new WorkflowsRepository()),
    new CoverageProjection(new PlansRepository(), new CoverageReportsRepository()),
    new VerificationProjection(new VerificationBatchesRepository()),
    new OutcomesProjection(new OutcomesRepository()),
    new ErasureProjection(new ErasuresRepository()),
  ] as unknown as Projection[];
}

/** A registry of every projection of the service (see {@link createProjections}). */
export function projectionRegistry(): ProjectionRegistry {
  return new ProjectionRegistry(createProjections());
}

/** The registry for the Nest container: `LedgerService`, the projection guard and the audit read it. */
@Global()
@Module({ providers: [{ provide: ProjectionRegistry, useFactory: projectionRegistry }], exports: [ProjectionRegistry] })
export class ProjectionsModule {}
