import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Roles } from '../auth/roles.guard';
import { BadInputError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { KeyQuota } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { VerificationBatchesService } from './verification-batches.service';
import { ApiAnswer, ApiCursor, ApiErrors, ApiJsonBody, WRITE_ERRORS } from '../common/openapi';
import { parsePage } from '../common/pagination';
import { VerificationBatchesListing } from './verification-batches.listing';

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
    private readonly listing: VerificationBatchesListing,
  ) {}

  /** Queue a re-verification of stored records; answers 202 at once. 503 `queue_unavailable` when the queue is down (nothing recorded). */
  @Post('api/verification-batches')
  @Roles('auditor')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'submitVerificationBatch', summary: 'Re-verify stored receipts, job timelines and workflows in the background' })
  @ApiJsonBody('BatchRequest')
  @ApiAnswer(202, 'BatchQueued', 'queued; `Location` is the status URL', { Location: 'the batch status URL' })
  @ApiErrors([...WRITE_ERRORS, 429, 503], { 429: '`quota_exceeded`: REPORT_QUOTA_PER_HOUR batches per key per hour.', 400: '`invalid_targets`, `too_many_targets`, `invalid_scope`.' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply) {
    await this.quota.spend(req, 'verification_batches');
    const r = await this.batches.submit(body.value, caller);
    res.status(202);
    res.header('Location', r.status_url);
    return r;
  }

  /**
   * Progress and results (paged by offset/limit, default 100, max 1000), with
   * `counts` per outcome {valid, invalid, historical, incomplete, not_found}
   * (they add up to `done`; only `valid` is a clean result).
   */
  @Get('api/verification-batches/:id')
  @ApiOperation({ operationId: 'getVerificationBatch', summary: 'Status and results of a verification batch' })
  @ApiAnswer(200, 'Batch', 'status, counts per outcome and a page of results')
  @ApiErrors([400, 404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  @ApiQuery({ name: 'offset', required: false })
  @ApiQuery({ name: 'limit', required: false })
  async get(@Param('id') id: string, @Query('offset') offset?: string, @Query('limit') limit?: string) {
    return this.batches.get(id, pageParam('offset', offset, 0, Number.MAX_SAFE_INTEGER), pageParam('limit', limit, 100, 1000));
  }

  /** Verification batches in ledger order, paged by cursor (auditor, admin). */
  @Get('api/verification-batches')
  @Roles('auditor')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'listVerificationBatches', summary: 'List verification batches, oldest first (auditor, admin)' })
  @ApiCursor()
  @ApiAnswer(200, 'BatchPage', 'a page; `next` is the cursor of the following page')
  @ApiErrors([400, 401, 403])
  async list(@Query('after') after?: string, @Query('limit') limit?: string) {
    return this.listing.list(parsePage(after, limit));
  }
}
