import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Roles } from '../auth/roles.guard';
import { JsonBody } from '../common/json-body.decorator';
import { KeyQuota, PublicRead, REPORT_READ_COST } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { renderCoveragePage } from './coverage.page';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { CoverageService } from './coverage.service';

@ApiTags('coverage')
@Controller()
export class CoverageController {
  constructor(
    private readonly coverage: CoverageService,
    private readonly quota: KeyQuota,
  ) {}

  /**
   * Reconcile a job's timeline (or a workflow) against its plan as of a
   * ledger position (default: the head) and record the report.
   * 201 `{report_id, url, digest, as_of_position, result}`.
   */
  @Post('api/coverage-reports')
  @Roles('auditor')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Issue a coverage report as of a ledger position' })
  @ApiBody({ schema: { type: 'object', example: { job_id: 'job-kyc-42', as_of_position: 120 } } })
  @ApiResponse({ status: 201, description: 'issued and recorded' })
  @ApiResponse({ status: 422, description: 'no_plan, position_beyond_head' })
  @ApiResponse({ status: 429, description: 'quota_exceeded: REPORT_QUOTA_PER_HOUR reports per key per hour' })
  async issue(@JsonBody() body: RawJson, @Caller() caller: Principal, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    await this.quota.spend(req, 'coverage_reports');
    const r = await this.coverage.issue(body, caller);
    res.status(201);
    return r;
  }

  /** A recorded report (JSON) with its digest recomputed. */
  @Get('api/coverage-reports/:report_id')
  @PublicRead(REPORT_READ_COST)
  @ApiOperation({ summary: 'A coverage report as JSON' })
  async get(@Param('report_id') id: string) {
    return this.coverage.get(id);
  }

  /** The public page of a report: HTML, or JSON with `Accept: application/json`. */
  @Get('coverage/:report_id')
  @PublicRead(REPORT_READ_COST)
  @ApiOperation({ summary: 'Public page of a coverage report (HTML, or JSON by Accept)' })
  @ApiProduces('text/html', 'application/json')
  async page(@Param('report_id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const r = await this.coverage.get(id);
    res.setHeader('Vary', 'Accept');
    if (req.accepts(['text/html', 'application/json']) === 'application/json') {
      res.status(200).json(r);
      return;
    }
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.status(200).type('html').send(renderCoveragePage(r));
  }
}
