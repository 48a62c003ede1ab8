import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { vary } from '../common/http';
import { ApiKeysService } from '../auth/api-keys.service';
import { BadInputError, LedgerError, NotFoundError } from '../common/errors';
import { addSignatureLines } from '../core/tlog';
import { ApiAnswer, ApiErrors } from '../common/openapi';
import { PublicRead } from '../common/rate-limit';
import { DatabaseService } from '../database/database.service';
import { CoverageReads } from '../coverage/coverage-reads';
import { ReceiptReads } from '../receipts/receipt-reads';
import { WorkflowReads } from '../workflows/workflow-reads';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { countParam, MAX_LEAVES_PER_PAGE } from './log-answers';
import { WitnessedCheckpoints } from './witnessed.service';
import { StreamHeadsService } from './stream-heads.service';
import { timeStampReplyFromToken } from '../core/timestamp';

/** The draft this deployment implements. */
const DRAFT = 'draft-zambo-aer1-07';

const TEXT = 'text/plain; charset=utf-8';

/** Streams one `GET /api/ledger/stream-heads` names at most (the URL stays under Node's 16 KiB header limit). */
const MAX_HEADS_PER_REQUEST = 100;

function proofFormat(format: string | undefined, req: FastifyRequest): 'json' | 'tlog-proof' {
  if (format === undefined) return /^text\/plain\b/.test(req.headers.accept ?? '') ? 'tlog-proof' : 'json';
  if (format === 'json' || format === 'tlog-proof') return format;
  throw new BadInputError('invalid_query', 'format is json or tlog-proof', { format: format.slice(0, 40) });
}

/**
 * The verifiable log over HTTP (issue 14): the signed checkpoint (C2SP
 * tlog-checkpoint), leaves, RFC 6962 inclusion and consistency proofs,
 * stored checkpoints, proof files (C2SP tlog-proof, or JSON) and lookup by
 * hash. Public reads, rate limited like the verifiers; nothing here writes.
 */
@ApiTags('log')
@Controller()
export class LogController {
  constructor(
    private readonly log: LogService,
    private readonly identity: LogIdentityService,
    private readonly keys: ApiKeysService,
    private readonly db: DatabaseService,
    private readonly receipts: ReceiptReads,
    private readonly workflows: WorkflowReads,
    private readonly coverage: CoverageReads,
    private readonly witnessed: WitnessedCheckpoints,
    private readonly heads: StreamHeadsService,
  ) {}

  /**
   * The checkpoint readers should trust: with WITNESSES configured, the
   * newest one carrying at least WITNESS_QUORUM valid cosignatures (the
   * log's signed note with the witnesses' c2sp.org/tlog-cosignature lines
   * appended); otherwise the newest signed one
   * (`<origin>\n<size>\n<base64 root>\n\n— <origin> <signature>\n`).
   * 404 `no_checkpoint` before the first (witnessed) one; 503
   * `log_unavailable` when this deployment signs none.
   */
  @Get('checkpoint')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getCheckpoint', summary: 'The newest witnessed checkpoint (or, without witnesses, the newest signed one): C2SP tlog-checkpoint, signed note' })
  @ApiResponse({ status: 200, description: 'the signed note, with cosignature lines when witnessed', content: { [TEXT]: { schema: { type: 'string' } } } })
  @ApiErrors([404, 429, 503])
  async checkpoint(@Res() res: FastifyReply): Promise<void> {
    const cp = await this.log.requireLatest();
    res.status(200).type(TEXT).header('Cache-Control', 'no-cache');
    res.send(cp.note);
  }

  /**
   * The newest log-signed checkpoint, witnessed or not, with whatever
   * cosignatures it has so far. 404 `no_checkpoint` before the first; 503
   * `log_unavailable` when this deployment signs none.
   */
  @Get('checkpoint/latest')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getLatestCheckpoint', summary: 'The newest log-signed checkpoint, whether or not witnesses have cosigned it yet' })
  @ApiResponse({ status: 200, description: 'the signed note (with any cosignature lines received so far)', content: { [TEXT]: { schema: { type: 'string' } } } })
  @ApiErrors([404, 429, 503])
  async latestCheckpoint(@Res() res: FastifyReply): Promise<void> {
    const cp = await this.log.requireNewestSigned();
    res.status(200).type(TEXT).header('Cache-Control', 'no-cache');
    res.send(await this.withStoredCosignatures(cp.size, cp.note));
  }

