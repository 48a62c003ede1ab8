/**
 * The rule of a workflow stream (S9: a workflow receipt is recorded once and
 * never altered), decided once. Pure: state in, events or a typed error out.
 */
import { ConflictError } from '../common/errors';
import type { WorkflowReceiptRecorded, WorkflowReceiptRecordedData } from './workflows.events';

/**
 * Decide recording `data` given the text recorded under its workflow id now
 * (null: none): the event, or `existing` for the same bytes again. 409
 * `workflow_id_conflict` for other bytes.
 */
export function decideRecordWorkflow(recordedRaw: string | null, data: WorkflowReceiptRecordedData): { existing: true } | { events: [WorkflowReceiptRecorded] } {
  if (recordedRaw === null) return { events: [{ type: 'WorkflowReceiptRecorded', data }] };
  if (recordedRaw === data.raw) return { existing: true };
  const workflowId = data.workflow_id.toLowerCase();
  throw new ConflictError('workflow_id_conflict', `workflow ${workflowId} is already recorded with different bytes; records are never altered (S9)`, { workflow_id: workflowId });
}
