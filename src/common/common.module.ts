import { Global, Module } from '@nestjs/common';
import { CheckpointLocator } from './checkpoint-locator';
import { PublicUrls } from './urls';

@Global()
@Module({ providers: [PublicUrls, CheckpointLocator], exports: [PublicUrls, CheckpointLocator] })
export class CommonModule {}
