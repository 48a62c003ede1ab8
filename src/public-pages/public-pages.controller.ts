import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { LedgerError } from '../common/errors';
import { JOB_VERIFY_COST, PublicRead, VerifyRateLimit } from '../common/rate-limit';
import { PublicPagesService } from './public-pages.service';
import { indexPage, notFoundPage, receiptPage, timelinePage, workflowPage } from './views';

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
  constructor(private readonly pages: PublicPagesService) {}

  @Get()
  @ApiOperation({ summary: 'What this service is' })
  @ApiProduces('text/html', 'application/json')
  index(@Req() req: Request, @Res() res: Response): void {
    send(req, res, 200, { service: 'AER-1 audit ledger', docs: '/docs', pages: ['/run/{id}', '/jobs/{job_id}', '/workflow/{workflow_id}'] }, indexPage);
  }

  /** Receipt page: fields, provenance, verification re-run now, chain positions, "Part of workflow", corrections, raw JSON. */
  @Get('run/:id')
  @VerifyRateLimit()
  @ApiOperation({ summary: 'Public receipt page (S9, S8.3)' })
  @ApiProduces('text/html', 'application/json')
  async receipt(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await render(req, res, () => this.pages.receipt(id), receiptPage);
  }

  /** Job timeline page: chain verdict, endpoint-commitment status, entries. */
  @Get('jobs/:job_id')
  @PublicRead(JOB_VERIFY_COST)
  @ApiOperation({ summary: 'Public job timeline page (S7, S7.3)' })
  @ApiProduces('text/html', 'application/json')
  async job(@Param('job_id') jobId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await render(req, res, () => this.pages.timeline(jobId), timelinePage);
  }

  /** Workflow page: goal, Merkle root declared vs recomputed, output hash, steps linking to their receipts. */
  @Get('workflow/:workflow_id')
  @VerifyRateLimit()
  @ApiOperation({ summary: 'Public workflow page (S8, S8.3)' })
  @ApiProduces('text/html', 'application/json')
  async workflow(@Param('workflow_id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await render(req, res, () => this.pages.workflow(id), workflowPage);
  }
}

function wantsJson(req: Request): boolean {
  return req.accepts(['html', 'json']) === 'json';
}

function send<T>(req: Request, res: Response, status: number, data: T, page: (d: T) => string): void {
  res.vary('Accept');
  if (wantsJson(req)) {
    res.status(status).json(data);
    return;
  }
  res.status(status).setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.type('html').send(page(data));
}

async function render<T>(req: Request, res: Response, load: () => Promise<T>, page: (d: T) => string): Promise<void> {
  let data: T;
  try {
    data = await load();
  } catch (e) {
    if (e instanceof LedgerError && e.status === 404) {
      send(req, res, 404, { error: 'not_found', message: e.message }, (d) => notFoundPage(d.message));
      return;
    }
    throw e;
  }
  send(req, res, 200, data, page);
}
