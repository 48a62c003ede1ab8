/**
 * The registered projections without the Nest container: the same classes
 * and repositories the service registers at module init, for tools that read
 * a database directly (`aer1 ledger verify --database`, `npm run ledger -- verify`).
 * A projection added to the service must be added here too; the projection
 * audit test compares this list with the service's registry.
 */
import { CoverageReportsRepository } from '../coverage/coverage-reports.repository';
import { CoverageProjection } from '../coverage/coverage.projection';
import { PlansRepository } from '../coverage/plans.repository';
import { ReceiptsProjection } from '../receipts/receipts.projection';
import { ReceiptsRepository } from '../receipts/receipts.repository';
import { TimelinesProjection } from '../timelines/timelines.projection';
import { TimelinesRepository } from '../timelines/timelines.repository';
import { VerificationBatchesRepository } from '../verification-queue/verification-batches.repository';
import { VerificationProjection } from '../verification-queue/verification.projection';
import { WorkflowsProjection } from '../workflows/workflows.projection';
import { WorkflowsRepository } from '../workflows/workflows.repository';
import { OutcomesProjection } from '../outcomes/outcomes.projection';
import { OutcomesRepository } from '../outcomes/outcomes.repository';
import { ProjectionRegistry } from './projections';

/** A registry holding every projection of the service. */
export function standaloneProjections(): ProjectionRegistry {
  const registry = new ProjectionRegistry();
  for (const p of [
    new ReceiptsProjection(registry, new ReceiptsRepository()),
    new TimelinesProjection(registry, new TimelinesRepository()),
    new WorkflowsProjection(registry, new WorkflowsRepository()),
    new CoverageProjection(registry, new PlansRepository(), new CoverageReportsRepository()),
    new VerificationProjection(registry, new VerificationBatchesRepository()),
    new OutcomesProjection(registry, new OutcomesRepository()),
  ]) {
    p.onModuleInit();
  }
  return registry;
}