  /** `note` with the stored cosignature lines (by configured witnesses) on `size` appended. */
  private async withStoredCosignatures(size: number, note: string): Promise<string> {
    if (!this.witnessed.enabled) return note;
    const lines = (await this.witnessed.cosignatures(size)).map((c) => c.line);
    return lines.length === 0 ? note : addSignatureLines(note, lines);
  }

  /** RFC 8615 discovery: the log's origin, verifier key and the endpoints of this deployment. */
  @Get('.well-known/aer1')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getDiscovery', summary: 'Discovery (RFC 8615): origin, log verifier key, endpoints' })
  @ApiAnswer(200, 'Discovery', 'what this deployment serves')
  @ApiErrors([429])
  async discovery() {
    const b = this.identity.publicBase;
    const id = this.identity.current;
    return {
      draft: DRAFT,
      origin: id?.origin ?? null,
      log_vkey: id?.vkey ?? null,
      checkpoint_url: `${b}/checkpoint`,
      signing: id ? 'active' : `disabled: ${this.identity.reason}`,
      leaf: 'the UTF-8 bytes of the event hash input (["aer1-ledger-event/<format>", ...]); leaf index = ledger position - 1; RFC 6962 hashing',
      endpoints: {
        checkpoint: `${b}/checkpoint`,
        checkpoint_latest: `${b}/checkpoint/latest`,
        tile: `${b}/tile/{L}/{N}[.p/{W}]`,
        entry_bundle: `${b}/tile/entries/{N}[.p/{W}]`,
        checkpoints: `${b}/api/ledger/checkpoints/{size}`,
        checkpoint_timestamp: `${b}/api/ledger/checkpoints/{size}/timestamp`,
        checkpoint_anchors: `${b}/api/ledger/checkpoints/{size}/anchors`,
        leaf: `${b}/api/ledger/leaves/{index}`,
        leaves: `${b}/api/ledger/leaves?start={index}&count={n}`,
        stream_heads: `${b}/api/ledger/stream-heads?stream={stream id}&size={size}`,
        inclusion_proof: `${b}/api/ledger/proof/inclusion?index={index}&tree_size={size}`,
        consistency_proof: `${b}/api/ledger/proof/consistency?first={size}&second={size}`,
        event_proof: `${b}/api/ledger/events/{position}/proof`,
        receipt_proof: `${b}/api/receipts/{id}/proof`,
        search: `${b}/api/ledger/search?output_hash=sha256:{hex}`,
        ledger_verify: `${b}/api/ledger/verify`,
        receipt_verify: `${b}/api/receipts/{id}/verify`,
        openapi: `${b}/docs`,
      },
    };
  }

  /**
   * A stored checkpoint of exactly `size` (for monitors that missed one):
   * the signed note verbatim, followed by the cosignature lines stored for
   * it (configured witnesses; more may arrive, so it is cached for a minute
   * only when witnesses are configured). 404 `checkpoint_not_found`.
   */
  @Get('api/ledger/checkpoints/:size')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getCheckpointBySize', summary: 'A stored checkpoint of the given tree size' })
  @ApiParam({ name: 'size', schema: { type: 'integer', minimum: 0 } })
  @ApiResponse({ status: 200, description: 'the signed note, verbatim', content: { [TEXT]: { schema: { type: 'string' } } } })
  @ApiErrors([400, 404, 429])
  async checkpointBySize(@Param('size') size: string, @Res() res: FastifyReply): Promise<void> {
    const cp = await this.log.checkpoint(countParam('size', size) as number);
    res.status(200).type(TEXT).header('Cache-Control', this.witnessed.enabled ? 'public, max-age=60' : 'public, max-age=31536000, immutable');
    res.send(await this.withStoredCosignatures(cp.size, cp.note));
  }

