import { Controller, Get, Logger, Param, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { takeOver } from '../common/http';
import type { Principal } from '../auth/api-keys.service';
import { Caller } from '../auth/caller.decorator';
import { Roles } from '../auth/roles.guard';
import { ApiErrors, ref } from '../common/openapi';
import { EVIDENCE_PACK_COST, HeavyRead, PublicRead } from '../common/rate-limit';
import { PACK_FORMAT, PackSubjectKind } from '../core/pack/format';
import { EvidenceService } from './evidence.service';

/** The media type of an evidence pack (JSON Lines). */
export const PACK_MEDIA_TYPE = 'application/jsonl; charset=utf-8';

const PACK_DESCRIPTION = `${PACK_FORMAT}: JSON Lines, one member a line (header, log/vkey, log/checkpoint, log/timestamp?, plan/*, event/*, entry/*, commitment/*, receipt/*, workflow/*, outcome/*, report/*), a manifest/<n> chunk of SHA-256s every 1000 members and a final manifest line (docs/evidence-pack.md). Check it offline with aer1 verify-pack FILE --vkey VKEY.`;

const PACK_404 = '`not_found`: no such subject.';
const PACK_503 =
  '`no_checkpoint`: the subject is not yet under a signed (and, with WITNESSES, cosigned) checkpoint after waiting PACK_CHECKPOINT_WAIT_MS for it (a record written a moment ago is covered at the signer\'s next run); retry after Retry-After. `log_unavailable`: this deployment signs no checkpoints, or its checkpoint signing is stopped (answered at once, with `reason_code`; see /health).';

/**
 * Evidence packs over HTTP (issue 16): one download per job, workflow or
 * coverage report, streamed as it is read (never built in memory). Keys of
 * role auditor or compliance (admin too); 401 without a key, 403 for other roles.
 * A heavy read (HEAVY_READ_CONCURRENCY: 429 `server_busy` beyond), whose
 * slot is held while it waits for the checkpoint that covers its subject.
 */
@ApiTags('evidence')
@Controller()
export class EvidenceController {
  private readonly logger = new Logger(EvidenceController.name);

  constructor(private readonly evidence: EvidenceService) {}

  /** The evidence pack of a job: its plan versions, timeline entries, commitments, receipts, coverage reports, each event's leaf and inclusion proof. */
  @Get('api/jobs/:id/evidence')
  @Roles('auditor', 'compliance')
  @PublicRead(EVIDENCE_PACK_COST)
  @HeavyRead()
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getJobEvidencePack', summary: 'Evidence pack of a job (JSON Lines, for aer1 verify-pack)' })
  @ApiParam({ name: 'id', description: 'the job id' })
  @ApiProduces('application/jsonl')
  @ApiResponse({ status: 200, description: PACK_DESCRIPTION, content: { 'application/jsonl': { schema: ref('EvidencePackMember') } } })
  @ApiErrors([400, 401, 403, 404, 429, 503], { 404: PACK_404, 503: PACK_503 })
  job(@Param('id') id: string, @Caller() caller: Principal, @Res() res: FastifyReply): Promise<void> {
    return this.send('job', id, caller, res);
  }

  /** The evidence pack of a workflow receipt: its records, step receipts, plan and reports. */
  @Get('api/workflows/:id/evidence')
  @Roles('auditor', 'compliance')
  @PublicRead(EVIDENCE_PACK_COST)
  @HeavyRead()
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getWorkflowEvidencePack', summary: 'Evidence pack of a workflow (JSON Lines, for aer1 verify-pack)' })
  @ApiParam({ name: 'id', description: 'the workflow id (UUID)' })
  @ApiProduces('application/jsonl')
  @ApiResponse({ status: 200, description: PACK_DESCRIPTION, content: { 'application/jsonl': { schema: ref('EvidencePackMember') } } })
  @ApiErrors([401, 403, 404, 429, 503], { 404: PACK_404, 503: PACK_503 })
  workflow(@Param('id') id: string, @Caller() caller: Principal, @Res() res: FastifyReply): Promise<void> {
    return this.send('workflow', id, caller, res);
  }

  /** The evidence pack of a coverage report: the report and every record it was computed from. */
  @Get('api/coverage-reports/:id/evidence')
  @Roles('auditor', 'compliance')
  @PublicRead(EVIDENCE_PACK_COST)
  @HeavyRead()
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getCoverageReportEvidencePack', summary: 'Evidence pack of a coverage report (JSON Lines, for aer1 verify-pack)' })
  @ApiParam({ name: 'id', description: 'the report id (UUID)' })
  @ApiProduces('application/jsonl')
  @ApiResponse({ status: 200, description: PACK_DESCRIPTION, content: { 'application/jsonl': { schema: ref('EvidencePackMember') } } })
  @ApiErrors([401, 403, 404, 429, 503], { 404: PACK_404, 503: PACK_503 })
  report(@Param('id') id: string, @Caller() caller: Principal, @Res() res: FastifyReply): Promise<void> {
    return this.send('coverage_report', id, caller, res);
  }

  /**
   * Resolve (errors answer as JSON before any byte), then write chunk by
   * chunk, waiting for the socket to drain. An error after the first byte
   * cuts the response: the pack then has no final manifest, which
   * verify-pack reports as truncated.
   */
  private async send(kind: PackSubjectKind, id: string, caller: Principal, reply: FastifyReply): Promise<void> {
    // The client leaving ends a wait for the checkpoint (the slot it holds comes back).
    const left = new AbortController();
    const abort = (): void => left.abort();
    reply.raw.once('close', abort);
    let opened;
    try {
      opened = await this.evidence.open(kind, id, caller, left.signal);
    } finally {
      reply.raw.off('close', abort);
    }
    const { filename, chunks } = opened;
    reply.status(200).type(PACK_MEDIA_TYPE);
    reply.header('Content-Disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
    reply.header('Cache-Control', 'no-store');
    const res = takeOver(reply);
    try {
      for await (const chunk of chunks) {
        if (res.destroyed) {
          await chunks.return(undefined);
          return;
        }
        if (chunk.length === 0) continue;
        if (!res.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              res.off('drain', done).off('close', done);
              resolve();
            };
            res.on('drain', done).on('close', done);
          });
        }
      }
      res.end();
    } catch (e) {
      this.logger.error(`evidence pack of ${kind} ${id} cut after the first byte: ${(e as Error).message}`);
      res.destroy(e as Error);
    }
  }
}
