import { Global, Module } from '@nestjs/common';
import { LEAF_SINK } from '../ledger/leaf-sink';
import { TreeWriter } from './tree-writer';

/**
 * The verifiable log's tree writer, provided to the ledger as its
 * `LEAF_SINK` (every process that appends: the API, workers, `npm run ledger`).
 */
@Global()
@Module({ providers: [TreeWriter, { provide: LEAF_SINK, useExisting: TreeWriter }], exports: [LEAF_SINK] })
export class LogTreeModule {}
