import { Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Roles } from '../auth/roles.guard';
import { JsonBody } from '../common/json-body.decorator';
import { VerifyRateLimit } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { ApiAnswer, ApiCreated, ApiCursor, ApiErrors, ApiJsonBody, markDeprecated, WRITE_ERRORS } from '../common/openapi';
import { parsePage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { WorkflowsListing } from './workflows.listing';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { LogService } from '../log/log.service';
import { WorkflowsService } from './workflows.service';
import { ERASED_STATUS } from '../erasure/erased-records';

@ApiTags('workflows')
@Controller()
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly listing: WorkflowsListing,
    private readonly urls: PublicUrls,
    private readonly log: LogService,
  ) {}

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
  @ApiOperation({ operationId: 'recordWorkflow', summary: 'Record a workflow receipt (S8), verified against the recorded step receipts' })
  @ApiJsonBody('WorkflowDocument')
  @ApiCreated('WorkflowRecorded', 'recorded (verdict valid or incomplete)')
  @ApiAnswer(200, 'WorkflowRecorded', 'the same bytes were already recorded')
  @ApiErrors([...WRITE_ERRORS, 409], { 409: '`workflow_id_conflict`.', 422: '`verification_failed`, with `reasons`.', 400: '`wrapped_workflow`.' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const o = await this.workflows.record(body, caller);
    if (o.outcome === 'created') res.status(201).header('Location', o.url);
    else res.status(200);
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
  @ApiOperation({ operationId: 'assembleWorkflow', summary: 'Assemble a workflow receipt from recorded receipts and record it' })
  @ApiJsonBody('AssembleWorkflow')
  @ApiCreated('WorkflowAssembled', 'assembled and recorded')
  @ApiErrors(WRITE_ERRORS, { 422: '`step_receipt_missing` (with `missing`), `duplicate_step_receipt_id`, `url_has_userinfo`.' })
  async assemble(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const o = await this.workflows.assemble(body, caller);
    res.status(201).header('Location', o.url);
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
  @Get('api/workflows/:workflow_id/verify')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'verifyWorkflow', summary: 'Verify a stored workflow receipt (S8.2)' })
  @ApiAnswer(200, 'WorkflowVerification', 'verified (verdict valid)')
  @ApiAnswer(422, 'WorkflowVerification', 'verdict invalid or incomplete')
  @ApiAnswer(ERASED_STATUS, 'WorkflowVerification', 'verdict `partly_erased`: step receipts were erased (issue 29) and nothing else is wrong; the erased steps are `erased`, not re-checked')
  @ApiErrors([404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async verify(@Param('workflow_id') id: string, @Res({ passthrough: true }) res: FastifyReply) {
    const { row, report } = await this.workflows.verifyStored(id);
    // 410 (issue 29): step receipts erased and nothing else wrong: neither verified nor failed (as the other verifiers).
    res.status(report.verification_status === 'verified' ? 200 : report.verification_status === 'erased' ? ERASED_STATUS : 422);
    return { ...report, log: await this.log.locate(Number(row.position), this.urls.path(`/api/workflows/${row.workflow_id}/proof`)) };
  }

  /** Deprecated alias of {@link verify} (kept for one release): the same answer with `Deprecation` and `Link: rel="successor-version"`. */
  @Get('api/workflow/:workflow_id/verify')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'verifyWorkflowDeprecated', deprecated: true, summary: 'Deprecated: use GET /api/workflows/{workflow_id}/verify' })
  @ApiAnswer(200, 'WorkflowVerification', 'verified', { Deprecation: 'RFC 9745 date of deprecation', Link: '<successor>; rel="successor-version"' })
  @ApiAnswer(422, 'WorkflowVerification', 'verdict invalid or incomplete')
  @ApiAnswer(ERASED_STATUS, 'WorkflowVerification', 'verdict `partly_erased`: step receipts were erased (issue 29) and nothing else is wrong; the erased steps are `erased`, not re-checked')
  @ApiErrors([404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async verifyDeprecated(@Param('workflow_id') id: string, @Res({ passthrough: true }) res: FastifyReply) {
    markDeprecated(res, this.urls.workflowVerify(encodeURIComponent(id)));
    return this.verify(id, res);
  }

  /** Workflow receipts in ledger order, paged by cursor; as recorded (re-verify with verifyWorkflow). */
  @Get('api/workflows')
  @ApiOperation({ operationId: 'listWorkflows', summary: 'List recorded workflow receipts, oldest first' })
  @ApiCursor()
  @ApiAnswer(200, 'WorkflowPage', 'a page; `next` is the cursor of the following page')
  @ApiErrors([400, 429])
  async list(@Query('after') after?: string, @Query('limit') limit?: string) {
    return this.listing.list(parsePage(after, limit));
  }
}
