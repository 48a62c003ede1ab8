/**
 * The verifiable-log core: RFC 6962 Merkle trees over stored nodes, C2SP
 * signed notes, checkpoints, cosignatures and proof files. Pure: bytes or
 * text in, a value or a typed TlogError out; node:crypto is its only
 * dependency (an ESLint rule keeps it so).
 *
 * The AER-1 proof check (./log-proof.ts, ./quorum.ts) is imported by path:
 * it reads ledger leaves and receipts, and the timestamp module lazily.
 */
export * from './errors';
export * from './merkle';
export * from './keys';
export * from './note';
export * from './checkpoint';
export * from './cosignature';
export * from './proof-file';
export * from './witness';
export * from './monitor';
export * from './tiles';
export * from './stream-heads';
