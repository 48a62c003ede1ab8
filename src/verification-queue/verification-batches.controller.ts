import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Roles } from '../auth/roles.guard';
import { BadInputError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { KeyQuota } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { VerificationBatchesService } from './verification-batches.service';

function pageParam(name: string, value: string | undefined, def: number, max: number): number {
  if (value === undefined || value === '') return def;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n > max) throw new BadInputError('invalid_query', `${name} must be an integer from 0 to ${max}`);
  return n;
}

@ApiTags('verification batches')
@Controller()
export class VerificationBatchesController {
  constructor(
    private readonly batches: VerificationBatchesService,
    private readonly quota: KeyQuota,
  ) {}

  /** Queue a re-verification of stored records; answers 202 at once. 503 `queue_unavailable` when the queue is down (nothing recorded). */
  @Post('api/verification-batches')
  @Roles('auditor')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Re-verify stored receipts, job timelines and workflows in the background' })
  @ApiBody({ schema: { type: 'object', description: '{targets: [{kind: "receipt"|"job"|"workflow", id}]} or {scope: "all"} or {scope: {since_position: N}}' } })
  @ApiResponse({ status: 202, description: '{batch_id, total, status_url}' })
  @ApiResponse({ status: 503, description: 'queue_unavailable: nothing was recorded' })
  @ApiResponse({ status: 429, description: 'quota_exceeded: REPORT_QUOTA_PER_HOUR batches per key per hour' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    await this.quota.spend(req, 'verification_batches');
    const r = await this.batches.submit(body.value, caller);
    res.status(202);
    res.setHeader('Location', r.status_url);
    return r;
  }

  /**
   * Progress and results (paged by offset/limit, default 100, max 1000), with
   * `counts` per outcome {valid, invalid, historical, incomplete, not_found}
   * (they add up to `done`; only `valid` is a clean result).
   */
  @Get('api/verification-batches/:id')
  @ApiOperation({ summary: 'Status and results of a verification batch' })
  @ApiResponse({ status: 200, description: '{batch_id, status, scope, total, done, invalid (verdict invalid, not-found targets included), counts: {valid, invalid, historical, incomplete, not_found}, offset, limit, results, created_at, completed_at, requested_by}' })
  @ApiQuery({ name: 'offset', required: false })
  @ApiQuery({ name: 'limit', required: false })
  async get(@Param('id') id: string, @Query('offset') offset?: string, @Query('limit') limit?: string) {
    return this.batches.get(id, pageParam('offset', offset, 0, Number.MAX_SAFE_INTEGER), pageParam('limit', limit, 100, 1000));
  }
}
