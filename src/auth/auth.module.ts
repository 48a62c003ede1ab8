import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysService } from './api-keys.service';
import { ApiKeysRepository } from './api-keys.repository';
import { KeysController } from './keys.controller';
import { RolesGuard } from './roles.guard';

@Global()
@Module({
  controllers: [KeysController],
  providers: [ApiKeysService, ApiKeysRepository, { provide: APP_GUARD, useClass: RolesGuard }],
  exports: [ApiKeysService],
})
export class AuthModule {}
