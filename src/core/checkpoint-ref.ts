/**
 * Where a record stands in the ledger's signed checkpoints (the seam the
 * signed-checkpoint work fills in): the checkpoint's tree size and root
 * hash, the record's leaf index in it, and where the checkpoint is served.
 * Renderers (coverage page, PDF, badges) take it as optional and say "not
 * yet proven against a signed checkpoint" when it is absent.
 */
export interface CheckpointRef {
  /** Tree size of the signed checkpoint (entries). */
  size: number;
  /** Root hash of the tree at that size, base64 (as in the checkpoint note). */
  root: string;
  /** The record's leaf index in the tree (0-based, < size). */
  leaf_index: number;
  /** Where the signed checkpoint is served. */
  url: string;
}

/** The statement shown when no checkpoint is given. */
export const NO_CHECKPOINT = 'not yet proven against a signed checkpoint';

/** A checkpoint ref is usable only with an integer size > leaf index >= 0 and text root and url. */
export function usableCheckpoint(c: CheckpointRef | null | undefined): c is CheckpointRef {
  return !!c && Number.isSafeInteger(c.size) && Number.isSafeInteger(c.leaf_index) && c.leaf_index >= 0 && c.leaf_index < c.size && typeof c.root === 'string' && typeof c.url === 'string';
}
