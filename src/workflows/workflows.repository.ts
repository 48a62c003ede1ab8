import { boolParam, int, parseStoredJson, Queryable } from '../database/rows';
import type { Writer } from '../ledger/events.repository';

/** A row of the `workflows` read model. */
export interface WorkflowRow {
  workflow_id: string;
  receipt_id: string;
  raw: string;
  assembled: number | boolean;
  merkle_root: string | null;
  status: string | null;
  goal: string | null;
  position: number;
  recorded_at: string;
}

/** A workflow that names a receipt as a step, with the key that recorded it. */
export interface StepOfWorkflow {
  workflow_id: string;
  seq: number;
  goal: string | null;
  /** The workflow receipt's declared `verify_url` as stored (null when absent or not a string). */
  verify_url: string | null;
  writer: Writer | null;
}

export interface WorkflowListRow {
  workflow_id: string;
  receipt_id: string;
  goal: string | null;
  status: string | null;
  merkle_root: string | null;
  assembled: number | string | boolean;
  position: number | string;
  recorded_at: string;
  step_count: number | string;
}

/**
 * The `workflows` and `workflow_steps` tables (ids lowercased): their SQL,
 * rows and mapping. Every method runs on the unit of work it is given.
 */
export class WorkflowsRepository {
  /** Insert a workflow's row. */
  async insert(q: Queryable, w: Omit<WorkflowRow, 'assembled'> & { assembled: boolean }): Promise<void> {
    await q.query(
      `INSERT INTO workflows (workflow_id, receipt_id, raw, assembled, merkle_root, status, goal, position, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [w.workflow_id, w.receipt_id, w.raw, boolParam(w.assembled), w.merkle_root, w.status, w.goal, w.position, w.recorded_at],
    );
  }

  /** Insert one step row. */
  async insertStep(q: Queryable, s: { workflow_id: string; seq: number; receipt_id: string; tool: string | null }): Promise<void> {
    await q.query('INSERT INTO workflow_steps (workflow_id, seq, receipt_id, tool) VALUES (?, ?, ?, ?)', [s.workflow_id, s.seq, s.receipt_id, s.tool]);
  }

  /** The row of workflow `workflowId` (lowercase), or null. */
  async get(q: Queryable, workflowId: string): Promise<WorkflowRow | null> {
    const row = (await q.query<WorkflowRow>('SELECT * FROM workflows WHERE workflow_id = ?', [workflowId]))[0];
    return row ? { ...row, position: int(row.position) } : null;
  }

  /** The stored text of workflow `workflowId` (lowercase), or null. */
  async rawOf(q: Queryable, workflowId: string): Promise<string | null> {
    return (await q.query<{ raw: string }>('SELECT raw FROM workflows WHERE workflow_id = ?', [workflowId]))[0]?.raw ?? null;
  }

  /** True when workflow `workflowId` (lowercase) names receipt `receiptId` (lowercase) as a step. */
  async namesStep(q: Queryable, workflowId: string, receiptId: string): Promise<boolean> {
    return (await q.query<Record<string, unknown>>('SELECT 1 AS one FROM workflow_steps WHERE workflow_id = ? AND receipt_id = ? LIMIT 1', [workflowId, receiptId])).length > 0;
  }

  /** Workflows naming receipt `receiptId` (lowercase) as a step, in record order, each with its writer. */
  async naming(q: Queryable, receiptId: string): Promise<StepOfWorkflow[]> {
    const rows = await q.query<{ workflow_id: string; seq: number | string; goal: string | null; raw: string; key_id: string | null; key_name: string | null; owner: string | null }>(
      `SELECT s.workflow_id AS workflow_id, s.seq AS seq, w.goal AS goal, w.raw AS raw, e.key_id AS key_id, e.key_name AS key_name, k.owner AS owner
       FROM workflow_steps s JOIN workflows w ON w.workflow_id = s.workflow_id
       JOIN events e ON e.position = w.position LEFT JOIN api_keys k ON k.id = e.key_id
       WHERE s.receipt_id = ? ORDER BY w.position, s.seq`,
      [receiptId],
    );
    return rows.map((r) => ({
      workflow_id: r.workflow_id,
      seq: int(r.seq),
      goal: r.goal,
      verify_url: declaredVerifyUrl(r.raw),
      writer: r.key_id !== null && r.key_name !== null ? { key_id: r.key_id, name: r.key_name, owner: r.owner ?? null } : null,
    }));
  }

  /** workflows recorded after a ledger position, in that order, with their step counts. */
  async workflowsAfter(q: Queryable, p: { after: number; limit: number }): Promise<WorkflowListRow[]> {
    return q.query<WorkflowListRow>(
      `SELECT w.workflow_id, w.receipt_id, w.goal, w.status, w.merkle_root, w.assembled, w.position, w.recorded_at,
              (SELECT COUNT(*) FROM workflow_steps s WHERE s.workflow_id = w.workflow_id) AS step_count
         FROM workflows w WHERE w.position > ? ORDER BY w.position LIMIT ?`,
      [p.after, p.limit + 1],
    );
  }
}

/** The `verify_url` member of stored workflow bytes, or null. */
function declaredVerifyUrl(raw: string): string | null {
  const w = parseStoredJson(raw) as { verify_url?: unknown } | null | undefined;
  return typeof w?.verify_url === 'string' ? w.verify_url : null;
}
