import { Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { VerifyRateLimit } from '../common/rate-limit';
import type { Response } from 'express';
import { Roles } from '../auth/roles.guard';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { JsonBody, RawBody } from '../common/json-body.decorator';
import { RawJson } from '../common/raw-json';
import { ReceiptsService } from './receipts.service';

@ApiTags('receipts')
@Controller()
export class ReceiptsController {
  constructor(private readonly receipts: ReceiptsService) {}

  /**
   * Record a receipt (S3/S4, core or transport form, or a JSON-RPC
   * `tools/call` response carrying `result._receipt`), stored as received.
   * 201 `{id, url, verify_url, verdict}`; 200 for the same bytes again; 409
   * `receipt_id_conflict`; 422 `verification_failed` with `reasons`.
   */
  @Post('api/receipts')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Record a receipt (verified before anything is written)' })
  @ApiBody({ schema: { type: 'object', description: 'An AER-1 receipt, core or transport form, or a JSON-RPC tools/call response' } })
  @ApiResponse({ status: 201, description: 'recorded' })
  @ApiResponse({ status: 200, description: 'the same bytes were already recorded' })
  @ApiResponse({ status: 409, description: 'receipt_id_conflict' })
  @ApiResponse({ status: 422, description: 'verification_failed, with reasons' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const o = await this.receipts.ingest(body, caller);
    res.status(o.outcome === 'created' ? 201 : 200);
    return o;
  }

  /** NDJSON, one receipt a line; answers per line `{line, status, ...}`. 200 with counts. */
  @Post('api/receipts/batch')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiConsumes('application/x-ndjson')
  @ApiOperation({ summary: 'Record receipts in bulk from NDJSON; answered line by line' })
  async batch(@RawBody() body: Buffer, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const r = await this.receipts.ingestBatch(body, caller);
    res.status(200);
    return r;
  }

  /** Record a correction that supersedes `id` (S9); the original is never altered. */
  @Post('api/receipts/:id/corrections')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Record a correcting receipt that supersedes an earlier one (S9)' })
  @ApiBody({ schema: { type: 'object', description: 'The correcting receipt: a new AER-1 receipt with an id of its own (core or transport form, or a JSON-RPC tools/call response); the original is named in the path' } })
  @ApiResponse({ status: 201, description: 'recorded; the original now links to it' })
  @ApiResponse({ status: 200, description: 'the same correction was already recorded' })
  @ApiResponse({ status: 404, description: 'the original receipt is not recorded' })
  @ApiResponse({ status: 409, description: 'already_superseded, correction_same_id or receipt_id_conflict' })
  @ApiResponse({ status: 422, description: 'verification_failed, with reasons' })
  async correct(@Param('id') id: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const o = await this.receipts.correct(id, body, caller);
    res.status(o.outcome === 'created' ? 201 : 200);
    return o;
  }

  /**
   * Machine verifier (S6): `{id, verification_status, output_hash, checks}`;
   * 200 when the stored record verifies, 422 when it does not, 404 when unknown.
   * Rate limited (S13); reveals nothing beyond the record.
   */
  @Get('api/receipt/:id/verify')
  @VerifyRateLimit()
  @ApiOperation({ summary: 'Verify a stored receipt (S6)' })
  async verify(@Param('id') id: string, @Res({ passthrough: true }) res: Response) {
    const { row, result } = await this.receipts.verifyStored(id);
    res.status(result.verdict === 'valid' ? 200 : 422);
    return {
      id: row.id,
      verification_status: result.verdict === 'valid' ? 'verified' : 'failed',
      verdict: result.verdict,
      reasons: result.reasons,
      output_hash: result.computed.output_hash,
      declared_output_hash: row.output_hash,
      provenance_class: result.provenance.class,
      provenance_meaning: result.provenance.meaning,
      form: result.form,
      checks: result.checks,
      limits: result.limits,
      superseded_by: row.superseded_by,
      recorded_by: await this.receipts.recordedBy(row),
      publication: row.publication,
      ...(row.publication === 'metadata'
        ? { statement: 'The canonical bytes are withheld from the public by the publication setting of the key that recorded this receipt (S13); this ledger recomputed the output commitment from the stored bytes, server-side.' }
        : {}),
    };
  }
}
