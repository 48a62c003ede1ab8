/** The workflow decider, pure: given what is recorded, then events or a 409. */
import { thrown } from '../helpers/errors';
import { decideRecordWorkflow } from '../../src/workflows/workflows.decider';
import { WorkflowReceiptRecordedData } from '../../src/workflows/workflows.events';

describe('decideRecordWorkflow', () => {
  const data: WorkflowReceiptRecordedData = { workflow_id: 'WF-1', receipt_id: 'r', raw: '{"a":1}', assembled: false, output: null, verdict_at_record: 'valid', reasons: [] };
  it('given nothing recorded, then WorkflowReceiptRecorded; the same bytes, then existing; other bytes, then 409 workflow_id_conflict', () => {
    expect(decideRecordWorkflow(null, data)).toEqual({ events: [{ type: 'WorkflowReceiptRecorded', data }] });
    expect(decideRecordWorkflow('{"a":1}', data)).toEqual({ existing: true });
    const e = thrown(() => decideRecordWorkflow('{}', data));
    expect([e.status, e.code, e.details]).toEqual([409, 'workflow_id_conflict', { workflow_id: 'wf-1' }]);
  });
});
