import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublicRead, VerifyRateLimit } from '../common/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JSON_TYPE, vary } from '../common/http';
import { Roles } from '../auth/roles.guard';
import { Caller } from '../auth/caller.decorator';
import { ApiKeysService, Principal } from '../auth/api-keys.service';
import { JsonBody, RawBody } from '../common/json-body.decorator';
import { ApiAnswer, ApiBodyContent, ApiCreated, ApiCursor, ApiErrors, ApiJsonBody, markDeprecated, ref, WRITE_ERRORS } from '../common/openapi';
import { parsePage } from '../common/pagination';
import { RawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { isObject } from '../core/aer1';
import { ReceiptsListing } from './receipts.listing';
import { LogService } from '../log/log.service';
import { ReceiptAnchors } from '../log/receipt-anchors';
import { ReceiptsService } from './receipts.service';
import { ErasedRecords, ERASED_STATUS, isErasedRaw } from '../erasure/erased-records';

@ApiTags('receipts')
@Controller()
export class ReceiptsController {
  constructor(
    private readonly receipts: ReceiptsService,
    private readonly listing: ReceiptsListing,
    private readonly keys: ApiKeysService,
    private readonly urls: PublicUrls,
    private readonly log: LogService,
    private readonly erased: ErasedRecords,
    private readonly anchors: ReceiptAnchors,
  ) {}

  /**
   * Record a receipt (S3/S4, core or transport form, or a JSON-RPC
   * `tools/call` response carrying `result._receipt`), stored as received.
   * 201 `{id, url, verify_url, verdict}` with `Location` (the stored
   * record); 200 for the same bytes again; 409 `receipt_id_conflict`; 422
   * `verification_failed` with `reasons`.
   */
  @Post('api/receipts')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'recordReceipt', summary: 'Record a receipt (verified before anything is written)' })
  @ApiJsonBody('ReceiptDocument')
  @ApiCreated('ReceiptRecorded', 'recorded')
  @ApiAnswer(200, 'ReceiptRecorded', 'the same bytes were already recorded')
  @ApiErrors([...WRITE_ERRORS, 409], { 409: '`receipt_id_conflict`.', 422: '`verification_failed`, with `reasons` and the failing `checks`.', 403: '`not_owner`, `provenance_not_permitted`.' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const o = await this.receipts.ingest(body, caller);
    if (o.outcome === 'created') res.status(201).header('Location', this.urls.receiptRecord(o.id));
    else res.status(200);
    return o;
  }

  /** NDJSON, one receipt a line; answers per line `{line, status, ...}`. 200 with counts. */
  @Post('api/receipts/batch')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'recordReceiptBatch', summary: 'Record receipts in bulk from NDJSON; answered line by line' })
  @ApiBodyContent('recordReceiptBatch', 'NDJSON: one receipt document (ReceiptDocument) per line, UTF-8; blank lines are skipped.', {
    'application/x-ndjson': { schema: { type: 'string', description: 'one ReceiptDocument per line' } },
  })
  @ApiAnswer(200, 'ReceiptBatchAnswer', 'every line answered; recorded lines are in the ledger')
  @ApiErrors(WRITE_ERRORS, { 422: '`malformed_array` / `no_entries` when no line is usable.' })
  async batch(@RawBody() body: Buffer, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const r = await this.receipts.ingestBatch(body, caller);
    res.status(200);
    return r;
  }

  /** Record a correction that supersedes `id` (S9); the original is never altered. 201 with `Location`. */
  @Post('api/receipts/:id/corrections')
  @Roles('producer')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'recordCorrection', summary: 'Record a correcting receipt that supersedes an earlier one (S9)' })
  @ApiJsonBody('ReceiptDocument', 'The correcting receipt: a new AER-1 receipt with an id of its own; the original is named in the path')
  @ApiCreated('ReceiptRecorded', 'recorded; the original now links to it')
  @ApiAnswer(200, 'ReceiptRecorded', 'the same correction was already recorded')
  @ApiErrors([...WRITE_ERRORS, 404, 409], { 404: 'the original receipt is not recorded.', 409: '`already_superseded`, `correction_same_id`, `receipt_id_conflict`.', 422: '`verification_failed`, with `reasons`.' })
  async correct(@Param('id') id: string, @JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const o = await this.receipts.correct(id, body, caller);
    if (o.outcome === 'created') res.status(201).header('Location', this.urls.receiptRecord(o.id));
    else res.status(200);
    return o;
  }

  /** Receipt metadata in ledger order, paged by cursor (never canonical bytes). Public read (S13 budget). */
  @Get('api/receipts')
  @PublicRead(1)
  @ApiOperation({ operationId: 'listReceipts', summary: 'List recorded receipts (metadata only), oldest first' })
  @ApiCursor()
  @ApiAnswer(200, 'ReceiptPage', 'a page; `next` is the cursor of the following page')
  @ApiErrors([400, 429])
  async list(@Query('after') after?: string, @Query('limit') limit?: string) {
    return this.listing.list(parsePage(after, limit));
  }

  /**
   * Machine verifier (S6): the stored bytes re-verified now. 200 when the
   * stored record verifies, 422 when it does not, 404 when unknown. Rate
   * limited (S13); reveals nothing beyond the record.
   *
   * The receipt's own `status` and `verification_status` are answered
   * exactly as sent (absent when the receipt has none), never converted;
   * this ledger's result is `verdict`, `reasons` and `output_commitment`
   * `{matches, declared, computed}` (`matches` null when not evaluated).
   *
   * Erased content (issue 29): 410 Gone with `ErasedRecordVerification`,
   * `verdict: "erased"`, the verdict recorded at ingestion
   * (`recorded_verdict`), the erasure (who, when, why, basis, the
   * `PayloadsErased` event's position and log location) and the receipt's
   * own log location; no bytes, no output hash, nothing re-verified.
   */
  @Get('api/receipts/:id/verify')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'verifyReceipt', summary: 'Verify a stored receipt (S6)' })
  @ApiAnswer(200, 'ReceiptVerification', 'verdict valid')
  @ApiAnswer(422, 'ReceiptVerification', 'the stored record does not verify (verdict invalid)')
  @ApiAnswer(ERASED_STATUS, 'ErasedRecordVerification', 'the receipt\'s content was erased (issue 29): verdict `erased`, nothing re-verified, the verdict recorded at ingestion and the erasure')
  @ApiErrors([404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async verify(@Param('id') id: string, @Res({ passthrough: true }) res: FastifyReply) {
    const { row, result, receipt } = await this.receipts.verifyStored(id);
    if (isErasedRaw(row.raw)) {
      res.status(ERASED_STATUS);
      return this.erasedAnswer(row);
    }
    res.status(result.verdict === 'valid' ? 200 : 422);
    const own = (name: 'status' | 'verification_status') => (isObject(receipt) && Object.hasOwn(receipt, name) ? { [name]: receipt[name] } : {});
    const commitment = result.checks.find((c) => c.name === 'output_commitment');
    const declared = isObject(receipt) ? receipt.output_hash : undefined;
    const log = await this.log.locate(Number(row.position), this.urls.path(`/api/receipts/${row.id}/proof`));
    return {
      id: row.id,
      // The receipt's own claims, exactly as sent (absent when the receipt has none): never converted.
      ...own('status'),
      ...own('verification_status'),
      // This ledger's own result.
      verdict: result.verdict,
      output_commitment: {
        matches: commitment ? commitment.ok : null,
        declared: typeof declared === 'string' ? declared : null,
        computed: result.computed.output_hash,
      },
      reasons: result.reasons,
      output_hash: result.computed.output_hash,
      declared_output_hash: row.output_hash,
      provenance_class: result.provenance.class,
      provenance_meaning: result.provenance.meaning,
      form: result.form,
      checks: result.checks,
      limits: result.limits,
      superseded_by: row.superseded_by,
      recorded_by: await this.receipts.recordedBy(row),
      publication: row.publication,
      // Where the receipt's event sits in the verifiable log, its inclusion proof checked against the newest checkpoint.
      log,
      // With NOSTR_RELAYS: the Nostr anchors covering it (draft S10, issue 33); beside the verdict, never changing it.
      ...(this.anchors.enabled ? { anchors: await this.anchors.of(row.id, result.computed.output_hash ?? row.output_hash, log) } : {}),
      ...(row.publication === 'metadata'
        ? { statement: 'The canonical bytes are withheld from the public by the publication setting of the key that recorded this receipt (S13); this ledger recomputed the output commitment from the stored bytes, server-side.' }
        : {}),
    };
  }

  /** The 410 answer of an erased receipt (`ErasedRecordVerification`). */
  private async erasedAnswer(row: Awaited<ReturnType<ReceiptsService['get']>>) {
    const erasure = await this.erased.located(Number(row.position));
    return {
      id: row.id,
      verdict: 'erased' as const,
      recorded_verdict: row.verdict,
      recorded_reasons: JSON.parse(row.reasons) as string[],
      erasure,
      statement: `${erasure?.statement ?? 'Content erased'}. Nothing is re-verified: the canonical bytes and output hash are gone for good. The verdict recorded at ingestion was ${row.verdict}; the receipt's leaf (format 3: ids, type, key and time, no content) still proves it was recorded at position ${row.position}.`,
      reasons: [] as string[],
      checks: [] as unknown[],
      output_hash: null,
      declared_output_hash: null,
      provenance_class: row.provenance_class,
      tool: row.tool,
      superseded_by: row.superseded_by,
      recorded_by: await this.receipts.recordedBy(row),
      recorded_at: row.recorded_at,
      position: Number(row.position),
      log: await this.log.locate(Number(row.position), this.urls.path(`/api/receipts/${row.id}/proof`)),
    };
  }

  /** Deprecated alias of {@link verify} (kept for one release): the same answer with `Deprecation` and `Link: rel="successor-version"`. */
  @Get('api/receipt/:id/verify')
  @VerifyRateLimit()
  @ApiOperation({ operationId: 'verifyReceiptDeprecated', deprecated: true, summary: 'Deprecated: use GET /api/receipts/{id}/verify' })
  @ApiAnswer(200, 'ReceiptVerification', 'verdict valid', { Deprecation: 'RFC 9745 date of deprecation', Link: '<successor>; rel="successor-version"' })
  @ApiAnswer(422, 'ReceiptVerification', 'the stored record does not verify')
  @ApiAnswer(ERASED_STATUS, 'ErasedRecordVerification', 'the receipt\'s content was erased (issue 29)')
  @ApiErrors([404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async verifyDeprecated(@Param('id') id: string, @Res({ passthrough: true }) res: FastifyReply) {
    markDeprecated(res, this.urls.receiptVerify(encodeURIComponent(id)));
    return this.verify(id, res);
  }

  /**
   * Export: the stored document exactly as recorded (the bytes sent, a
   * JSON-RPC response stays one), `application/json`: what `aer1 verify`
   * reads as is (`curl …/raw > r.json && aer1 verify r.json`). A `metadata`
   * publication: auditor and admin keys only (403 `canonical_bytes_withheld`).
   * 404 `not_found`; 410 `content_erased` when the content was erased
   * (issue 29), naming the erasure.
   */
  @Get('api/receipts/:id/raw')
  @PublicRead(1)
  @ApiOperation({ operationId: 'exportReceipt', summary: 'The stored receipt document, byte for byte (for aer1 verify)' })
  @ApiResponse({ status: 200, description: 'the stored document as recorded', content: { 'application/json': { schema: ref('ReceiptDocument') } } })
  @ApiErrors([401, 403, 404, 409, 410, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.', 403: '`canonical_bytes_withheld`: a `metadata` publication, and no auditor or admin key.', 410: '`content_erased`: the document was erased (issue 29); `erasure` names who, when, why and on which basis.' })
  async raw(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    const text = await this.listing.raw(id, viewer);
    vary(res, 'Authorization');
    res.status(200).type(JSON_TYPE).send(Buffer.from(text, 'utf8'));
  }

  /**
   * The stored record as recorded (verdict and reasons at record; re-verify
   * with verifyReceipt). A `metadata` publication withholds the stored text
   * and canonical bytes from all but auditor and admin keys (optional
   * `Authorization`). 404 `not_found`.
   */
  @Get('api/receipts/:id')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getReceipt', summary: 'The stored record of a receipt' })
  @ApiAnswer(200, 'StoredReceipt', 'the stored record')
  @ApiErrors([401, 404, 409, 429], { 409: '`projection_mismatch`: the record does not match its ledger event and is not served.' })
  async get(@Param('id') id: string, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply) {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    vary(res, 'Authorization');
    return this.listing.get(id, viewer);
  }
}
