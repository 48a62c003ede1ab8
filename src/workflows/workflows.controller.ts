import { Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Roles } from '../auth/roles.guard';
import { JsonBody } from '../common/json-body.decorator';
import { VerifyRateLimit } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { WorkflowsService } from './workflows.service';

@ApiTags('workflows')
@Controller()
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  /**
   * Record a workflow receipt (S8), stored exactly as received, verified
   * (S8.2) against the step receipts the ledger holds. 201
   * `{workflow_id, receipt_id, url, verify_url, verdict, reasons}` with
   * verdict `valid` or `incomplete` (`step_receipt_missing`: a step receipt
   * is not recorded yet; it is recorded with that verdict); 200 for the same
   * bytes again; 409 `workflow_id_conflict` for other bytes; 422
   * `verification_failed` with `reasons` when invalid (nothing recorded).
   * `url` is the public workflow page (the receipt's verify_url for
   * assembled workflows), `verify_url` the machine verifier.
   */
  @Post('api/workflows')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Record a workflow receipt (S8), verified against the recorded step receipts' })
  @ApiBody({ schema: { type: 'object', description: 'An AER-1 workflow receipt (type "verifiable-workflow-receipt")' } })
  @ApiResponse({ status: 201, description: 'recorded (verdict valid or incomplete)' })
  @ApiResponse({ status: 200, description: 'the same bytes were already recorded' })
  @ApiResponse({ status: 409, description: 'workflow_id_conflict' })
  @ApiResponse({ status: 422, description: 'verification_failed, with reasons' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const o = await this.workflows.record(body, caller);
    res.status(o.outcome === 'created' ? 201 : 200);
    return o;
  }

  /**
   * Assemble and record a workflow receipt from receipts already recorded:
   * `{session_id, goal, status, receipt_ids: [...], output}`. Steps take
   * tool, receipt id, receipt_hash (the step's output_hash without `sha256:`),
   * times and status from each receipt; merkle_root per S8.1; output_hash =
   * SHA-256 of the UTF-8 bytes of `output`. 201
   * `{workflow_id, receipt_id, url, verify_url, merkle_root, verdict, workflow}`;
   * 400 malformed body; 422 `step_receipt_missing` (with `missing`) or
   * `duplicate_step_receipt_id`.
   */
  @Post('api/workflows/assemble')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Assemble a workflow receipt from recorded receipts and record it' })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['session_id', 'goal', 'status', 'receipt_ids', 'output'],
      properties: {
        session_id: { type: 'string' },
        goal: { type: 'string' },
        status: { type: 'string' },
        receipt_ids: { type: 'array', items: { type: 'string', format: 'uuid' } },
        output: { type: 'string', description: 'the final output; output_hash = SHA-256 of its UTF-8 bytes' },
      },
    },
  })
  @ApiResponse({ status: 201, description: 'assembled and recorded' })
  @ApiResponse({ status: 422, description: 'step_receipt_missing or duplicate_step_receipt_id' })
  async assemble(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: Response) {
    const o = await this.workflows.assemble(body, caller);
    res.status(201);
    return { workflow_id: o.workflow_id, receipt_id: o.receipt_id, url: o.url, verify_url: o.verify_url, merkle_root: o.merkle_root, verdict: o.verdict, workflow: o.workflow };
  }

  /**
   * Machine verifier (S8.2): re-verifies the stored workflow receipt with
   * the step receipts in the ledger now. Answers
   * `{workflow_id, verification_status, verdict, reasons, merkle_root, output_hash, steps, checks, limits}`.
   * Status: 200 when it verifies (`verified`); 422 when it does not, both
   * for `failed` (invalid) and `incomplete` (a step receipt is not in the
   * ledger: S8.2 forbids reporting it verified, so it is a non-success);
   * 404 unknown. Ids are case-insensitive. Rate limited (S13).
   */
  @Get('api/workflow/:workflow_id/verify')
  @VerifyRateLimit()
  @ApiOperation({ summary: 'Verify a stored workflow receipt (S8.2)' })
  @ApiResponse({ status: 200, description: 'verified' })
  @ApiResponse({ status: 422, description: 'failed or incomplete (see verification_status)' })
  @ApiResponse({ status: 404, description: 'unknown workflow' })
  async verify(@Param('workflow_id') id: string, @Res({ passthrough: true }) res: Response) {
    const { report } = await this.workflows.verifyStored(id);
    res.status(report.verification_status === 'verified' ? 200 : 422);
    return report;
  }
}