  /**
   * The RFC 3161 token over the checkpoint of `size` (S10; over SHA-256 of
   * its note text without signatures), as a granted TimeStampResp (DER,
   * `application/timestamp-reply`, RFC 3161 3.4): `openssl ts -verify
   * -digest <sha256> -in FILE -CAfile CHAIN` checks it. 404
   * `timestamp_not_found` when that checkpoint has none.
   */
  @Get('api/ledger/checkpoints/:size/timestamp')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getCheckpointTimestamp', summary: 'The RFC 3161 timestamp token of a checkpoint (DER TimeStampResp)' })
  @ApiParam({ name: 'size', schema: { type: 'integer', minimum: 0 } })
  @ApiResponse({ status: 200, description: 'DER TimeStampResp', content: { 'application/timestamp-reply': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors([400, 404, 429])
  async checkpointTimestamp(@Param('size') size: string, @Res() res: FastifyReply): Promise<void> {
    const n = countParam('size', size) as number;
    const ts = await this.witnessed.timestamp(n);
    if (!ts) throw new LedgerError(404, 'timestamp_not_found', `the checkpoint of size ${n} has no RFC 3161 timestamp`, { size: n });
    res.status(200).type('application/timestamp-reply').header('Cache-Control', 'public, max-age=31536000, immutable');
    res.header('Content-Disposition', `attachment; filename="checkpoint-${n}.tsr"`);
    res.send(timeStampReplyFromToken(ts.token));
  }

  /**
   * Leaves `[start, start + count)` (count 1..1000, default 100):
   * `{leaves: [{index, position, leaf, leaf_hash, withheld?}]}`. An auditor's
   * key is served leaf bytes withheld from the public (see `withheld`).
   */
  @Get('api/ledger/leaves')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getLeaves', summary: 'A range of leaves (their bytes and RFC 6962 leaf hashes)' })
  @ApiQuery({ name: 'start', required: true, schema: { type: 'integer', minimum: 0 } })
  @ApiQuery({ name: 'count', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_LEAVES_PER_PAGE } })
  @ApiAnswer(200, 'Leaves', 'the leaves that exist in the range')
  @ApiErrors([400, 401, 404, 409, 429])
  async leaves(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply, @Query('start') start?: string, @Query('count') count?: string) {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    vary(res, 'Authorization');
    return { leaves: await this.log.leaves(countParam('start', start) as number, countParam('count', count, false) ?? 100, viewer) };
  }

  /**
   * A stream-heads statement (issue 30; docs/stream-heads.md): for each
   * `stream` (repeat it, 1..100 times), its newest event as of the checkpoint
   * of `size` (a signed checkpoint at most the newest; default the newest),
   * as a C2SP signed note signed with the log key:
   * `<origin>\n aer1-stream-heads/1\n <size>\n <root>\n` then
   * `<stream id> <position> <event hash>` (or `<stream id> 0`) per stream.
   * 400 `invalid_query`, 404 `tree_size_beyond_checkpoint` /
   * `checkpoint_not_found` / `no_checkpoint`, 409 `stream_head_unbacked`
   * (a head the stored tree does not back: never signed), 503 `log_unavailable`.
   */
  @Get('api/ledger/stream-heads')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getStreamHeads', summary: 'Signed statement of the newest event of each named stream as of a checkpoint (aer1-stream-heads/1, C2SP signed note)' })
  @ApiQuery({ name: 'stream', required: true, description: `a stream id, e.g. timeline:<job id> or receipt:<id>; repeat for each stream (at most ${MAX_HEADS_PER_REQUEST})`, schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true })
  @ApiQuery({ name: 'size', required: false, schema: { type: 'integer', minimum: 0 }, description: 'a signed checkpoint size, at most the newest (default the newest)' })
  @ApiResponse({ status: 200, description: 'the signed statement', content: { [TEXT]: { schema: { type: 'string' } } } })
  @ApiErrors([400, 404, 409, 429, 503])
  async streamHeads(@Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('size') size?: string): Promise<void> {
    const q = req.url.indexOf('?');
    const streams = q < 0 ? [] : new URLSearchParams(req.url.slice(q + 1)).getAll('stream');
    if (streams.length === 0 || streams.length > MAX_HEADS_PER_REQUEST) throw new BadInputError('invalid_query', `give 1..${MAX_HEADS_PER_REQUEST} stream parameters`, { count: streams.length });
    const cp = await this.heads.checkpointFor(countParam('size', size, false));
    const signed = await this.heads.sign(streams, cp);
    res.status(200).type(TEXT).header('Cache-Control', 'no-cache');
    res.send(signed.note);
  }

  /** One leaf: `{index, position, leaf, leaf_hash, withheld?}`. 404 when there is no such leaf. */
  @Get('api/ledger/leaves/:index')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getLeaf', summary: 'One leaf (its bytes and RFC 6962 leaf hash)' })
  @ApiParam({ name: 'index', schema: { type: 'integer', minimum: 0 } })
  @ApiAnswer(200, 'Leaf', 'the leaf')
  @ApiErrors([400, 401, 404, 409, 429])
  async leaf(@Param('index') index: string, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply) {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    vary(res, 'Authorization');
    return (await this.log.leaves(countParam('index', index) as number, 1, viewer))[0];
  }

  /**
   * RFC 9162 section 2.1.3 inclusion proof of leaf `index` in the tree of
   * `tree_size` leaves (default: the newest checkpoint's):
   * `{index, tree_size, leaf_hash, proof: [base64]}`. 400 for index >=
   * tree_size, 404 for a size beyond the newest checkpoint.
   */
  @Get('api/ledger/proof/inclusion')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getInclusionProof', summary: 'RFC 6962 inclusion proof of a leaf' })
  @ApiQuery({ name: 'index', required: true, schema: { type: 'integer', minimum: 0 } })
  @ApiQuery({ name: 'tree_size', required: false, schema: { type: 'integer', minimum: 1 } })
  @ApiAnswer(200, 'InclusionProof', 'the audit path, leaf sibling first')
  @ApiErrors([400, 404, 429, 503])
  inclusion(@Query('index') index?: string, @Query('tree_size') treeSize?: string) {
    return this.log.inclusion(countParam('index', index) as number, countParam('tree_size', treeSize, false));
  }

  /** RFC 9162 section 2.1.4 consistency proof between tree sizes `first <= second`: `{first, second, proof: [base64]}`. */
  @Get('api/ledger/proof/consistency')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getConsistencyProof', summary: 'RFC 6962 consistency proof between two tree sizes' })
  @ApiQuery({ name: 'first', required: true, schema: { type: 'integer', minimum: 0 } })
  @ApiQuery({ name: 'second', required: true, schema: { type: 'integer', minimum: 0 } })
  @ApiAnswer(200, 'ConsistencyProof', 'the proof (empty for first = 0 or first = second)')
  @ApiErrors([400, 404, 429, 503])
  consistency(@Query('first') first?: string, @Query('second') second?: string) {
    return this.log.consistency(countParam('first', first) as number, countParam('second', second) as number);
  }

  /**
   * Lookup by hash: `?output_hash=sha256:<hex>` (receipts with that output
   * commitment, at most 100) or `?event_hash=<hex>` (the event), each with its leaf index.
   */
  @Get('api/ledger/search')
  @PublicRead(1)
  @ApiOperation({ operationId: 'searchLedger', summary: 'Find receipts by output commitment, or an event by its hash, with leaf indexes' })
  @ApiQuery({ name: 'output_hash', required: false, schema: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } })
  @ApiQuery({ name: 'event_hash', required: false, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } })
  @ApiAnswer(200, 'LedgerSearch', 'matches (possibly none)')
  @ApiErrors([400, 429])
  search(@Query('output_hash') outputHash?: string, @Query('event_hash') eventHash?: string) {
    return this.log.search({ output_hash: outputHash, event_hash: eventHash });
  }

