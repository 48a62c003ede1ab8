import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, unhandled } from '../ledger/projections';
import { CoverageReportsRepository } from './coverage-reports.repository';
import { COVERAGE_EVENT_TYPES, CoverageEvent, PLAN_EVENT_TYPES, PlanEvent } from './coverage.events';
import { PlansRepository } from './plans.repository';

/** The `plans`, `plan_versions` and `coverage_reports` read models. */
export class CoverageProjection implements Projection<PlanEvent | CoverageEvent> {
  readonly name = 'coverage';
  readonly tables = ['plans', 'plan_versions', 'coverage_reports'];
  readonly eventTypes = [...PLAN_EVENT_TYPES, ...COVERAGE_EVENT_TYPES];

  constructor(
    private readonly plans: PlansRepository,
    private readonly reports: CoverageReportsRepository,
  ) {}

  /** Issue 29: the rows of erased plan versions and reports keep only what their retained data replays. */
  async erasePayloads(tx: Tx, positions: readonly number[]): Promise<void> {
    await this.plans.erasePayloads(tx, positions);
    await this.reports.erasePayloads(tx, positions);
  }

  async evolve(tx: Tx, e: RecordedEvent<PlanEvent | CoverageEvent>): Promise<void> {
    switch (e.type) {
      case 'CoverageReportIssued':
        return this.reports.insert(tx, e.data, e.position);
      case 'PlanRegistered':
        await this.plans.insertPlan(tx, e.data, e.position);
        return this.plans.insertVersion(tx, e.data, e.position);
      case 'PlanAmended':
        await this.plans.updateCurrent(tx, e.data, e.position);
        return this.plans.insertVersion(tx, e.data, e.position);
      default:
        return unhandled(e);
    }
  }
}
