import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTML, acceptsType } from '../common/http';
import { Roles } from '../auth/roles.guard';
import { JsonBody } from '../common/json-body.decorator';
import { HeavyRead, KeyQuota, PublicRead, REPORT_PDF_COST, REPORT_READ_COST } from '../common/rate-limit';
import { CheckpointLocator } from '../log/checkpoint-locator';
import { RawJson } from '../common/raw-json';
import { renderCoveragePage } from './coverage.page';
import { renderErasedCoveragePage } from './erased-report.page';
import { ERASED_STATUS } from '../erasure/erased-records';
import { notFoundPage, projectionMismatchPage } from '../public-pages/views';
import { BadInputError, LedgerError, ProjectionMismatchError } from '../common/errors';
import { isUuid } from '../core/aer1';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { LogService } from '../log/log.service';
import { CoverageService } from './coverage.service';
import { ApiAnswer, ApiCreated, ApiCursor, ApiErrors, ApiJsonBody, ref, WRITE_ERRORS } from '../common/openapi';
import { parsePage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { CoverageListing } from './coverage.listing';
import { PdfRenderer } from './pdf-renderer';

/** Resolves on a later turn of the event loop (after pending I/O callbacks). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

@ApiTags('coverage')
@Controller()
export class CoverageController {
  constructor(
    private readonly coverage: CoverageService,
    private readonly quota: KeyQuota,
    private readonly listing: CoverageListing,
    private readonly urls: PublicUrls,
    private readonly log: LogService,
    private readonly checkpoints: CheckpointLocator,
    private readonly pdfs: PdfRenderer,
  ) {}

  /**
   * Reconcile a job's timeline (or a workflow) against its plan as of a
   * ledger position (default: the head) and record the report.
   * 201 `{report_id, url, digest, as_of_position, result}` with `Location`
   * (the report as JSON).
   */
  @Post('api/coverage-reports')
  @Roles('auditor')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'issueCoverageReport', summary: 'Issue a coverage report as of a ledger position' })
  @ApiJsonBody('CoverageRequest')
  @ApiCreated('CoverageIssued', 'issued and recorded')
  @ApiErrors([...WRITE_ERRORS, 429], { 422: '`no_plan`, `plan_erased`, `position_beyond_head`.', 429: '`quota_exceeded`: REPORT_QUOTA_PER_HOUR reports per key per hour.' })
  async issue(@JsonBody() body: RawJson, @Caller() caller: Principal, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply) {
    await this.quota.spend(req, 'coverage_reports');
    const r = await this.coverage.issue(body, caller);
    res.status(201).header('Location', this.urls.coverageReport(r.report_id));
    return r;
  }

  /** A recorded report (JSON) with its digest recomputed; an erased one (issue 29) with `erased: true`, `report` and `digest` null and the erasure. */
  @Get('api/coverage-reports/:report_id')
  @PublicRead(REPORT_READ_COST)
  @ApiOperation({ operationId: 'getCoverageReport', summary: 'A coverage report as JSON' })
  @ApiAnswer(200, 'CoverageReport', 'the report with its digest recomputed')
  @ApiErrors([404, 409, 429], { 409: 'projection_mismatch: the record does not match its ledger event and is not shown' })
  async get(@Param('report_id') id: string) {
    const r = await this.coverage.get(id);
    return { ...r, log: await this.log.locate(Number(r.position), this.urls.path(`/api/coverage-reports/${r.report_id}/proof`)) };
  }

  /**
   * The report as a PDF (src/coverage/coverage.pdf.ts, drawn on a worker
   * thread: pdf-renderer.ts): attestation, the
   * picture, every action's status with its evidence, the digest, the
   * signed checkpoint (or "not yet proven against a signed checkpoint") and
   * the public URL. Declared before `coverage/:report_id` so `.pdf` is not
   * read as part of the id.
   */
  @Get('coverage/:report_id.pdf')
  @PublicRead(REPORT_PDF_COST)
  @HeavyRead()
  @ApiOperation({ operationId: 'getCoveragePdf', summary: 'A coverage report as a PDF' })
  @ApiProduces('application/pdf')
  @ApiResponse({ status: 200, description: 'the report as a PDF (inline, filename coverage-{id}.pdf)', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors([404, 410, 429], { 410: '`content_erased`: the report\'s content was erased (issue 29); `erasure` names who, when, why and on which basis.', 429: 'also `server_busy`: HEAVY_READ_CONCURRENCY heavy reads are running.' })
  async pdf(@Param('report_id') id: string, @Res() res: FastifyReply): Promise<void> {
    // Reading the report (its digest recomputed) and its proof (the event hashed) take tens of ms each for a large
    // plan: a turn of the event loop between them lets /health and cheap reads in; the drawing runs on a thread.
    const r = await this.coverage.get(id);
    // Issue 29: an erased report has no content to draw; 410 names the erasure.
    if (r.report === null) throw new LedgerError(ERASED_STATUS, 'content_erased', `${r.statement}`, { erasure: r.erasure });
    await nextTurn();
    const checkpoint = await this.checkpoints.locate({ kind: 'coverage_report', id: r.report_id, position: r.position });
    await nextTurn();
    const bytes = await this.pdfs.render({ report: r.report, digest: r.digest, digest_verified: r.digest_verified, report_id: r.report_id, issued_at: r.issued_at, url: r.url, position: r.position, checkpoint, evidence_erased_since: r.evidence_erased_since ?? null });
    res.header('Content-Disposition', `inline; filename="coverage-${r.report_id}.pdf"`);
    res.header('X-Content-Type-Options', 'nosniff');
    res.status(200).type('application/pdf').send(bytes);
  }

  /** The public page of a report: HTML, or JSON with `Accept: application/json`. */
  @Get('coverage/:report_id')
  @PublicRead(REPORT_READ_COST)
  @ApiOperation({ operationId: 'getCoveragePage', summary: 'Public page of a coverage report (HTML, or JSON by Accept)' })
  @ApiProduces('text/html', 'application/json')
  @ApiResponse({ status: 200, description: 'the page (HTML), or the report (JSON by Accept)', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ref('CoverageReport') } } })
  @ApiErrors([404, 409, 429], { 409: 'projection_mismatch: the record does not match its ledger event and is not shown' })
  async page(@Param('report_id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    let r;
    try {
      r = await this.coverage.get(id);
    } catch (e) {
      // An HTML reader gets an honest page (not found, or not shown); JSON readers the error body (the exception filter).
      const notFound = e instanceof LedgerError && e.status === 404;
      if (!(notFound || e instanceof ProjectionMismatchError) || acceptsType(req, ['text/html', 'application/json']) === 'application/json') throw e;
      res.header('Vary', 'Accept');
      res.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      res.header('X-Content-Type-Options', 'nosniff');
      if (e instanceof ProjectionMismatchError) res.status(409).type(HTML).send(projectionMismatchPage({ message: e.message, table: e.table, position: e.position }));
      else res.status(404).type(HTML).send(notFoundPage((e as LedgerError).message));
      return;
    }
    res.header('Vary', 'Accept');
    if (acceptsType(req, ['text/html', 'application/json']) === 'application/json') {
      res.status(200).send(r);
      return;
    }
    res.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.header('X-Content-Type-Options', 'nosniff');
    const checkpoint = await this.checkpoints.locate({ kind: 'coverage_report', id: r.report_id, position: r.position });
    res.status(200).type(HTML).send(r.report === null ? renderErasedCoveragePage(r, checkpoint) : renderCoveragePage(r, checkpoint));
  }

  /**
   * Coverage reports in ledger order, paged by cursor, without their content
   * (read one with getCoverageReport); `?job_id=` or `?workflow_id=` (a UUID):
   * only that subject's reports. Public, like the reports. 400 `invalid_query`
   * for both filters at once or a workflow id that is not a UUID.
   */
  @Get('api/coverage-reports')
  @PublicRead(REPORT_READ_COST)
  @ApiOperation({ operationId: 'listCoverageReports', summary: 'List coverage reports, oldest first (all, or one job\'s or workflow\'s)' })
  @ApiQuery({ name: 'job_id', required: false, description: 'only the reports on this job' })
  @ApiQuery({ name: 'workflow_id', required: false, description: 'only the reports on this workflow (a UUID)' })
  @ApiCursor()
  @ApiAnswer(200, 'CoverageReportPage', 'a page; `next` is the cursor of the following page')
  @ApiErrors([400, 429])
  async list(@Query('after') after?: string, @Query('limit') limit?: string, @Query('job_id') jobId?: string, @Query('workflow_id') workflowId?: string) {
    if (jobId !== undefined && workflowId !== undefined) throw new BadInputError('invalid_query', 'give job_id or workflow_id, not both');
    if (jobId !== undefined && jobId === '') throw new BadInputError('invalid_query', 'job_id is empty');
    if (workflowId !== undefined && !isUuid(workflowId)) throw new BadInputError('invalid_query', 'workflow_id must be a UUID');
    const subject = jobId !== undefined ? { kind: 'job' as const, id: jobId } : workflowId !== undefined ? { kind: 'workflow' as const, id: workflowId.toLowerCase() } : undefined;
    return this.listing.reports(parsePage(after, limit), subject);
  }
}
