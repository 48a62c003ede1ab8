import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors } from '../common/openapi';
import { HeavyRead, JOB_VERIFY_COST, PublicRead, VerifyRateLimit } from '../common/rate-limit';
import { BadgesService, RenderedBadge } from './badges.service';

/** Badges are re-checked after this many seconds (a correction or a new commitment changes a verdict). */
export const BADGE_MAX_AGE_SECONDS = 60;

const SVG_ANSWER = { status: 200, description: 'the badge (SVG); `ETag` and `Cache-Control: public, max-age=60`; 304 when `If-None-Match` names the current tag', content: { 'image/svg+xml': { schema: { type: 'string' } } } };

/**
 * Verify badges for embedding (agent platforms' UIs, READMEs): the verdict
 * of the record re-verified now, green only when it verifies fully and is
 * current (src/core/badge.ts), and the signed checkpoint's size when there
 * is one. Public reads under the public read rate limit, like the pages.
 */
@ApiTags('public pages')
@Controller('badge')
export class BadgesController {
  constructor(private readonly badges: BadgesService) {}

  @Get('receipt/:id.svg')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'getReceiptBadge', summary: 'Verify badge of a receipt (SVG): verified, superseded, failed' })
  @ApiProduces('image/svg+xml')
  @ApiResponse(SVG_ANSWER)
  @ApiErrors([404, 429])
  async receipt(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    send(req, res, await this.badges.receipt(id));
  }

  @Get('job/:job_id.svg')
  @PublicRead(JOB_VERIFY_COST)
  @HeavyRead()
  @ApiOperation({ operationId: 'getJobBadge', summary: 'Verify badge of a job timeline (SVG): its assessment as verifyJob answers it' })
  @ApiProduces('image/svg+xml')
  @ApiResponse(SVG_ANSWER)
  @ApiErrors([404, 429])
  async job(@Param('job_id') jobId: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    send(req, res, await this.badges.job(jobId));
  }

  @Get('workflow/:workflow_id.svg')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'getWorkflowBadge', summary: 'Verify badge of a workflow receipt (SVG): verified, incomplete, failed' })
  @ApiProduces('image/svg+xml')
  @ApiResponse(SVG_ANSWER)
  @ApiErrors([404, 429])
  async workflow(@Param('workflow_id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    send(req, res, await this.badges.workflow(id));
  }
}

function send(req: FastifyRequest, res: FastifyReply, b: RenderedBadge): void {
  res.header('ETag', b.etag);
  res.header('Cache-Control', `public, max-age=${BADGE_MAX_AGE_SECONDS}`);
  res.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  res.header('X-Content-Type-Options', 'nosniff');
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === b.etag || t.trim() === `W/${b.etag}`)) {
    res.status(304).send();
    return;
  }
  res.status(200).type('image/svg+xml; charset=utf-8').send(b.svg);
}
