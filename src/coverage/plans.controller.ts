import { Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { isUuid } from '../core/aer1';
import { Roles } from '../auth/roles.guard';
import { BadInputError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { RawJson } from '../common/raw-json';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { LogService } from '../log/log.service';
import { PlansService } from './plans.service';
import { ApiAnswer, ApiCreated, ApiCursor, ApiErrors, ApiJsonBody, ref, WRITE_ERRORS } from '../common/openapi';
import { parsePage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { CoverageListing } from './coverage.listing';
import type { PlanVersionView } from './plans.service';

/** A warning of a write that succeeded: `code` is stable, `message` prose for people. */
export interface WriteWarning {
  code: 'plan_registered_after_execution_began';
  message: string;
}

/** The `Warning` header text (RFC 9111 section 5.5 form, ASCII) of a plan version recorded after its subject's execution began. */
export const LATE_PLAN_WARNING = 'plan registered after execution began: coverage reports against it carry the finding plan_registered_after_execution_began (it could have been written to fit what was recorded)';

/**
 * The warnings of a plan version just recorded (register or amend): one when
 * it was recorded after the first recorded event of its subject, because
 * every coverage report judged against it will say so. Sets the `Warning`
 * header (`299 - "<text>"`) when there is one; returns the `warnings` member.
 */
function planWarnings(v: PlanVersionView, res: FastifyReply): WriteWarning[] {
  // A version just recorded holds its plan (only a later erasure takes it).
  if (!v.registered_after_execution_began || v.plan === null) return [];
  const subject = 'job_id' in v.plan ? `job ${String(v.plan.job_id)}` : `workflow ${String(v.plan.workflow_id)}`;
  res.header('Warning', `299 - "${LATE_PLAN_WARNING}"`);
  return [
    {
      code: 'plan_registered_after_execution_began',
      message: `plan version ${v.version} was recorded at ledger position ${v.position}, after execution of ${subject} began (its first recorded event is at position ${v.execution_first_position}): every coverage report judged against this version carries the finding plan_registered_after_execution_began, because a plan written after the fact could have been written to fit what was recorded. The version is recorded and stays so; register plans before the job runs.`,
    },
  ];
}

/** The 201 answer of a plan write: the version and its warnings (component schema in dto/coverage.schemas.ts). */
const PLAN_WRITE_ANSWER = 'PlanVersionWritten';
/** The headers of a plan write's 201 answer besides Location. */
const PLAN_WRITE_HEADERS = { Warning: `present when the version was recorded after its subject's execution began: 299 - "${LATE_PLAN_WARNING}" (RFC 9111 section 5.5)` };

@ApiTags('coverage')
@Controller('api/plans')
export class PlansController {
  constructor(
    private readonly plans: PlansService,
    private readonly listing: CoverageListing,
    private readonly urls: PublicUrls,
    private readonly log: LogService,
  ) {}

  /**
   * Register the expected-action plan of a job or workflow, before execution. 201 with `Location` and `warnings`
   * (`[{code, message}]`, empty unless the plan came after execution began: then also a `Warning: 299 - "..."`
   * header); 409 `plan_exists`; 422 `invalid_plan` with `reasons` (codes) and `problems` (path, code, message).
   */
  @Post()
  @Roles('compliance')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'registerPlan', summary: 'Register an expected-action plan (validated before anything is written)' })
  @ApiJsonBody('Plan')
  @ApiCreated(PLAN_WRITE_ANSWER, 'registered as version 1; `warnings` says when it came after execution began', PLAN_WRITE_HEADERS)
  @ApiErrors([...WRITE_ERRORS, 409], { 409: '`plan_exists`: amend instead.', 422: '`invalid_plan`, every problem in `problems` and its code in `reasons`.' })
  async register(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const v = await this.plans.register(body, caller);
    res.status(201).header('Location', this.urls.planVersion(v.plan_id, v.version));
    return { ...v, warnings: planWarnings(v, res) };
  }

  /** A new version superseding the current one; the old one stays readable. 201 with `Location` and `warnings` (as for a registration). */
  @Post(':plan_id/amendments')
  @Roles('compliance')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'amendPlan', summary: 'Amend a plan: a new version that supersedes the current one' })
  @ApiJsonBody('PlanAmendment')
  @ApiCreated(PLAN_WRITE_ANSWER, 'recorded as version n+1; `warnings` says when it came after execution began', PLAN_WRITE_HEADERS)
  @ApiErrors([...WRITE_ERRORS, 404, 409], { 409: '`plan_version_conflict` (supersedes_version is not current).', 422: '`invalid_plan`.' })
  async amend(@Param('plan_id') planId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const v = await this.plans.amend(planId, body, caller);
    res.status(201).header('Location', this.urls.planVersion(v.plan_id, v.version));
    return { ...v, warnings: planWarnings(v, res) };
  }

  /**
   * The plan of a job (`?job_id=`) or workflow (`?workflow_id=`), with all
   * versions; without either, the list of plans (`?after=&limit=`, a
   * `PlanPage`). Roles compliance, auditor (and admin): a producer that
   * could read the plan before the job runs could shape what it records to
   * fit (S13). 401 without a key, 403 `forbidden_role` for a producer.
   */
  @Get()
  @Roles('compliance', 'auditor')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'findPlans', summary: 'The plan of a job or workflow, or (without either) the list of plans (compliance, auditor, admin)' })
  @ApiQuery({ name: 'job_id', required: false })
  @ApiQuery({ name: 'workflow_id', required: false })
  @ApiCursor()
  @ApiAnswer(200, { oneOf: [ref('PlanRecord'), ref('PlanPage')] }, 'with job_id or workflow_id: that plan (PlanRecord); without: a page of plans (PlanPage)')
  @ApiErrors([400, 401, 403, 404, 409], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.', 403: 'plans are readable by compliance, auditor and admin keys only.' })
  async find(@Query('job_id') jobId?: string, @Query('workflow_id') workflowId?: string, @Query('after') after?: string, @Query('limit') limit?: string) {
    if (jobId === undefined && workflowId === undefined) return this.listing.plans(parsePage(after, limit));
    if (after !== undefined || limit !== undefined) throw new BadInputError('invalid_query', 'after and limit page the list of plans; give them without job_id or workflow_id');
    if (jobId !== undefined && workflowId !== undefined) throw new BadInputError('invalid_query', 'give job_id or workflow_id');
    if (workflowId !== undefined && !isUuid(workflowId)) throw new BadInputError('invalid_query', 'workflow_id must be a UUID');
    return this.plans.findBySubject(jobId !== undefined ? { kind: 'job', id: jobId } : { kind: 'workflow', id: workflowId!.toLowerCase() });
  }

  /** Every version of a plan, oldest first. Roles compliance, auditor (and admin); 401/403 otherwise. */
  @Get(':plan_id')
  @Roles('compliance', 'auditor')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getPlan', summary: 'A plan with all its versions (compliance, auditor, admin)' })
  @ApiAnswer(200, 'PlanRecord', 'the plan')
  @ApiErrors([401, 403, 404, 409], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async get(@Param('plan_id') planId: string) {
    return this.plans.get(planId);
  }

  /** One version of a plan. Roles compliance, auditor (and admin); 401/403 otherwise. */
  @Get(':plan_id/versions/:n')
  @Roles('compliance', 'auditor')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getPlanVersion', summary: 'One version of a plan (compliance, auditor, admin)' })
  @ApiAnswer(200, 'PlanVersion', 'the version')
  @ApiErrors([400, 401, 403, 404, 409], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async version(@Param('plan_id') planId: string, @Param('n') n: string) {
    const v = await this.plans.getVersion(planId, n);
    return { ...v, log: await this.log.locate(v.position, this.urls.path(`/api/ledger/events/${v.position}/proof`)) };
  }
}

