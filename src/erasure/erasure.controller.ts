import { Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/api-keys.service';
import { Roles } from '../auth/roles.guard';
import { NotFoundError } from '../common/errors';
import { JsonBody } from '../common/json-body.decorator';
import { ApiAnswer, ApiCreated, ApiErrors, ApiJsonBody, WRITE_ERRORS } from '../common/openapi';
import { PublicRead } from '../common/rate-limit';
import { RawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { ErasureService } from './erasure.service';

/** Erasure of payloads (issue 29, docs/erasure.md). */
@ApiTags('erasure')
@Controller()
export class ErasureController {
  constructor(
    private readonly erasure: ErasureService,
    private readonly urls: PublicUrls,
  ) {}

  /**
   * Erase payloads for good: `{"receipt_ids"?, "job_ids"?, "positions"?,
   * "reason", "legal_basis"}` -> 201 `{erasure_id, positions, erased_at,
   * erasure_position, erasure_positions, url, not_erased?}`. Roles `privacy` and `admin`; others 403. 404
   * `erasure_target_not_found` names every unknown target (nothing erased);
   * 422 `invalid_erasure`, `too_many_targets`, `not_erasable`; 409
   * `already_erased`. `reason` and `legal_basis` are public (shown on the
   * erased records' pages): never put personal data in them.
   */
  @Post('api/erasures')
  @Roles('privacy')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'erasePayloads', summary: 'Erase the payloads of receipts, jobs or events for good (every proof stays valid)' })
  @ApiJsonBody('ErasureRequest')
  @ApiCreated('ErasureCreated', 'erased')
  @ApiErrors([...WRITE_ERRORS, 404, 409], {
    403: '`forbidden_role`: roles privacy and admin only.',
    404: '`erasure_target_not_found`: the unknown targets are named; nothing was erased.',
    409: '`already_erased`: every payload named was erased before.',
    422: '`invalid_erasure` (naming the member), `too_many_targets`, `not_erasable` (a position of a type that cannot be erased).',
  })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const req = this.erasure.parse(body.value);
    const a = await this.erasure.erase(req, caller);
    const url = this.urls.erasure(a.erasure_id);
    res.header('Location', url);
    return { ...a, url };
  }

  /** One erasure: who, when, why, on what basis, which positions, and the positions of its `PayloadsErased` events (`erasure_position` the first). Public (it holds no content). 404 `not_found`. */
  @Get('api/erasures/:id')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getErasure', summary: 'An erasure: who erased which payloads, when, why and on which basis' })
  @ApiAnswer(200, 'Erasure', 'the erasure')
  @ApiErrors([404, 429])
  async get(@Param('id') id: string) {
    const e = await this.erasure.get(id);
    if (!e) throw new NotFoundError('erasure', id);
    return { erasure_id: e.erasure_id, erased_at: e.erased_at, erased_by: e.key_name, reason: e.reason, legal_basis: e.legal_basis, erasure_position: e.position, erasure_positions: e.event_positions, positions: e.positions };
  }
}
