import { Controller, Get, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiErrors } from '../common/openapi';
import { BadInputError } from '../common/errors';
import { LEDGER_VERIFY_COST, PublicRead } from '../common/rate-limit';
import { LedgerService } from './ledger.service';

@ApiTags('ledger')
@Controller('api/ledger')
export class LedgerController {
  constructor(private readonly ledger: LedgerService) {}

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
   * earlier), also detects removed newest events. `projections` audits every
   * row of every read model against the events (as of one position, on a
   * read snapshot: see projection-audit.ts), the first failure of each table
   * named with its key and ledger position. Rate limited like the record
   * verifiers (S13): it reads the whole ledger. `verdict` is `valid` when
   * every part passes, else `invalid`, answered with status 409 and the
   * same full report as the body (`ok` is kept, deprecated: the verdict as a boolean).
   */
  @Get('verify')
  @PublicRead(LEDGER_VERIFY_COST)
  @ApiOperation({ operationId: 'verifyLedger', summary: 'Recompute the ledger chain and name the first position that does not verify' })
  @ApiQuery({ name: 'head_position', required: false, schema: { type: 'integer', minimum: 1 } })
  @ApiQuery({ name: 'head_hash', required: false, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } })
  @ApiAnswer(200, 'LedgerVerification', 'the chain recomputed and every read-model row matches its events (verdict valid)')
  @ApiAnswer(409, 'LedgerVerification', 'something does not verify (verdict invalid): the full report, each failing part named')
  @ApiErrors([400, 429])
  async verify(@Res({ passthrough: true }) res: Response, @Query('head_position') headPosition?: string, @Query('head_hash') headHash?: string) {
    let expected: { position: number; event_hash: string } | undefined;
    if (headPosition !== undefined || headHash !== undefined) {
      const position = Number(headPosition);
      if (!Number.isSafeInteger(position) || position < 1 || !/^[0-9a-f]{64}$/.test(headHash ?? '')) {
        throw new BadInputError('invalid_query', 'head_position must be a positive integer and head_hash 64 lowercase hex');
      }
      expected = { position, event_hash: headHash as string };
    }
    const [r, projections] = await Promise.all([this.ledger.verifyChain(expected), this.ledger.auditProjections()]);
    const ok = r.ok && projections.ok;
    if (!ok) res.status(409);
    return { verdict: ok ? 'valid' : 'invalid', ...r, ok, projections };
  }
}
