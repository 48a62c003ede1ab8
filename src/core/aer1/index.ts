/**
 * The AER-1 verification core: pure functions, bytes or parsed JSON in, a
 * result out. No framework, database, network or filesystem imports (an
 * ESLint rule keeps it so); the service and the CLI call the same code.
 */
export * from './result';
export * from './reasons';
export * from './base64';
export * from './utf8';
export * from './rfc3339';
export * from './identifiers';
export * from './sha256';
export * from './canonical-json';
export * from './receipt';
export * from './chain';
export * from './commitment';
export * from './commitments';
export * from './merkle';
export * from './workflow';
export * from './verify';
export * from '../json/duplicate-members';
export * from './workflow-findings';
export * from './attestation';
export * from './call-status';
