/**
 * Strict JSON input, shared by the server and the CLI: white space, strict
 * UTF-8, parsing with the duplicate-member check, depth, array element
 * texts, NDJSON lines.
 */
export * from './text';
export * from './lines';
export * from './duplicate-members';
export * from './members';
