import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CheckpointSigner } from './checkpoint-signer';
import { LogController } from './log.controller';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { CommitmentTrustService } from './commitment-trust.service';

/** The verifiable log's reads (LogService, global to the pages and verifiers). */
@Global()
@Module({ imports: [AuthModule], providers: [LogIdentityService, LogService, CommitmentTrustService], exports: [LogIdentityService, LogService, CommitmentTrustService] })
export class LogReadModule {}

/** The verifiable log over HTTP, and the checkpoint signer (the API process only; workers append, never sign). */
@Module({ imports: [LogReadModule, AuthModule], controllers: [LogController], providers: [CheckpointSigner], exports: [CheckpointSigner] })
export class LogModule {}
