import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Roles } from '../auth/roles.guard';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { LedgerError } from '../common/errors';
import { ApiAnswer, ApiBodyContent, ApiErrors, WRITE_ERRORS } from '../common/openapi';
import { PublicUrls } from '../common/urls';
import { decodeJson, decodeProtobuf, encodeResponse } from './otlp-decode';
import { ExportAnswer, OtlpService } from './otlp.service';

/** Rejections named one by one in the answer's message (the count covers all of them). */
export const NAMED_REJECTIONS = 20;

/**
 * OTLP/HTTP traces in (docs/otlp.md): `POST /v1/traces`, the path
 * OpenTelemetry exporters post to, and `POST /api/jobs/{id}/close`.
 */
@ApiTags('otlp')
@Controller()
export class OtlpController {
  constructor(
    private readonly otlp: OtlpService,
    private readonly urls: PublicUrls,
  ) {}

  /**
   * An OTLP `ExportTraceServiceRequest` (protobuf or JSON, gzip accepted):
   * 200 with an `ExportTraceServiceResponse` in the request's encoding,
   * `partial_success` when spans were refused or not recorded.
   */
  @Post('v1/traces')
  @HttpCode(200)
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'exportTraces', summary: 'OTLP/HTTP traces in: GenAI execute_tool spans become timeline entries (docs/otlp.md)' })
  @ApiBodyContent('exportTraces', 'An OTLP ExportTraceServiceRequest; Content-Encoding gzip accepted (the decompressed size counts against BODY_LIMIT_BYTES).', {
    'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
    'application/json': { schema: { type: 'object', description: 'OTLP/JSON ExportTraceServiceRequest' } },
  })
  @ApiAnswer(200, { type: 'object', description: 'OTLP ExportTraceServiceResponse (JSON form; protobuf for a protobuf request)' }, 'ExportTraceServiceResponse in the request\'s encoding; `partialSuccess.rejectedSpans` and `errorMessage` when spans were refused')
  @ApiErrors([...WRITE_ERRORS], {
    400: '`otlp_decode_failed` (not an ExportTraceServiceRequest), `otlp_attribute_type` (an attribute the ledger reads has another type).',
    413: '`too_many_spans` (more than 10,000 spans in one request).',
    415: '`unsupported_media_type`: only application/x-protobuf and application/json.',
  })
  async traces(@Req() req: FastifyRequest, @Caller() caller: Principal, @Res() res: FastifyReply): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/x-protobuf' && type !== 'application/json') {
      throw new LedgerError(415, 'unsupported_media_type', `Content-Type ${JSON.stringify(type)} is not taken here: send application/x-protobuf or application/json (OTLP/HTTP)`);
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const spans = type === 'application/json' ? decodeJson(body) : decodeProtobuf(body);
    const answer = await this.otlp.export(spans, caller);
    const rejected = answer.rejected.length;
    const message = summary(answer);
    if (type === 'application/x-protobuf') {
      res.status(200).type('application/x-protobuf').send(encodeResponse(rejected, message));
      return;
    }
    // OTLP/JSON: int64 as a decimal string; receivers of the answer ignore the `aer1` member (unknown fields).
    res.status(200).send({
      ...(rejected > 0 || message !== '' ? { partialSuccess: { rejectedSpans: String(rejected), errorMessage: message } } : {}),
      aer1: { recorded: answer.recorded, duplicates: answer.duplicates, not_recorded: answer.not_recorded, rejected: answer.rejected, jobs: answer.jobs },
    });
  }

  /**
   * Close an appended timeline: the ledger appends a closing entry (tool
   * `aer1.job.close`) and issues its endpoint commitment. 201.
   */
  @Post('api/jobs/:job_id/close')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'closeJob', summary: 'Close a job timeline with a ledger-written closing entry and the ledger endpoint commitment' })
  @ApiBodyContent('closeJob', 'No body is read.', { 'application/json': { schema: { type: 'object', description: 'empty; ignored' } } })
  @ApiAnswer(201, { type: 'object', description: '`{job_id, appended, head, ledger_commitment, url}`' }, 'the closing entry appended', { Location: 'the stored timeline' })
  @ApiErrors([...WRITE_ERRORS, 404, 409], { 403: '`not_owner`, `not_plan_owner`.', 409: '`timeline_closed`, `timeline_imported`.' })
  async close(@Param('job_id') jobId: string, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const r = await this.otlp.close(jobId, caller);
    res.status(201).header('Location', this.urls.jobTimeline(jobId));
    return r;
  }
}

/**
 * The answer's message: what was recorded, what was not recorded and every
 * refusal by reason, the first {@link NAMED_REJECTIONS} by span and job.
 * Empty when every span was recorded.
 */
export function summary(a: ExportAnswer): string {
  if (a.rejected.length === 0 && a.not_recorded === 0) return '';
  const parts = [`recorded ${a.recorded} span(s)${a.duplicates ? `, ${a.duplicates} already recorded` : ''}`];
  if (a.not_recorded > 0) parts.push(`${a.not_recorded} span(s) not recorded (not gen_ai.operation.name execute_tool, or a close of nothing)`);
  if (a.rejected.length > 0) {
    const by = new Map<string, number>();
    for (const r of a.rejected) by.set(r.reason, (by.get(r.reason) ?? 0) + 1);
    parts.push(`rejected ${a.rejected.length}: ${[...by].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    parts.push(...a.rejected.slice(0, NAMED_REJECTIONS).map((r) => `${r.reason}: ${r.message}`));
    if (a.rejected.length > NAMED_REJECTIONS) parts.push(`and ${a.rejected.length - NAMED_REJECTIONS} more`);
  }
  return parts.join('; ');
}
