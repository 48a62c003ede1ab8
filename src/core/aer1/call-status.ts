/**
 * A timeline entry's optional `status` member (recorded by OTLP ingestion and
 * by producers that report it): whether the call it records failed. The
 * member is outside the chain's rules (S7.1 binds the whole entry, not its
 * meaning): a failed call still chains; it is only reported as failed.
 */
import { has, isObject } from './result';

/**
 * The entry's status text when the entry records a failed call (a `status`
 * member present and not the string `ok`), else null. A non-string or empty
 * status is given as its JSON text.
 */
export function failedCallStatus(entry: unknown): string | null {
  if (!isObject(entry) || !has(entry, 'status')) return null;
  const s = entry.status;
  if (s === 'ok') return null;
  return typeof s === 'string' && s !== '' ? s : JSON.stringify(s);
}
