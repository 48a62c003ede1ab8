/** Request and answer schemas of plans and coverage reports (shapes of PlansService and CoverageService). */
import { pageOf } from '../../common/common.schemas';
import { arrayOf, nullable, obj, ref, Schema } from '../../common/openapi';

export const COVERAGE_SCHEMAS: Record<string, Schema> = {
  Plan: {
    type: 'object',
    description: 'An expected-action plan (docs/coverage.md): `job_id` or `workflow_id`, a title, the unplanned policy and the expected actions.',
    required: ['title', 'expected_actions'],
    properties: {
      job_id: { type: 'string' },
      workflow_id: { type: 'string', format: 'uuid' },
      title: { type: 'string' },
      unplanned: { type: 'string', enum: ['flag', 'allow', 'fail'] },
      expected_actions: arrayOf({
        type: 'object',
        required: ['action_id', 'tool'],
        properties: {
          action_id: { type: 'string' },
          tool: { type: 'string' },
          after: arrayOf({ type: 'string' }),
          min_count: { type: 'integer' },
          max_count: nullable({ type: 'integer' }),
          must_succeed: { type: 'boolean' },
          accepted_provenance: arrayOf({ type: 'string' }),
          outcome: obj(
            {
              effect: { type: 'string', description: 'the effect the owning system must confirm, e.g. `payment.settled`' },
              from_system: { type: 'string', description: 'the system that owns the effect: only its outcomes count' },
              within_seconds: { type: 'integer', minimum: 1, description: 'the confirmation must be observed at most this many seconds after the receipt\'s own time' },
            },
            'Requires an outcome from the system that owns the effect (issue 18).',
            ['within_seconds'],
          ),
        },
      }),
    },
    example: { job_id: 'job-kyc-42', title: 'KYC refresh', unplanned: 'flag', expected_actions: [{ action_id: 'fetch', tool: 'fetch_customer' }, { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'] }] },
  },
  PlanAmendment: {
    allOf: [ref('Plan'), { type: 'object', required: ['supersedes_version'], properties: { supersedes_version: { type: 'integer', description: 'the current version (409 plan_version_conflict otherwise)' }, reason: { type: 'string' } } }],
    description: 'A new version of a plan: the whole plan again, naming the version it supersedes.',
  },
  PlanVersion: obj(
    {
      log: ref('LogLocation'),
      plan_id: { type: 'string', format: 'uuid' },
      version: { type: 'integer' },
      plan: nullable({ type: 'object', additionalProperties: true, description: 'the normalized plan (defaults written out); null when erased' }),
      digest: nullable({ type: 'string', description: 'null when erased' }),
      registered_at: { type: 'string', format: 'date-time' },
      position: { type: 'integer' },
      recorded_by: ref('RecordedBy'),
      erased: { type: 'boolean', enum: [true], description: 'present when the version\'s content was erased (issue 29, named by position): `plan`, `digest` and `reason` are null' },
      erasure: ref('ErasureNotice'),
    },
    'One version of a plan.', ['log', 'erased', 'erasure']),
  Warning: obj(
    {
      code: { type: 'string', enum: ['plan_registered_after_execution_began'], description: 'a stable code' },
      message: { type: 'string', description: 'what it means, for people; never parse it' },
    },
    'Something about a write that succeeded and needs the writer\'s attention.',
  ),
  PlanVersionWritten: {
    allOf: [ref('PlanVersion'), obj({ warnings: arrayOf(ref('Warning'), "empty unless something about this write needs the writer's attention") })],
    description: 'A plan version just recorded (201 of registerPlan, amendPlan), with the warnings of the write.',
  },
  PlanRecord: obj(
    {
      plan_id: { type: 'string', format: 'uuid' },
      current_version: { type: 'integer' },
      versions: arrayOf(ref('PlanVersion')),
    },
    'A plan with all its versions, oldest first (with `job_id` or `workflow_id`).',
  ),
  PlanSummary: obj(
    {
      plan_id: { type: 'string', format: 'uuid' },
      subject: obj({ job_id: { type: 'string' }, workflow_id: { type: 'string' } }, undefined, ['job_id', 'workflow_id']),
      title: nullable({ type: 'string', description: 'null when the current version\'s content was erased' }),
      current_version: { type: 'integer' },
      position: { type: 'integer', description: 'ledger position of the first version' },
      url: { type: 'string', format: 'uri' },
    },
    'A plan in a list.',
  ),
  PlanPage: pageOf('PlanSummary', 'A page of plans in ledger order.'),
  CoverageRequest: {
    type: 'object',
    description: '`job_id` or `workflow_id`, and optionally the ledger position to judge as of (default: the head).',
    properties: { job_id: { type: 'string' }, workflow_id: { type: 'string', format: 'uuid' }, as_of_position: { type: 'integer', minimum: 1 } },
    example: { job_id: 'job-kyc-42', as_of_position: 120 },
  },
  CoverageIssued: obj(
    {
      report_id: { type: 'string', format: 'uuid' },
      url: { type: 'string', format: 'uri' },
      digest: { type: 'string' },
      as_of_position: { type: 'integer' },
      result: { type: 'string', description: 'the coverage result (full_coverage, incomplete, ...), part of the digested report' },
    },
    'A coverage report issued and recorded.',
  ),
  CoverageReport: obj(
    {
      log: ref('LogLocation'),
      report_id: { type: 'string', format: 'uuid' },
      url: { type: 'string', format: 'uri' },
      issued_at: { type: 'string', format: 'date-time' },
      digest: nullable({ type: 'string', description: 'null when erased' }),
      digest_verified: nullable({ type: 'boolean', description: 'null when erased: nothing to recompute' }),
      position: { type: 'integer' },
      issued_by: ref('RecordedBy'),
      report: nullable({ type: 'object', additionalProperties: true, required: ['format', 'result'], properties: { format: { type: 'string' }, result: { type: 'string' } }, description: 'the report content (format aer1-coverage-report/1), digested as recorded; null when erased' }),
      erased: { type: 'boolean', enum: [true], description: 'present when the report\'s content was erased (issue 29, named by position)' },
      recorded: obj(
        { subject: { type: 'object', additionalProperties: true }, plan: obj({ plan_id: { type: 'string' }, version: { type: 'integer' } }), as_of_position: { type: 'integer' }, result: { type: 'string', description: 'as recorded at issue, never recomputed' } },
        'An erased report: what its retained data keeps.',
      ),
      erasure: ref('ErasureNotice'),
      statement: { type: 'string', description: 'an erased report: "Content erased on <date> by <key name> (<legal basis>): <reason>", and what is left' },
    },
    'A recorded coverage report with its digest recomputed, or (`erased`) what is left of an erased one.', ['log', 'erased', 'recorded', 'erasure', 'statement']),
  CoverageReportSummary: obj(
    {
      report_id: { type: 'string', format: 'uuid' },
      subject: obj({ job_id: { type: 'string' }, workflow_id: { type: 'string' } }, undefined, ['job_id', 'workflow_id']),
      plan_id: { type: 'string' },
      plan_version: { type: 'integer' },
      as_of_position: { type: 'integer' },
      result: { type: 'string' },
      digest: nullable({ type: 'string', description: 'null when the report\'s content was erased' }),
      issued_at: { type: 'string', format: 'date-time' },
      position: { type: 'integer' },
      url: { type: 'string', format: 'uri' },
    },
    'A coverage report in a list.',
  ),
  CoverageReportPage: pageOf('CoverageReportSummary', 'A page of coverage reports in ledger order.'),
};
