import { isObject } from '../core/aer1';
import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, unhandled } from '../ledger/projections';
import { WORKFLOW_EVENT_TYPES, WorkflowEvent } from './workflows.events';
import { WorkflowsRepository } from './workflows.repository';

/** The `workflows` and `workflow_steps` read models (receipt ids lowercased). */
export class WorkflowsProjection implements Projection<WorkflowEvent> {
  readonly name = 'workflows';
  readonly tables = ['workflows', 'workflow_steps'];
  readonly eventTypes = WORKFLOW_EVENT_TYPES;

  constructor(
    private readonly workflows: WorkflowsRepository,
  ) {}

  async evolve(tx: Tx, e: RecordedEvent<WorkflowEvent>): Promise<void> {
    switch (e.type) {
      case 'WorkflowReceiptRecorded':
        return this.recorded(tx, e);
      default:
        return unhandled(e.type);
    }
  }

  private async recorded(tx: Tx, e: RecordedEvent<WorkflowEvent>): Promise<void> {
    const d = e.data;
    const w = JSON.parse(d.raw) as Record<string, unknown>;
    const workflowId = d.workflow_id.toLowerCase();
    await this.workflows.insert(tx, {
      workflow_id: workflowId,
      receipt_id: d.receipt_id.toLowerCase(),
      raw: d.raw,
      assembled: d.assembled,
      merkle_root: typeof w.merkle_root === 'string' ? w.merkle_root : null,
      status: typeof w.status === 'string' ? w.status : null,
      goal: typeof w.goal === 'string' ? w.goal : null,
      position: e.position,
      recorded_at: e.recorded_at,
    });
    const steps = Array.isArray(w.steps) ? w.steps : [];
    for (let i = 0; i < steps.length; i++) {
      const s: unknown = steps[i];
      if (!isObject(s) || typeof s.receipt_id !== 'string') continue;
      const seq = Number.isSafeInteger(s.seq) ? (s.seq as number) : i + 1;
      await this.workflows.insertStep(tx, { workflow_id: workflowId, seq, receipt_id: s.receipt_id.toLowerCase(), tool: typeof s.tool === 'string' ? s.tool : null });
    }
  }
}
