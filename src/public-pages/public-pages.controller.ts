import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ref } from '../common/openapi';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTML, acceptsType, vary } from '../common/http';
import { BadInputError, LedgerError, ProjectionMismatchError } from '../common/errors';
import { HeavyRead, JOB_VERIFY_COST, PublicRead, VerifyRateLimit } from '../common/rate-limit';
import { PublicPagesService } from './public-pages.service';
import { ApiKeysService } from '../auth/api-keys.service';
import { DEFAULT_PAGE_ENTRIES, MAX_PAGE_ENTRIES } from './timeline-view';
import { indexPage, notFoundPage, outcomePage, projectionMismatchPage, receiptPage, workflowPage } from './views';
import { timelinePage } from './timeline-page';

/** No scripts, no external resources: only the inline stylesheet. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Public pages (S9): server-rendered HTML for people, the same data as JSON
 * when `Accept` prefers application/json. No key needed. Unknown records are
 * 404 (an HTML page, or `{error: 'not_found'}` for JSON clients).
 */
@ApiTags('public pages')
@Controller()
export class PublicPagesController {
  constructor(
    private readonly pages: PublicPagesService,
    private readonly keys: ApiKeysService,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'getIndex', summary: 'What this service is' })
  @ApiResponse({ status: 200, description: 'HTML, or JSON with Accept: application/json', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ref('Page') } } })
  @ApiProduces('text/html', 'application/json')
  index(@Req() req: FastifyRequest, @Res() res: FastifyReply): void {
    send(req, res, 200, { service: 'AER-1 audit ledger', docs: '/docs', pages: ['/run/{id}', '/jobs/{job_id}', '/workflow/{workflow_id}', '/outcome/{id}'] }, indexPage);
  }

  /** Receipt page: fields, provenance, verification re-run now, chain positions, "Part of workflow", corrections, raw JSON. */
  @Get('run/:id')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'getReceiptPage', summary: 'Public receipt page (S9, S8.3)' })
  @ApiProduces('text/html', 'application/json')
  @ApiResponse({ status: 200, description: 'HTML, or the page data as JSON with Accept: application/json', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ref('Page') } } })
  @ApiErrors([404, 409, 429], { 409: 'projection_mismatch: the record does not match its ledger event and is not shown' })
  async receipt(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    // An auditor's key (optional) is served canonical bytes a `metadata` publication withholds.
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    await render(req, res, () => this.pages.receipt(id, viewer), receiptPage);
  }

  /**
   * Outcome page (issue 18): what the owning system observed, the output
   * commitment re-verified now, who reported it, the receipt it answers and
   * the other outcomes of that receipt (newest first, supersession shown).
   */
  @Get('outcome/:id')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'getOutcomePage', summary: 'Public outcome page (issue 18)' })
  @ApiProduces('text/html', 'application/json')
  @ApiResponse({ status: 200, description: 'HTML, or the page data as JSON with Accept: application/json', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ref('Page') } } })
  @ApiErrors([404, 429])
  async outcome(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    await render(req, res, () => this.pages.outcome(id, viewer), outcomePage);
  }

  /** Job timeline page: chain verdict, endpoint-commitment status, entries. */
  @Get('jobs/:job_id')
  @PublicRead(JOB_VERIFY_COST)
  @HeavyRead()
  @ApiOperation({ operationId: 'getJobPage', summary: 'Public job timeline page (S7, S7.3)' })
  @ApiProduces('text/html', 'application/json')
  @ApiResponse({ status: 200, description: 'HTML, or the page data as JSON with Accept: application/json', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ref('Page') } } })
  @ApiErrors([400, 404, 429])
  @ApiQuery({ name: 'after', required: false, description: 'show entries with seq greater than this (default 0)' })
  @ApiQuery({ name: 'limit', required: false, description: `entries per page (default ${DEFAULT_PAGE_ENTRIES}, at most ${MAX_PAGE_ENTRIES})` })
  async job(@Param('job_id') jobId: string, @Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('after') after?: string, @Query('limit') limit?: string): Promise<void> {
    const range = { after: queryInt('after', after, 0, Number.MAX_SAFE_INTEGER), limit: queryInt('limit', limit, DEFAULT_PAGE_ENTRIES, MAX_PAGE_ENTRIES, 1) };
    await render(req, res, () => this.pages.timeline(jobId, range), timelinePage);
  }

  /** Workflow page: goal, Merkle root declared vs recomputed, output hash, steps linking to their receipts. */
  @Get('workflow/:workflow_id')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'getWorkflowPage', summary: 'Public workflow page (S8, S8.3)' })
  @ApiProduces('text/html', 'application/json')
  @ApiResponse({ status: 200, description: 'HTML, or the page data as JSON with Accept: application/json', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ref('Page') } } })
  @ApiErrors([404, 409, 429], { 409: 'projection_mismatch: the record does not match its ledger event and is not shown' })
  async workflow(@Param('workflow_id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    await render(req, res, () => this.pages.workflow(id), workflowPage);
  }
}

/** A non-negative integer query parameter in [min, max], `def` when absent; 400 `invalid_query` otherwise. */
function queryInt(name: string, value: string | undefined, def: number, max: number, min = 0): number {
  if (value === undefined || value === '') return def;
  const n = Number(value);
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) throw new BadInputError('invalid_query', `${name} must be an integer from ${min} to ${max}`);
  return n;
}

function wantsJson(req: FastifyRequest): boolean {
  return acceptsType(req, ['html', 'json']) === 'json';
}

function send<T>(req: FastifyRequest, res: FastifyReply, status: number, data: T, page: (d: T) => string): void {
  vary(res, 'Accept');
  if (wantsJson(req)) {
    res.status(status).send(data);
    return;
  }
  res.status(status).header('Content-Security-Policy', CSP);
  res.header('X-Content-Type-Options', 'nosniff');
  res.type(HTML).send(page(data));
}

async function render<T>(req: FastifyRequest, res: FastifyReply, load: () => Promise<T>, page: (d: T) => string): Promise<void> {
  let data: T;
  try {
    data = await load();
  } catch (e) {
    if (e instanceof LedgerError && e.status === 404) {
      send(req, res, 404, { error: 'not_found', message: e.message }, (d) => notFoundPage(d.message));
      return;
    }
    if (e instanceof ProjectionMismatchError) {
      send(req, res, 409, { error: e.code, message: e.message, ...e.details }, () => projectionMismatchPage({ message: e.message, table: e.table, position: e.position }));
      return;
    }
    throw e;
  }
  send(req, res, 200, data, page);
}
