import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiAnswer, ApiCreated, ApiErrors, ApiJsonBody, arrayOf, ref, WRITE_ERRORS } from '../common/openapi';
import { PublicUrls } from '../common/urls';
import { JsonBody } from '../common/json-body.decorator';
import { RawJson } from '../common/raw-json';
import { BadInputError } from '../common/errors';
import { isObject } from '../core/aer1';
import { ApiKeysService, Publication, Role } from './api-keys.service';
import { Roles } from './roles.guard';

/** Key management for admins (the CLI `npm run ledger -- create-key` does the same offline). */
@ApiTags('keys')
@ApiBearerAuth()
@Controller('api/keys')
@Roles('admin')
export class KeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly urls: PublicUrls,
  ) {}

  /**
   * Body `{name, role, owner?, systems?, gateway?, publication?}`: `owner`
   * groups keys that may act on each other's records; `systems` (an array of
   * names) restricts `EXECUTED BY <system>` to those systems, and `gateway`
   * (boolean) permits `OBSERVED VIA GATEWAY` on a restricted key; `publication`
   * is `full` (default) or `metadata`; `retention_period` (ISO 8601 duration,
   * `P30D`) erases the key's records' payloads once that old, instead of
   * RETENTION_PERIOD (docs/erasure.md, "Retention"). Answers 201 with the key, shown once
   * (`Location`: the key's URL, for GET and DELETE).
   * 400 `invalid_body`; 422 `invalid_role`, `invalid_name`, `invalid_key_options`.
   */
  @Post()
  @ApiOperation({ operationId: 'createKey', summary: 'Create an API key (admin)' })
  @ApiJsonBody('CreateKey')
  @ApiCreated('KeyCreated', 'created; the secret is shown only in this answer')
  @ApiErrors(WRITE_ERRORS, { 400: '`invalid_body`, `unsupported_character`, `value_too_large`.', 422: '`invalid_role`, `invalid_name`, `invalid_key_options`.' })
  async create(@JsonBody() body: RawJson, @Res({ passthrough: true }) res: FastifyReply) {
    const v = body.value;
    if (!isObject(v) || typeof v.name !== 'string' || typeof v.role !== 'string') throw new BadInputError('invalid_body', 'expected {"name": string, "role": string, "owner"?: string, "systems"?: [string], "gateway"?: boolean, "publication"?: "full"|"metadata", "retention_period"?: "P30D"}');
    const unknown = Object.keys(v).filter((k) => !['name', 'role', 'owner', 'systems', 'gateway', 'publication', 'retention_period'].includes(k));
    if (unknown.length > 0) throw new BadInputError('invalid_body', `unknown members: ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
    const k = await this.keys.create(v.name, v.role as Role, {
      owner: v.owner as string | undefined,
      systems: v.systems as string[] | undefined,
      gateway: v.gateway as boolean | undefined,
      publication: v.publication as Publication | undefined,
      retention_period: v.retention_period as string | null | undefined,
    });
    res.status(201).header('Location', this.urls.key(k.id));
    return k;
  }

  @Get()
  @ApiOperation({ operationId: 'listKeys', summary: 'List API keys without secrets (admin)' })
  @ApiAnswer(200, arrayOf(ref('KeyRecord')), 'every key, oldest first')
  @ApiErrors([401, 403])
  list() {
    return this.keys.list();
  }

  /** The key as listed (name, role, owner, systems, publication, created and revoked times; never the secret). 404 for an unknown id. */
  @Get(':id')
  @ApiOperation({ operationId: 'getKey', summary: 'One API key without its secret (admin)' })
  @ApiAnswer(200, ref('KeyRecord'), 'the key (revoked ones too, with revoked_at)')
  @ApiErrors([401, 403, 404])
  get(@Param('id') id: string) {
    return this.keys.get(id.toLowerCase()); // key ids are UUIDs, written lower-case; read in any case, as other UUID paths are
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeKey', summary: 'Revoke an API key (admin)' })
  @ApiResponse({ status: 204, description: 'revoked (or already revoked)' })
  @ApiErrors([401, 403, 404])
  async revoke(@Param('id') id: string): Promise<void> {
    await this.keys.revoke(id.toLowerCase());
  }
}
