import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { vary } from '../common/http';
import { Roles } from '../auth/roles.guard';
import { Caller } from '../auth/caller.decorator';
import { ApiKeysService, Principal } from '../auth/api-keys.service';
import { mayReadWithheld } from '../auth/permissions';
import { LedgerError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { ApiAnswer, ApiCreated, ApiErrors, ApiJsonBody, WRITE_ERRORS } from '../common/openapi';
import { PublicRead, VerifyRateLimit } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { isObject } from '../core/aer1';
import { OutcomesService } from './outcomes.service';
import { ErasedRecords, ERASED_STATUS, isErasedRaw } from '../erasure/erased-records';
import { LogService } from '../log/log.service';

@ApiTags('outcomes')
@Controller()
export class OutcomesController {
  constructor(
    private readonly outcomes: OutcomesService,
    private readonly keys: ApiKeysService,
    private readonly urls: PublicUrls,
    private readonly erased: ErasedRecords,
    private readonly log: LogService,
  ) {}

  /**
   * Record an outcome report (issue 18): the owning system's observation of
   * an effect of a recorded call, verified before anything is written and
   * stored exactly as sent. 201 with `Location` (the verifier); 200 for the
   * same bytes again; 403 `system_not_permitted` when the key does not speak
   * for `system`; 409 `outcome_id_conflict`; 422 `verification_failed` (with
   * `reasons`), `receipt_not_recorded`, or `receipt_not_in_job` (no entry of
   * the job it names, nor a step of a workflow with that id, names the receipt).
   */
  @Post('api/outcomes')
  @Roles('outcome')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'reportOutcome', summary: 'Record an outcome report of the system that owns the effect (verified before anything is written)' })
  @ApiJsonBody('OutcomeReport')
  @ApiCreated('OutcomeRecorded', 'recorded')
  @ApiAnswer(200, 'OutcomeRecorded', 'the same bytes were already recorded')
  @ApiErrors([...WRITE_ERRORS, 409], {
    403: '`forbidden_role`, `system_not_permitted` (the key does not speak for `system`).',
    409: '`outcome_id_conflict`: the id is recorded with other bytes (outcomes are never edited).',
    422: '`verification_failed` with `reasons` (members, strict base64, output commitment); `receipt_not_recorded`; `receipt_not_in_job` (no entry of the job it names, nor a step of a workflow with that id, names the receipt).',
  })
  async report(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const o = await this.outcomes.report(body, caller);
    if (o.outcome === 'created') res.status(201).header('Location', o.verify_url);
    else res.status(200);
    return o;
  }

  /**
   * Machine verifier: the stored outcome report re-verified now (members,
   * strict base64, output commitment). 200 when it verifies, 422 when not,
   * 404 `not_found`. `result` is what the system observed, as it states it;
   * this ledger's result is `verdict`. Rate limited (S13). Erased content
   * (issue 29): 410 Gone, `ErasedRecordVerification` with `verdict:
   * "erased"`, `recorded_verdict` (`valid`: a report is recorded only when it
   * verifies) and the erasure; nothing re-verified, no output hash.
   */
  @Get('api/outcomes/:id/verify')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'verifyOutcome', summary: 'Verify a stored outcome report' })
  @ApiAnswer(200, 'OutcomeVerification', 'verdict valid')
  @ApiAnswer(422, 'OutcomeVerification', 'the stored record does not verify (verdict invalid)')
  @ApiAnswer(ERASED_STATUS, 'ErasedRecordVerification', 'the report\'s content was erased (issue 29): verdict `erased`, nothing re-verified')
  @ApiErrors([404, 429])
  async verify(@Param('id') id: string, @Res({ passthrough: true }) res: FastifyReply) {
    const { row, result, reported_by, superseded_by } = await this.outcomes.verifyStored(id);
    if (isErasedRaw(row.raw)) {
      res.status(ERASED_STATUS);
      const erasure = await this.erased.located(row.position);
      return {
        id: row.outcome_id,
        outcome_id: row.outcome_id,
        verdict: 'erased' as const,
        recorded_verdict: 'valid',
        recorded_reasons: [] as string[],
        erasure,
        statement: `${erasure?.statement ?? 'Content erased'}. Nothing is re-verified: the report's canonical bytes and output hash are gone for good. It verified when recorded (a report is recorded only then).`,
        reasons: [] as string[],
        checks: [] as unknown[],
        output_hash: null,
        declared_output_hash: null,
        receipt_id: row.receipt_id,
        job_id: row.job_id,
        system: row.system,
        effect: row.effect,
        result: row.result,
        observed_at: row.observed_at,
        superseded_by,
        reported_by,
        log: await this.log.locate(row.position, this.urls.path(`/api/ledger/events/${row.position}/proof`)),
        receipt_url: this.urls.receipt(row.receipt_id),
        url: this.urls.outcome(row.outcome_id),
      };
    }
    res.status(result.verdict === 'valid' ? 200 : 422);
    const commitment = result.checks.find((c) => c.name === 'output_commitment');
    let declared: unknown = null;
    try {
      const doc: unknown = JSON.parse(row.raw);
      declared = isObject(doc) ? doc.output_hash : null;
    } catch {
      declared = null;
    }
    return {
      outcome_id: row.outcome_id,
      verdict: result.verdict,
      reasons: result.reasons,
      output_commitment: { matches: commitment ? commitment.ok : null, declared: typeof declared === 'string' ? declared : null, computed: result.computed.output_hash },
      receipt_id: row.receipt_id,
      job_id: row.job_id,
      system: row.system,
      effect: row.effect,
      result: row.result,
      observed_at: row.observed_at,
      superseded_by,
      reported_by,
      checks: result.checks,
      limits: result.limits,
      receipt_url: this.urls.receipt(row.receipt_id),
      url: this.urls.outcome(row.outcome_id),
    };
  }

  /**
   * Export: the outcome reports naming job `job_id`, as recorded, one per
   * line in ledger order (`application/x-ndjson`): what `aer1 coverage
   * --outcomes` reads. A report recorded over several lines is written on
   * one (its members and `canonical_bytes` unchanged). Reports under a
   * `metadata` publication: auditor and admin keys only (403
   * `canonical_bytes_withheld`). An unknown job answers no lines.
   */
  @Get('api/jobs/:job_id/outcomes')
  @PublicRead(1)
  @ApiOperation({ operationId: 'exportJobOutcomes', summary: 'The outcome reports naming a job, as recorded, NDJSON in ledger order (for aer1 coverage --outcomes)' })
  @ApiResponse({ status: 200, description: 'one outcome report per line, in ledger order', content: { 'application/x-ndjson': { schema: { type: 'string', description: 'one OutcomeReport per line (LF-terminated)' } } } })
  @ApiErrors([401, 403, 429], { 403: '`canonical_bytes_withheld`: a report under a `metadata` publication, and no auditor or admin key.' })
  async export(@Param('job_id') jobId: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    const rows = await this.outcomes.exportJob(jobId);
    if (rows.some((r) => r.publication === 'metadata') && !mayReadWithheld(viewer)) {
      throw new LedgerError(403, 'canonical_bytes_withheld', 'some outcome reports of this job are published as metadata only: their canonical bytes are served to auditor and admin keys');
    }
    vary(res, 'Authorization');
    res.status(200).type('application/x-ndjson');
    // Erased reports (issue 29) have no document left: they are not lines of the export.
    res.send(Buffer.from(rows.filter((r) => !isErasedRaw(r.raw)).map((r) => (/[\r\n]/.test(r.raw) ? JSON.stringify(JSON.parse(r.raw)) : r.raw) + '\n').join(''), 'utf8'));
  }
}
