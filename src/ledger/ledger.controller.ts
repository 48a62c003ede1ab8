import { Controller, Get, Headers, Inject, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { takeOver } from '../common/http';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { Roles } from '../auth/roles.guard';
import { ApiAnswer, ApiErrors, ref } from '../common/openapi';
import { BadInputError } from '../common/errors';
import { HeavyRead, LEDGER_VERIFY_COST, PublicRead } from '../common/rate-limit';
import { EventStreamService } from './event-stream.service';
import { LedgerService } from './ledger.service';
import { TREE_AUDIT, TreeAudit } from './leaf-sink';

/** A position given by a client (`after`, `Last-Event-ID`): a non-negative safe integer, else 400 `invalid_query`. */
function positionParam(raw: string, name: string): number {
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw new BadInputError('invalid_query', `${name} must be a ledger position (a non-negative integer)`);
  return n;
}

@ApiTags('ledger')
@Controller('api/ledger')
export class LedgerController {
  constructor(
    private readonly ledger: LedgerService,
    @Inject(TREE_AUDIT) private readonly tree: TreeAudit,
    private readonly stream: EventStreamService,
  ) {}

  /**
   * The ledger's events as Server-Sent Events, in position order, then live:
   * each event is `id: <position>` and `data: <StreamedEvent JSON>` (every
   * stored column, the data text as stored; see event-stream.service.ts), a
   * comment line `: heartbeat` every SSE_HEARTBEAT_MS. Starts after the
   * `Last-Event-ID` header when given (a reconnecting client: exactly the
   * events after it), else after `after` (default 0: from the first event).
   * `stream_prefix` keeps events whose stream id starts with it (`timeline:`,
   * `receipt:`, `coverage:`, `batch:`, `plan:`, `workflow:`, or a whole id).
   * Needs an auditor, compliance or admin key: the stream carries every
   * record's text; for compliance keys the data of events recorded under a
   * `metadata` publication is withheld (S13), as on every other read.
   * 400 `invalid_query`; 401/403; 429 `stream_limit_key` (SSE_MAX_PER_KEY
   * open streams for this key) or `stream_limit_server` (SSE_MAX_STREAMS).
   */
  @Get('events/stream')
  @Roles('auditor', 'compliance')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'streamLedgerEvents', summary: 'Live feed of ledger events (Server-Sent Events), resumable with Last-Event-ID (auditor, compliance)' })
  @ApiQuery({ name: 'after', required: false, schema: { type: 'integer', minimum: 0 }, description: 'start after this position (ignored when Last-Event-ID is sent)' })
  @ApiQuery({ name: 'stream_prefix', required: false, schema: { type: 'string', minLength: 1, maxLength: 200 }, description: 'only events whose stream id starts with this' })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'the last `id:` received: the stream resumes exactly after it' })
  @ApiResponse({
    status: 200,
    description: 'an endless `text/event-stream`: `id: <position>` and `data: <StreamedEvent>` per event, `: heartbeat` comments',
    content: { 'text/event-stream': { schema: ref('StreamedEvent') } },
  })
  @ApiErrors([400, 401, 403, 429])
  async events(
    @Caller() caller: Principal,
    @Res() res: FastifyReply,
    @Query('after') after?: string,
    @Query('stream_prefix') prefix?: string,
    @Headers('last-event-id') lastEventId?: string,
  ): Promise<void> {
    const start = lastEventId !== undefined && lastEventId.trim() !== '' ? positionParam(lastEventId.trim(), 'Last-Event-ID') : after !== undefined ? positionParam(after, 'after') : 0;
    if (prefix !== undefined && (prefix.length === 0 || prefix.length > 200 || [...prefix].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f))) {
      throw new BadInputError('invalid_query', 'stream_prefix must be 1 to 200 characters without control characters');
    }
    const release = this.stream.reserve(caller);
    this.stream.serve(takeOver(res), caller, { after: start, prefix: prefix ?? null }, release);
  }

  /** `{position, event_hash}` of the newest event (`{position: 0, event_hash: null}` when empty); publish it to a witness. */
  @Get('head')
  @ApiOperation({ operationId: 'getLedgerHead', summary: 'Current ledger head, for an external witness to publish' })
  @ApiAnswer(200, 'LedgerHead', 'the newest event')
  @ApiErrors([429])
  async head(): Promise<{ position: number; event_hash: string | null }> {
    return (await this.ledger.head()) ?? { position: 0, event_hash: null };
  }

  /**
   * Recompute the ledger hash chain from the first event; names the first
   * position that does not verify (`checked`, `head`, `first_failure`: the
   * chain's). With `head_position` and `head_hash` (a head published
   * earlier), also detects removed newest events. `tree`: the RFC 6962 tree
   * rebuilt from the events and compared node by node with the stored one,
   * and every signed checkpoint's root and signature (first failure of each
   * kind; a removed newest event leaves a leaf the events no longer hold).
   * `projections` audits every row of every read model against the events
   * (as of one position, on a read snapshot: see projection-audit.ts), the
   * first failure of each table named with its key and ledger position. Rate
   * limited like the record verifiers (S13): it reads the whole ledger.
   * `verdict` is `valid` when every part passes, else `invalid`, answered
   * with status 409 and the same full report as the body (`ok` is kept,
   * deprecated: the verdict as a boolean).
   */
  @Get('verify')
  @PublicRead(LEDGER_VERIFY_COST)
  @HeavyRead()
  @ApiOperation({ operationId: 'verifyLedger', summary: 'Recompute the ledger chain and name the first position that does not verify' })
  @ApiQuery({ name: 'head_position', required: false, schema: { type: 'integer', minimum: 1 } })
  @ApiQuery({ name: 'head_hash', required: false, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } })
  @ApiAnswer(200, 'LedgerVerification', 'the chain recomputed and every read-model row matches its events (verdict valid)')
  @ApiAnswer(409, 'LedgerVerification', 'something does not verify (verdict invalid): the full report, each failing part named')
  @ApiErrors([400, 429])
  async verify(@Res({ passthrough: true }) res: FastifyReply, @Query('head_position') headPosition?: string, @Query('head_hash') headHash?: string) {
    let expected: { position: number; event_hash: string } | undefined;
    if (headPosition !== undefined || headHash !== undefined) {
      const position = Number(headPosition);
      if (!Number.isSafeInteger(position) || position < 1 || !/^[0-9a-f]{64}$/.test(headHash ?? '')) {
        throw new BadInputError('invalid_query', 'head_position must be a positive integer and head_hash 64 lowercase hex');
      }
      expected = { position, event_hash: headHash as string };
    }
    const [r, tree, projections] = await Promise.all([this.ledger.verifyChain(expected), this.tree.audit(), this.ledger.auditProjections()]);
    const ok = r.ok && tree.ok && projections.ok;
    if (!ok) res.status(409);
    return { verdict: ok ? 'valid' : 'invalid', ...r, ok, tree, projections };
  }
}
