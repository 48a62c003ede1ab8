/** Request and answer schemas of the workflow endpoints (shapes of WorkflowsService). */
import { pageOf } from '../../common/common.schemas';
import { arrayOf, nullable, obj, ref, Schema } from '../../common/openapi';

const sideBySide = obj({ declared: nullable({ type: 'string' }), computed: nullable({ type: 'string' }), confirmed: nullable({ type: 'boolean' }), construction: { type: 'string' } });

export const WORKFLOW_SCHEMAS: Record<string, Schema> = {
  WorkflowDocument: { type: 'object', additionalProperties: true, description: 'An AER-1 workflow receipt (S8, type "verifiable-workflow-receipt"), stored byte for byte.' },
  AssembleWorkflow: {
    type: 'object',
    required: ['session_id', 'goal', 'status', 'receipt_ids', 'output'],
    additionalProperties: false,
    properties: {
      session_id: { type: 'string' },
      goal: { type: 'string' },
      status: { type: 'string' },
      receipt_ids: { type: 'array', minItems: 1, items: { type: 'string', format: 'uuid' } },
      output: { type: 'string', description: 'the final output; output_hash = SHA-256 of its UTF-8 bytes' },
    },
  },
  WorkflowRecorded: obj(
    {
      outcome: { type: 'string', enum: ['created', 'existing'] },
      workflow_id: { type: 'string', format: 'uuid' },
      receipt_id: { type: 'string' },
      url: { type: 'string', format: 'uri' },
      verify_url: { type: 'string', format: 'uri' },
      verdict: ref('Verdict'),
      reasons: ref('ReasonCodes'),
      position: { type: 'integer' },
    },
    'A recorded workflow receipt (verdict valid, or incomplete while a step receipt is not recorded).',
  ),
  WorkflowAssembled: obj(
    {
      workflow_id: { type: 'string', format: 'uuid' },
      receipt_id: { type: 'string', format: 'uuid' },
      url: { type: 'string', format: 'uri' },
      verify_url: { type: 'string', format: 'uri' },
      merkle_root: { type: 'string' },
      verdict: ref('Verdict'),
      workflow: ref('WorkflowDocument'),
    },
    'An assembled and recorded workflow receipt, with its bytes.',
  ),
  WorkflowVerification: obj(
    {
      log: ref('LogLocation'),
      workflow_id: { type: 'string' },
      verdict: { type: 'string', enum: ['valid', 'invalid', 'historical', 'incomplete', 'partly_erased'], description: 'a `Verdict`, or `partly_erased` (410): step receipts were erased (issue 29) and nothing else is wrong' },
      verification_status: { type: 'string', enum: ['verified', 'failed', 'incomplete', 'erased'], deprecated: true, description: 'deprecated: read `verdict` (`verified` is `valid`, `failed` is `invalid`)' },
      reasons: ref('ReasonCodes'),
      merkle_root: sideBySide,
      output_hash: sideBySide,
      steps: arrayOf(obj({ seq: { type: 'integer' }, receipt_id: { type: 'string' }, url: nullable({ type: 'string' }), receipt: { type: 'string', description: '`verified`, `failed`, `missing`, `not_supplied`, or `erased` (recorded, content erased since: not re-checked)' }, reasons: ref('ReasonCodes') })),
      findings: arrayOf(
        obj(
          {
            code: { type: 'string', enum: ['step_status_mismatch', 'step_receipt_hash_mismatch', 'verify_url_foreign'] },
            step: nullable({ type: 'integer' }),
            message: { type: 'string' },
          },
          'What the stored observations show beside the verdict (S8.2 step 5); a finding never changes the verdict. `step` is the step seq, null for the workflow as a whole.',
        ),
      ),
      checks: arrayOf(ref('Check')),
      limits: ref('Limits'),
      assembled: { type: 'boolean' },
      recorded_at: { type: 'string', format: 'date-time' },
      recorded_by: ref('RecordedBy'),
      url: { type: 'string', format: 'uri' },
      verify_url: { type: 'string', format: 'uri' },
    },
    'The stored workflow receipt re-verified (S8.2) with the step receipts the ledger holds now.',
  ),
  WorkflowSummary: obj(
    {
      workflow_id: { type: 'string', format: 'uuid' },
      receipt_id: { type: 'string' },
      goal: nullable({ type: 'string' }),
      status: nullable({ type: 'string' }),
      merkle_root: nullable({ type: 'string' }),
      assembled: { type: 'boolean' },
      step_count: { type: 'integer' },
      position: { type: 'integer' },
      recorded_at: { type: 'string', format: 'date-time' },
      url: { type: 'string', format: 'uri' },
      verify_url: { type: 'string', format: 'uri' },
    },
    'A recorded workflow receipt in a list (as recorded, not re-verified).',
  ),
  WorkflowPage: pageOf('WorkflowSummary', 'A page of workflow receipts in ledger order.'),
};
