import { Injectable, OnModuleInit } from '@nestjs/common';
import { isObject } from '../core/aer1';
import { Tx } from '../database/database.service';
import { StoredEvent } from '../core/ledger/event-hash';
import { Projection, ProjectionRegistry } from '../ledger/projections';

/** Data of `WorkflowReceiptRecorded` on stream `workflow:<workflow_id>`. */
export interface WorkflowReceiptRecordedData {
  workflow_id: string;
  receipt_id: string;
  /** The workflow receipt JSON exactly as received (or as assembled here). */
  raw: string;
  /** True when this ledger assembled the workflow from recorded receipts. */
  assembled: boolean;
  /** The output string hashed into output_hash (assembled workflows only). */
  output: string | null;
  /** `valid` or `incomplete`: the verdict when recorded (invalid ones are never recorded). */
  verdict_at_record: string;
  reasons: string[];
}

/** The `workflows` and `workflow_steps` read models (receipt ids lowercased). */
@Injectable()
export class WorkflowsProjection implements Projection, OnModuleInit {
  readonly name = 'workflows';
  readonly tables = ['workflows', 'workflow_steps'];

  constructor(private readonly registry: ProjectionRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  canHandle(type: string): boolean {
    return type === 'WorkflowReceiptRecorded';
  }

  async evolve(tx: Tx, e: StoredEvent): Promise<void> {
    const d = JSON.parse(e.data) as WorkflowReceiptRecordedData;
    const w = JSON.parse(d.raw) as Record<string, unknown>;
    const workflowId = d.workflow_id.toLowerCase();
    await tx.query(
      `INSERT INTO workflows (workflow_id, receipt_id, raw, assembled, merkle_root, status, goal, position, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        workflowId,
        d.receipt_id.toLowerCase(),
        d.raw,
        d.assembled ? 1 : 0,
        typeof w.merkle_root === 'string' ? w.merkle_root : null,
        typeof w.status === 'string' ? w.status : null,
        typeof w.goal === 'string' ? w.goal : null,
        e.position,
        e.recorded_at,
      ],
    );
    const steps = Array.isArray(w.steps) ? w.steps : [];
    for (let i = 0; i < steps.length; i++) {
      const s: unknown = steps[i];
      if (!isObject(s) || typeof s.receipt_id !== 'string') continue;
      const seq = Number.isSafeInteger(s.seq) ? (s.seq as number) : i + 1;
      await tx.query('INSERT INTO workflow_steps (workflow_id, seq, receipt_id, tool) VALUES (?, ?, ?, ?)', [
        workflowId,
        seq,
        s.receipt_id.toLowerCase(),
        typeof s.tool === 'string' ? s.tool : null,
      ]);
    }
  }
}
