import { ERASED_STATUS } from '../erasure/erased-records';
import { Controller, Get, Param, Post, Put, Query, Res, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { vary, takeOver } from '../common/http';
import { Roles } from '../auth/roles.guard';
import { Caller } from '../auth/caller.decorator';
import { ApiKeysService, Principal } from '../auth/api-keys.service';
import { BadInputError } from '../common/errors';
import { JsonBody, RawBody } from '../common/json-body.decorator';
import { ApiAnswer, ApiBodyContent, ApiCreated, ApiCursor, ApiErrors, ApiJsonBody, ref, WRITE_ERRORS } from '../common/openapi';
import { parsePage } from '../common/pagination';
import { HeavyRead, JOB_VERIFY_COST, PublicRead } from '../common/rate-limit';
import { parseNdjsonRequest, parseRequestJson, RawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { TimelinesListing } from './timelines.listing';
import { LogService } from '../log/log.service';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { CommitmentsService } from './commitments.service';
import { TimelineVerificationService } from './timeline-verification.service';
import { TimelinesService } from './timelines.service';

/** Media types read as NDJSON by `PUT /api/jobs/{id}/timeline` (one entry per line, as `aer1 generate timeline` writes). */
const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonl'];

@ApiTags('timelines')
@Controller('api/jobs/:job_id')
export class TimelinesController {
  constructor(
    private readonly timelines: TimelinesService,
    private readonly commitments: CommitmentsService,
    private readonly verification: TimelineVerificationService,
    private readonly keys: ApiKeysService,
    private readonly urls: PublicUrls,
    private readonly log: LogService,
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
  ) {}

  /**
   * Append one chain entry or an array of entries (S7.2): each must extend
   * the current head. 201 `{job_id, appended, head, url, verify_url}` with
   * `Location` (the stored timeline).
   */
  @Post('entries')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'appendEntries', summary: 'Append chain entries to a job timeline (each must extend the head)' })
  @ApiJsonBody({ oneOf: [ref('ChainEntry'), { type: 'array', items: ref('ChainEntry') }] }, 'One S7 chain entry or an array of entries')
  @ApiCreated('EntriesAppended', 'appended')
  @ApiErrors([...WRITE_ERRORS, 409], {
    409: '`seq_not_contiguous`, `link_mismatch`, `genesis_prev_digest`, `timeline_closed`, `timeline_imported` (`reasons` holds the same code).',
    422: '`verification_failed` (malformed entry), `job_id_mismatch`, `reserved_tool` (the tool `aer1.job.close` is the ledger\'s closing marker), `malformed_array`, `no_entries`.',
  })
  async append(@Param('job_id') jobId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const r = await this.timelines.append(jobId, body, caller);
    res.status(201).header('Location', this.urls.jobTimeline(jobId));
    return r;
  }

  /**
   * Import a complete timeline recorded elsewhere: a JSON array, or NDJSON
   * (`Content-Type: application/x-ndjson`, one entry per line, as `aer1
   * generate timeline` writes; each line's exact text is the entry's text).
   * `valid` and `historical` (-06, labeled) are stored with their verdict;
   * `invalid` is 422. 201 created (with `Location`), 200 the same body
   * again, 409 `timeline_exists`.
   */
  @Put('timeline')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'importTimeline', summary: 'Import a complete timeline, JSON array or NDJSON (verified; -06 timelines stored labeled historical)' })
  @ApiBodyContent('importTimeline', 'The whole timeline: a JSON array of chain entries, or NDJSON (one entry per line).', {
    'application/json': { schema: { type: 'array', items: ref('ChainEntry') } },
    'application/x-ndjson': { schema: { type: 'string', description: 'one ChainEntry per line (UTF-8, LF or CRLF; blank lines skipped)' } },
  })
  @ApiCreated('TimelineImported', 'imported')
  @ApiAnswer(200, 'TimelineImported', 'the same body was already imported')
  @ApiErrors([...WRITE_ERRORS, 409], { 409: '`timeline_exists`.', 422: '`verification_failed` with `reasons`, `job_id_mismatch`, `reserved_tool`, `malformed_array`.' })
  async import(@Param('job_id') jobId: string, @RawBody() bytes: Buffer, @Req() req: FastifyRequest, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const body = NDJSON_TYPES.includes(type) ? parseNdjsonRequest(bytes) : parseRequestJson(bytes);
    const { outcome, ...r } = await this.timelines.import(jobId, body, caller);
    if (outcome === 'created') res.status(201).header('Location', this.urls.jobTimeline(jobId));
    else res.status(200);
    return r;
  }

  /**
   * Record an external endpoint commitment (rev 09) with its witness
   * metadata, compared with the visible timeline now. Non-binding
   * commitments are recorded too. The body is the commitment itself
   * (recorded `self_asserted`: its witness metadata is the poster's claim),
   * or `{"attestation": "<signed note>"}` signed by a key in
   * TRUSTED_COMMITMENT_KEYS (recorded `attested_by` that key). 422
   * `invalid_commitment`, `invalid_attestation`,
   * `attestation_signature_invalid`, `attestation_key_untrusted`.
   */
  @Post('commitments')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'recordCommitment', summary: 'Record an endpoint commitment {job_id, final_entry_digest, entry_count, published_at} with witness metadata' })
  @ApiJsonBody({ oneOf: [ref('EndpointCommitment'), ref('AttestedCommitment')] }, 'The commitment (self-asserted), or {"attestation": signed note} (attested by a trusted key)')
  @ApiCreated('CommitmentRecorded', 'recorded (binding or not); the answer also judges every commitment of the job together (commitment_assessment, truncation_excluded, findings)')
  @ApiAnswer(200, 'CommitmentRecorded', 'the same commitment text (and attestation) was already recorded for this job')
  @ApiErrors(WRITE_ERRORS, { 422: '`invalid_commitment` (with `problems`); `invalid_attestation`, `attestation_signature_invalid`, `attestation_key_untrusted` (nothing written).' })
  async commit(@Param('job_id') jobId: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const { outcome, ...r } = await this.commitments.recordCommitment(jobId, body, caller);
    if (outcome === 'created') res.status(201).header('Location', this.urls.jobTimeline(jobId));
    else res.status(200);
    return r;
  }

  /** The timeline summary and its entries in order (from the stored texts, digests recomputed). */
  @Get('timeline')
  @ApiOperation({ operationId: 'getJobTimeline', summary: 'A job timeline: summary and entries in order' })
  @ApiQuery({ name: 'after', required: false, schema: { type: 'integer', minimum: 0 }, description: 'return entries with seq greater than this' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 10000 }, description: 'at most this many entries (default 1000, max 10000)' })
  @ApiAnswer(200, 'Timeline', 'the timeline and a page of its entries')
  @ApiErrors([400, 401, 404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async timeline(@Param('job_id') jobId: string, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply, @Query('after') after?: string, @Query('limit') limit?: string) {
    const a = after === undefined ? 0 : Number(after);
    const l = limit === undefined ? 1000 : Number(limit);
    if (!Number.isSafeInteger(a) || a < 0 || !Number.isSafeInteger(l) || l < 1 || l > 10_000) {
      throw new BadInputError('invalid_query', 'after must be a non-negative integer and limit an integer from 1 to 10000');
    }
    // An auditor's key (optional) is served canonical bytes a `metadata` publication withholds.
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    vary(res, 'Authorization');
    return this.timelines.timeline(jobId, a, l, viewer);
  }

  /**
   * Export: the entries exactly as recorded, one per line
   * (`application/x-ndjson`), what `aer1 verify --kind chain` and
   * `aer1 coverage --timeline` read as is. A timeline with entries under a
   * `metadata` publication: auditor and admin keys only (403
   * `canonical_bytes_withheld`). 404 `not_found`.
   */
  @Get('export')
  @PublicRead(JOB_VERIFY_COST)
  @HeavyRead()
  @ApiOperation({ operationId: 'exportJobTimeline', summary: 'The timeline entries as recorded, NDJSON (for aer1 verify --kind chain)' })
  @ApiResponse({ status: 200, description: 'one recorded entry per line, in seq order', content: { 'application/x-ndjson': { schema: { type: 'string', description: 'one ChainEntry per line, as recorded (LF-terminated)' } } } })
  @ApiErrors([401, 403, 404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.', 403: '`canonical_bytes_withheld`: entries under a `metadata` publication, and no auditor or admin key.' })
  async export(@Param('job_id') jobId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    const lines = await this.timelines.exportLines(jobId, viewer);
    vary(reply, 'Authorization');
    reply.status(200).type('application/x-ndjson');
    const res = takeOver(reply);
    for await (const line of lines) {
      if (res.destroyed) return; // the client went away
      if (!res.write(line)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done).off('close', done);
            resolve();
          };
          res.on('drain', done).on('close', done);
        });
      }
    }
    res.end();
  }

  /**
   * Re-verify the stored timeline (S7) and every endpoint commitment
   * recorded for it (rev 09), judged together: `truncation_excluded` only
   * when one binds and none contradicts (`commitments` lists each with its
   * outcome, `findings` each contradiction). It leads with `assessment`:
   * 200 only when it is `clean` (S6: a machine verifier answers success only
   * for what verified); 422 for `invalid`, `historical`, a contradicting
   * commitment, or a chain no commitment binds (`truncation_not_excluded`).
   * Entries erased (issue 29) and nothing failing: 410 Gone, assessment and
   * verdict `partly_erased`, `erased` naming the entries, the links that
   * cannot be re-checked and the erasures; a failing check still answers 422.
   */
  @Get('verify')
  @PublicRead(JOB_VERIFY_COST)
  @HeavyRead()
  @ApiOperation({ operationId: 'verifyJob', summary: 'Verify a job timeline and all its endpoint commitments (S7, S7.3)' })
  @ApiAnswer(200, 'TimelineVerification', 'the chain verifies')
  @ApiAnswer(422, 'TimelineVerification', 'the chain is invalid or historical')
  @ApiAnswer(ERASED_STATUS, 'TimelineVerification', 'entries were erased (issue 29): every link still checkable holds, the others cannot be re-checked (`partly_erased`)')
  @ApiErrors([404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async verify(@Param('job_id') jobId: string, @Res({ passthrough: true }) res: FastifyReply) {
    const r = await this.verification.verify(jobId);
    res.status(r.assessment === 'clean' ? 200 : r.assessment === 'partly_erased' ? ERASED_STATUS : 422);
    // The job's newest event in the verifiable log: its inclusion covers the chain linking every entry to the one before.
    const last = await this.events.lastPositionOf(this.db, streams.timeline(jobId));
    return { ...r, ...(last === null ? {} : { log: await this.log.locate(last, this.urls.path(`/api/ledger/events/${last}/proof`)) }) };
  }

  /**
   * The endpoint `{job_id, final_entry_digest, entry_count, published_at}` of a closed, verifying job and the
   * commitment the ledger issued over it when it closed (`ledger_commitment`: the signed note, checkable with the
   * log's vkey), or null with the reason.
   */
  @Get('endpoint')
  @PublicRead(JOB_VERIFY_COST)
  @ApiOperation({ operationId: 'getJobEndpoint', summary: 'Endpoint of a closed job and the ledger-issued commitment over it (a signed note)' })
  @ApiAnswer(200, 'Endpoint', 'the endpoint')
  @ApiErrors([404, 409, 410, 429], { 409: '`timeline_not_closed`, `timeline_not_valid`, `projection_mismatch` (the record does not match its ledger event).', 410: '`content_erased`: entries of the job were erased; the endpoint can no longer be recomputed.' })
  async endpoint(@Param('job_id') jobId: string) {
    return this.verification.endpoint(jobId);
  }
}

/** `GET /api/jobs`: the collection of job timelines. */
@ApiTags('timelines')
@Controller('api/jobs')
export class JobsController {
  constructor(private readonly listing: TimelinesListing) {}

  /** Job timelines in ledger order (of their first event), paged by cursor; as recorded (re-verify with verifyJob). */
  @Get()
  @ApiOperation({ operationId: 'listJobs', summary: 'List job timelines, oldest first' })
  @ApiCursor()
  @ApiAnswer(200, 'JobPage', 'a page; `next` is the cursor of the following page')
  @ApiErrors([400, 429])
  async list(@Query('after') after?: string, @Query('limit') limit?: string) {
    return this.listing.list(parsePage(after, limit));
  }
}
