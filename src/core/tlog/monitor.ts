/**
 * A monitor's decision (C2SP tlog-witness's rules, applied by one client):
 * the checkpoint it accepted last (`saved`, already verified with the log
 * key) against the one the log serves now (`served`, verified likewise).
 * Pure: the caller fetches the checkpoints and, when asked, the consistency
 * proof, and persists `served` only on `first_use`, `unchanged` and
 * `consistent`.
 */
import { Checkpoint } from './checkpoint';
import { isTlogError } from './errors';
import { verifyConsistency } from './merkle';

/** What a monitor concludes before any proof is fetched. */
export type MonitorStep =
  /** Nothing saved yet: trust on first use. */
  | { result: 'first_use' }
  /** The same size and root as saved (the note may carry newer cosignatures). */
  | { result: 'unchanged' }
  /** The log serves a smaller tree than one it signed before. */
  | { result: 'rollback'; saved_size: number; served_size: number }
  /** Two checkpoints signed by the log that cannot both be true. */
  | { result: 'fork'; code: 'same_size_other_root' | 'consistency_proof_failed'; detail: string }
  /** Larger than saved: a consistency proof from `first` to `second` decides (not needed from an empty tree). */
  | { result: 'needs_proof'; first: number; second: number }
  /** Grown, and the log's proof shows the new tree extends the saved one. */
  | { result: 'consistent' };

/** The decision from the two checkpoints alone; `needs_proof` asks for {@link judgeGrowth}. */
export function compareCheckpoints(saved: Checkpoint | null, served: Checkpoint): MonitorStep {
  if (saved === null) return { result: 'first_use' };
  if (served.size < saved.size) return { result: 'rollback', saved_size: saved.size, served_size: served.size };
  if (served.size === saved.size) {
    if (served.rootHash.equals(saved.rootHash)) return { result: 'unchanged' };
    return { result: 'fork', code: 'same_size_other_root', detail: `same size ${saved.size}, different root (saved ${saved.rootHash.toString('base64')}, served ${served.rootHash.toString('base64')})` };
  }
  if (saved.size === 0) return { result: 'consistent' };
  return { result: 'needs_proof', first: saved.size, second: served.size };
}

/**
 * After `needs_proof`: `consistent` when `proof` (RFC 9162 section 2.1.4)
 * shows `served` extends `saved`, else a `fork` naming the failed check.
 * Precondition: `served.size > saved.size > 0`.
 */
export function judgeGrowth(saved: Checkpoint, served: Checkpoint, proof: readonly Uint8Array[]): MonitorStep {
  try {
    verifyConsistency(saved.size, served.size, proof, saved.rootHash, served.rootHash);
  } catch (e) {
    if (!isTlogError(e)) throw e;
    return { result: 'fork', code: 'consistency_proof_failed', detail: `the log's consistency proof from size ${saved.size} to ${served.size} does not verify (${e.code}: ${e.message}): the tree of size ${served.size} does not extend the saved one` };
  }
  return { result: 'consistent' };
}
