/**
 * The typed errors services throw (one exception filter maps them): defined
 * in the pure core (`src/core/errors.ts`) so the core, the CLI and the server
 * share one set; Nest modules import them from here.
 */
export * from '../core/errors';
