import { Global, Module } from '@nestjs/common';
import { PublicUrls } from './urls';

@Global()
@Module({ providers: [PublicUrls], exports: [PublicUrls] })
export class CommonModule {}
