import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoverageRepositoryModule } from '../coverage/coverage-repository.module';
import { ReceiptsRepositoryModule } from '../receipts/receipts-repository.module';
import { WorkflowsRepositoryModule } from '../workflows/workflows-repository.module';
import { CheckpointSigner } from './checkpoint-signer';
import { LogController } from './log.controller';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { CheckpointLocator } from './checkpoint-locator';
import { TREE_AUDIT } from '../ledger/leaf-sink';
import { CommitmentTrustService } from './commitment-trust.service';
import { CheckpointTimestamper } from './timestamps';
import { WitnessCoordinator } from './witnesses';
import { WitnessedCheckpoints } from './witnessed.service';
import { StaticTiles } from './static-tiles';
import { TileBandwidth } from './tile-bandwidth';
import { TilesController } from './tiles.controller';
import { StreamHeadsService } from './stream-heads.service';
import { NostrAnchors } from './nostr-anchors.service';
import { NostrPublisher } from './nostr-publisher';
import { ReceiptAnchors } from './receipt-anchors';
import { AnchorsController } from './anchors.controller';

/** The verifiable log's reads (LogService, StreamHeadsService, global to the pages and verifiers), and the tree audit the ledger's `/verify` calls (`TREE_AUDIT`). */
@Global()
@Module({
  imports: [AuthModule, ReceiptsRepositoryModule],
  providers: [LogIdentityService, WitnessedCheckpoints, NostrAnchors, LogService, ReceiptAnchors, StreamHeadsService, CheckpointLocator, CommitmentTrustService, { provide: TREE_AUDIT, useExisting: LogService }],
  exports: [LogIdentityService, WitnessedCheckpoints, NostrAnchors, LogService, ReceiptAnchors, StreamHeadsService, CheckpointLocator, CommitmentTrustService, TREE_AUDIT],
})
export class LogReadModule {}

/** The verifiable log over HTTP (JSON API and C2SP tiles), the checkpoint signer, the static copy (TILES_DIR), the witness coordinator, the timestamper and the Nostr publisher (the API process only; workers append, never sign). */
@Module({ imports: [LogReadModule, AuthModule, ReceiptsRepositoryModule, CoverageRepositoryModule, WorkflowsRepositoryModule], controllers: [LogController, TilesController, AnchorsController], providers: [CheckpointSigner, WitnessCoordinator, CheckpointTimestamper, NostrPublisher, TileBandwidth, StaticTiles], exports: [CheckpointSigner, WitnessCoordinator, CheckpointTimestamper, NostrPublisher, StaticTiles] })
export class LogModule {}
