import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { JsonBody } from '../common/json-body.decorator';
import { RawJson } from '../common/raw-json';
import { BadInputError } from '../common/errors';
import { isObject } from '../aer1';
import { ApiKeysService, Role } from './api-keys.service';
import { Roles } from './roles.guard';

/** Key management for admins (the CLI `npm run ledger -- create-key` does the same offline). */
@ApiTags('keys')
@ApiBearerAuth()
@Controller('api/keys')
@Roles('admin')
export class KeysController {
  constructor(private readonly keys: ApiKeysService) {}

  /** Body `{name, role}`; answers 201 with the key, shown once. */
  @Post()
  @ApiOperation({ summary: 'Create an API key (admin)' })
  async create(@JsonBody() body: RawJson) {
    const v = body.value;
    if (!isObject(v) || typeof v.name !== 'string' || typeof v.role !== 'string') throw new BadInputError('invalid_body', 'expected {"name": string, "role": string}');
    return this.keys.create(v.name, v.role as Role);
  }

  @Get()
  @ApiOperation({ summary: 'List API keys without secrets (admin)' })
  list() {
    return this.keys.list();
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key (admin)' })
  async revoke(@Param('id') id: string): Promise<void> {
    await this.keys.revoke(id);
  }
}
