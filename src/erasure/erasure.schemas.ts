/** Answer schemas of erased records (issue 29): the erasure notice and the verifiers' 410 answer. */
import { arrayOf, nullable, obj, ref, Schema } from '../common/openapi';

export const ERASED_RECORD_SCHEMAS: Record<string, Schema> = {
  ErasureNotice: obj(
    {
      erasure_id: { type: 'string', format: 'uuid' },
      url: { type: 'string', format: 'uri', description: '`GET /api/erasures/{id}`' },
      erased_at: { type: 'string', format: 'date-time' },
      erased_by: obj({ key_id: { type: 'string' }, name: { type: 'string' } }, 'the key that erased (role privacy or admin)'),
      reason: { type: 'string', description: 'as the erasing key gave it (public text)' },
      legal_basis: { type: 'string', description: 'as the erasing key gave it (public text)' },
      erasure_position: { type: 'integer', description: 'ledger position of the PayloadsErased event' },
      statement: { type: 'string', description: '"Content erased on <date> by <key name> (<legal basis>): <reason>"' },
      erasure_log: ref('LogLocation'),
    },
    'The erasure that took a record\'s content (issue 29). `erasure_log`: where the PayloadsErased event sits in the verifiable log, with its inclusion proof (absent in lists).',
    ['erasure_log'],
  ),
  ErasedRecordVerification: obj(
    {
      id: { type: 'string', description: 'the record\'s id (receipt id or outcome id)' },
      verdict: { type: 'string', enum: ['erased'], description: 'never `valid`: the content a re-check needs was erased for good' },
      recorded_verdict: ref('Verdict'),
      recorded_reasons: ref('ReasonCodes'),
      erasure: ref('ErasureNotice'),
      statement: { type: 'string' },
      reasons: ref('ReasonCodes'),
      checks: arrayOf(ref('Check'), 'empty: nothing is re-checked'),
      output_hash: nullable({ type: 'string', description: 'always null: erased with the content' }),
      declared_output_hash: nullable({ type: 'string', description: 'always null: erased with the content' }),
      log: ref('LogLocation'),
    },
    'Answer (410 Gone) of a machine verifier whose record\'s content was erased (issue 29): no re-verification, the verdict recorded at ingestion (`recorded_verdict`), the erasure and where both events sit in the log. 200 means re-checked and valid, 422 a failed check; 410 neither.',
  ),
};
