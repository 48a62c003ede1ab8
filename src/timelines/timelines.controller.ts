import { Controller, Get, Param, Post, Put, Query, Res, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Roles } from '../auth/roles.guard';
import { Caller } from '../auth/caller.decorator';
import { ApiKeysService, Principal } from '../auth/api-keys.service';
import { BadInputError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { JOB_VERIFY_COST, PublicRead } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { TimelinesService } from './timelines.service';

@ApiTags('timelines')
@Controller('api/jobs/:job_id')
export class TimelinesController {
  constructor(
    private readonly timelines: TimelinesService,
    private readonly keys: ApiKeysService,
  ) {}

  /**
   * Append one chain entry or an array of entries (S7.2): each must extend
   * the current head. 201 `{job_id, appended, head, url, verify_url}`.
   */
  @Post('entries')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Append chain entries to a job timeline (each must extend the head)' })
  @ApiBody({ schema: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }], description: 'One S7 chain entry or an array of entries' } })
  @ApiResponse({ status: 201, description: 'appended' })
  @ApiResponse({ status: 409, description: 'seq_not_contiguous, link_mismatch, genesis_prev_digest, timeline_closed, timeline_imported' })
  @ApiResponse({ status: 422, description: 'verification_failed (malformed entry) or job_id_mismatch' })
  async append(@Param('job_id') jobId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const r = await this.timelines.append(jobId, body, caller);
    res.status(201);
    return r;
  }

  /**
   * Import a complete timeline recorded elsewhere. `valid` and `historical`
   * (-06, labeled) are stored with their verdict; `invalid` is 422.
   * 201 created, 200 the same body again, 409 `timeline_exists`.
   */
  @Put('timeline')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Import a complete timeline (verified; -06 timelines stored labeled historical)' })
  @ApiBody({ schema: { type: 'array', items: { type: 'object' } } })
  @ApiResponse({ status: 201, description: 'imported' })
  @ApiResponse({ status: 200, description: 'the same body was already imported' })
  @ApiResponse({ status: 409, description: 'timeline_exists' })
  @ApiResponse({ status: 422, description: 'verification_failed with reasons, or job_id_mismatch' })
  async import(@Param('job_id') jobId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const { outcome, ...r } = await this.timelines.import(jobId, body, caller);
    res.status(outcome === 'created' ? 201 : 200);
    return r;
  }

  /**
   * Record an external endpoint commitment (rev 09) with its witness
   * metadata, compared with the visible timeline now. Non-binding
   * commitments are recorded too. 422 `invalid_commitment`.
   */
  @Post('commitments')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Record an endpoint commitment {job_id, final_entry_digest, entry_count, published_at} with witness metadata' })
  @ApiBody({ schema: { type: 'object', example: { job_id: 'job-eight', final_entry_digest: '2148...', entry_count: 8, published_at: '2026-10-02T08:00:00Z', witness: 'witness.example', retrieved_from: 'https://witness.example/jobs/job-eight', retrieved_at: '2026-10-02T08:05:00Z' } } })
  @ApiResponse({ status: 201, description: 'recorded (binding or not); the answer also judges every commitment of the job together (commitment_assessment, truncation_excluded, findings)' })
  @ApiResponse({ status: 200, description: 'the same commitment text was already recorded for this job' })
  @ApiResponse({ status: 422, description: 'invalid_commitment' })
  async commit(@Param('job_id') jobId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const { outcome, ...r } = await this.timelines.recordCommitment(jobId, body, caller);
    res.status(outcome === 'created' ? 201 : 200);
    return r;
  }

  /** The timeline summary and its entries in order (from the stored texts, digests recomputed). */
  @Get('timeline')
  @ApiOperation({ summary: 'A job timeline: summary and entries in order' })
  @ApiQuery({ name: 'after', required: false, description: 'return entries with seq greater than this' })
  @ApiQuery({ name: 'limit', required: false, description: 'at most this many entries (default 1000, max 10000)' })
  async timeline(@Param('job_id') jobId: string, @Req() req: Request, @Res({ passthrough: true }) res: Response, @Query('after') after?: string, @Query('limit') limit?: string) {
    const a = after === undefined ? 0 : Number(after);
    const l = limit === undefined ? 1000 : Number(limit);
    if (!Number.isSafeInteger(a) || a < 0 || !Number.isSafeInteger(l) || l < 1 || l > 10_000) {
      throw new BadInputError('invalid_query', 'after must be a non-negative integer and limit an integer from 1 to 10000');
    }
    // An auditor's key (optional) is served canonical bytes a `metadata` publication withholds.
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    res.vary('Authorization');
    return this.timelines.timeline(jobId, a, l, viewer);
  }

  /**
   * Re-verify the stored timeline (S7) and every endpoint commitment
   * recorded for it (rev 09), judged together: `truncation_excluded` only
   * when one binds and none contradicts (`commitments` lists each with its
   * outcome, `findings` each contradiction). It leads with `assessment`:
   * 200 only when it is `clean` (S6: a machine verifier answers success only
   * for what verified); 422 for `invalid`, `historical`, a contradicting
   * commitment, or a chain no commitment binds (`truncation_not_excluded`).
   */
  @Get('verify')
  @PublicRead(JOB_VERIFY_COST)
  @ApiOperation({ summary: 'Verify a job timeline and all its endpoint commitments (S7, S7.3)' })
  async verify(@Param('job_id') jobId: string, @Res({ passthrough: true }) res: Response) {
    const r = await this.timelines.verify(jobId);
    res.status(r.assessment === 'clean' ? 200 : 422);
    return r;
  }

  /** The ledger's own endpoint `{job_id, final_entry_digest, entry_count, published_at}` for a closed, verifying job. */
  @Get('endpoint')
  @PublicRead(JOB_VERIFY_COST)
  @ApiOperation({ summary: 'Endpoint of a closed job, for an external witness to publish' })
  @ApiResponse({ status: 409, description: 'timeline_not_closed, timeline_not_valid' })
  async endpoint(@Param('job_id') jobId: string) {
    return this.timelines.endpoint(jobId);
  }
}
