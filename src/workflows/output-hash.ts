/**
 * The workflow output-hash construction of this ledger (S8.1 leaves the
 * bytes implementation-defined and requires them documented alongside the
 * receipt). Applies to workflows assembled here; a workflow receipt recorded
 * as received carries its producer's construction, which this ledger cannot
 * reproduce.
 */
import { createHash } from 'node:crypto';

/** Shown on the workflow page and in the verify JSON. */
export const OUTPUT_HASH_CONSTRUCTION =
  'This ledger (assembled workflows): output_hash = lowercase hex SHA-256 of the UTF-8 bytes of the `output` string given to ' +
  'POST /api/workflows/assemble, exactly as given (no normalization, no trailing newline added, no prefix).';

/** What is said when the output bytes are not held (workflows recorded as received). */
export const OUTPUT_HASH_NOT_HELD =
  'Not confirmed: this workflow receipt was recorded as received; its output bytes and their construction are defined by its producer and are not held here (S8.1).';

/** SHA-256 of the UTF-8 bytes of `output`, lowercase hex. */
export function workflowOutputHash(output: string): string {
  return createHash('sha256').update(output, 'utf8').digest('hex');
}