  /** A proof file for the event at `position` (see {@link LogService.proofFile}). */
  @Get('api/ledger/events/:position/proof')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getEventProof', summary: 'Proof file for one event: JSON (aer1-log-proof/1) or C2SP tlog-proof' })
  @ApiParam({ name: 'position', schema: { type: 'integer', minimum: 1 } })
  @ApiQuery({ name: 'format', required: false, schema: { type: 'string', enum: ['json', 'tlog-proof'] } })
  @ApiAnswer(200, 'LogProof', 'the proof file (JSON form; `?format=tlog-proof` or Accept: text/plain for the C2SP form)')
  @ApiErrors([400, 401, 404, 409, 429, 503])
  async eventProof(@Param('position') position: string, @Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('format') format?: string): Promise<void> {
    const p = countParam('position', position) as number;
    if (p < 1) throw new NotFoundError('event', position);
    await this.sendProof(p, proofFormat(format, req), req, res, `event-${p}`);
  }

  /** The proof file of a receipt's event: what `aer1 log verify-proof FILE --vkey VKEY` checks offline. */
  @Get('api/receipts/:id/proof')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getReceiptProof', summary: 'Proof file for a receipt: its event in the log, against the newest checkpoint' })
  @ApiQuery({ name: 'format', required: false, schema: { type: 'string', enum: ['json', 'tlog-proof'] } })
  @ApiAnswer(200, 'LogProof', 'the proof file (JSON form; `?format=tlog-proof` or Accept: text/plain for the C2SP form)')
  @ApiErrors([400, 401, 404, 409, 429, 503])
  async receiptProof(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('format') format?: string): Promise<void> {
    const row = await this.receipts.get(this.db, id.toLowerCase());
    if (!row) throw new NotFoundError('receipt', id);
    await this.sendProof(Number(row.position), proofFormat(format, req), req, res, `receipt-${row.id}`);
  }

