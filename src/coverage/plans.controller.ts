import { Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { isUuid } from '../core/aer1';
import { Roles } from '../auth/roles.guard';
import { BadInputError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { RawJson } from '../common/raw-json';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { PlansService } from './plans.service';

const PLAN_SCHEMA = {
  type: 'object',
  description: 'An expected-action plan (docs/coverage.md)',
  example: {
    job_id: 'job-kyc-42',
    title: 'KYC refresh',
    unplanned: 'flag',
    expected_actions: [
      { action_id: 'fetch', tool: 'fetch_customer' },
      { action_id: 'screen', tool: 'check_sanctions', after: ['fetch'], accepted_provenance: ['EXECUTED BY *'] },
    ],
  },
};

@ApiTags('coverage')
@Controller('api/plans')
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  /** Register the expected-action plan of a job or workflow, before execution. 201; 409 `plan_exists`; 422 `invalid_plan` with `reasons`. */
  @Post()
  @Roles('compliance')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Register an expected-action plan (validated before anything is written)' })
  @ApiBody({ schema: PLAN_SCHEMA })
  @ApiResponse({ status: 201, description: 'registered as version 1' })
  @ApiResponse({ status: 409, description: 'plan_exists: amend instead' })
  @ApiResponse({ status: 422, description: 'invalid_plan, with every problem in reasons' })
  async register(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const v = await this.plans.register(body, caller);
    res.status(201);
    return v;
  }

  /** A new version superseding the current one; the old one stays readable. */
  @Post(':plan_id/amendments')
  @Roles('compliance')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Amend a plan: a new version that supersedes the current one' })
  @ApiResponse({ status: 201, description: 'recorded as version n+1' })
  @ApiResponse({ status: 409, description: 'plan_version_conflict (supersedes_version is not current)' })
  @ApiResponse({ status: 422, description: 'invalid_plan' })
  async amend(@Param('plan_id') planId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const v = await this.plans.amend(planId, body, caller);
    res.status(201);
    return v;
  }

  /**
   * The plan of a job (`?job_id=`) or workflow (`?workflow_id=`), with all
   * versions. Roles compliance, auditor (and admin): a producer that could
   * read the plan before the job runs could shape what it records to fit
   * (S13). 401 without a key, 403 `forbidden_role` for a producer.
   */
  @Get()
  @Roles('compliance', 'auditor')
  @ApiBearerAuth()
  @ApiResponse({ status: 403, description: 'forbidden_role: plans are readable by compliance, auditor and admin only' })
  @ApiOperation({ summary: 'Find the plan of a job or workflow (compliance, auditor, admin)' })
  @ApiQuery({ name: 'job_id', required: false })
  @ApiQuery({ name: 'workflow_id', required: false })
  async find(@Query('job_id') jobId?: string, @Query('workflow_id') workflowId?: string) {
    if ((jobId === undefined) === (workflowId === undefined)) throw new BadInputError('invalid_query', 'give job_id or workflow_id');
    if (workflowId !== undefined && !isUuid(workflowId)) throw new BadInputError('invalid_query', 'workflow_id must be a UUID');
    return this.plans.findBySubject(jobId !== undefined ? { kind: 'job', id: jobId } : { kind: 'workflow', id: workflowId!.toLowerCase() });
  }

  /** Every version of a plan, oldest first. Roles compliance, auditor (and admin); 401/403 otherwise. */
  @Get(':plan_id')
  @Roles('compliance', 'auditor')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'A plan with all its versions (compliance, auditor, admin)' })
  async get(@Param('plan_id') planId: string) {
    return this.plans.get(planId);
  }

  /** One version of a plan. Roles compliance, auditor (and admin); 401/403 otherwise. */
  @Get(':plan_id/versions/:n')
  @Roles('compliance', 'auditor')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'One version of a plan (compliance, auditor, admin)' })
  async version(@Param('plan_id') planId: string, @Param('n') n: string) {
    return this.plans.getVersion(planId, n);
  }
}

