/**
 * A timeline entry's optional `status` member (recorded by OTLP ingestion and
 * by producers that report it): whether the call it records failed. The
 * member is outside the chain's rules (S7.1 binds the whole entry, not its
 * meaning): a failed call still chains; it is only reported as failed.
 */
import { has, isObject } from './result';

/**
 * The reserved tool name of the ledger's closing marker: the entry the
 * ledger writes to close a timeline when no tool call of the same request
 * can carry `close: true` (OTLP, `POST /api/jobs/{id}/close`, the MCP
 * gateway's close at the end of a session). Producers cannot write it (422
 * `reserved_tool`); coverage does not count the marker as an action, and
 * the failed-call counts do not count it as a call.
 */
export const CLOSE_MARKER_TOOL = 'aer1.job.close';

/**
 * The entry is the ledger's closing marker: tool {@link CLOSE_MARKER_TOOL}
 * and `close: true` (S7.2 allows `close` only on the last entry). It closes
 * the job; it records no call.
 */
export function isClosingMarkerEntry(entry: unknown): boolean {
  return isObject(entry) && entry.tool === CLOSE_MARKER_TOOL && entry.close === true;
}

/**
 * The entry's status text when the entry records a failed call (a `status`
 * member present and not the string `ok`), else null. A non-string or empty
 * status is given as its JSON text. The ledger's closing marker
 * ({@link isClosingMarkerEntry}) records no call: null whatever its status
 * (an OTLP `invoke_agent` span whose status is ERROR closes with a marker of
 * status `error`).
 */
export function failedCallStatus(entry: unknown): string | null {
  if (!isObject(entry) || !has(entry, 'status') || isClosingMarkerEntry(entry)) return null;
  const s = entry.status;
  if (s === 'ok') return null;
  return typeof s === 'string' && s !== '' ? s : JSON.stringify(s);
}