  /** The path the issue names, kept as an alias of {@link receiptProof}. */
  @Get('api/receipt/:id/proof')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getReceiptProofSingular', summary: 'Alias of GET /api/receipts/{id}/proof' })
  @ApiQuery({ name: 'format', required: false, schema: { type: 'string', enum: ['json', 'tlog-proof'] } })
  @ApiAnswer(200, 'LogProof', 'the proof file')
  @ApiErrors([400, 401, 404, 409, 429, 503])
  receiptProofSingular(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('format') format?: string): Promise<void> {
    return this.receiptProof(id, req, res, format);
  }

  /** The proof file of a workflow receipt's event. */
  @Get('api/workflows/:id/proof')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getWorkflowProof', summary: 'Proof file for a workflow receipt' })
  @ApiQuery({ name: 'format', required: false, schema: { type: 'string', enum: ['json', 'tlog-proof'] } })
  @ApiAnswer(200, 'LogProof', 'the proof file')
  @ApiErrors([400, 401, 404, 409, 429, 503])
  async workflowProof(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('format') format?: string): Promise<void> {
    const row = await this.workflows.get(this.db, id.toLowerCase());
    if (!row) throw new NotFoundError('workflow', id);
    await this.sendProof(Number(row.position), proofFormat(format, req), req, res, `workflow-${row.workflow_id}`);
  }

  /** The proof file of a coverage report's event. */
  @Get('api/coverage-reports/:id/proof')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getCoverageReportProof', summary: 'Proof file for a coverage report' })
  @ApiQuery({ name: 'format', required: false, schema: { type: 'string', enum: ['json', 'tlog-proof'] } })
  @ApiAnswer(200, 'LogProof', 'the proof file')
  @ApiErrors([400, 401, 404, 409, 429, 503])
  async reportProof(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply, @Query('format') format?: string): Promise<void> {
    const row = await this.coverage.report(this.db, id.toLowerCase());
    if (!row) throw new NotFoundError('coverage report', id);
    await this.sendProof(Number(row.position), proofFormat(format, req), req, res, `coverage-report-${row.report_id}`);
  }

  private async sendProof(position: number, format: 'json' | 'tlog-proof', req: FastifyRequest, res: FastifyReply, name: string): Promise<void> {
    const viewer = await this.keys.fromHeader(req.headers.authorization);
    const f = await this.log.proofFile(position, format, viewer);
    vary(res, 'Authorization');
    vary(res, 'Accept');
    res.status(200).type(f.type);
    res.header('Content-Disposition', `inline; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}.${format === 'json' ? 'json' : 'tlog-proof'}"`);
    res.send(f.body);
  }
}
