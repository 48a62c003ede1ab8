import { Global, Module } from '@nestjs/common';
import { ApiKeysRepository } from '../auth/api-keys.repository';
import { CoverageReportsRepository } from '../coverage/coverage-reports.repository';
import { PlansRepository } from '../coverage/plans.repository';
import { EventsRepository } from '../ledger/events.repository';
import { OutcomesRepository } from '../outcomes/outcomes.repository';
import { ReceiptsRepository } from '../receipts/receipts.repository';
import { TimelinesRepository } from '../timelines/timelines.repository';
import { VerificationBatchesRepository } from '../verification-queue/verification-batches.repository';
import { WebhooksRepository } from '../webhooks/webhooks.repository';
import { WorkflowsRepository } from '../workflows/workflows.repository';

/**
 * Every repository, provided once for the whole application (API, worker and
 * `npm run ledger`): projections, services, pages and the queue processor of
 * any module read the tables they need through them. Each repository lives
 * beside the module that owns its table (`src/<module>/<module>.repository.ts`).
 */
export const REPOSITORIES = [
  EventsRepository,
  ApiKeysRepository,
  ReceiptsRepository,
  TimelinesRepository,
  WorkflowsRepository,
  PlansRepository,
  CoverageReportsRepository,
  VerificationBatchesRepository,
  WebhooksRepository,
  OutcomesRepository,
];

@Global()
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
export class RepositoriesModule {}
