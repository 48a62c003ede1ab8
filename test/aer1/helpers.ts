/**
 * Shared test helpers: the independent reference (test/reference) plus small
 * builders. Nothing here imports src/aer1.
 */
import { RefEntrySpec } from '../reference/reference-verifier';

export * from '../reference/reference-verifier';

/** `n` entry specs for one job, seq 1..n, distinct ids and bytes. */
export function refEntrySpec(job: string, n: number): RefEntrySpec[] {
  return Array.from({ length: n }, (_, i) => ({
    job_id: job,
    id: `${job}-entry-${i + 1}`,
    tool: 'fetch_page',
    provenance_class: 'EXECUTED BY LEDGER',
    bytes: Buffer.from(`{"step":${i + 1},"job":"${job}"}`, 'utf8'),
  }));
}
