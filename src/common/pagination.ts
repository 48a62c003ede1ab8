import { BadInputError } from './errors';

/** Largest `limit` of a list endpoint. */
export const MAX_PAGE = 1000;
/** `limit` when absent. */
export const DEFAULT_PAGE = 100;

/** A page request: items after ledger position `after` (exclusive), at most `limit`. */
export interface PageRequest {
  after: number;
  limit: number;
}

/**
 * Parse `?after=&limit=` of a list endpoint. The cursor is the `next` of the
 * previous page (today the decimal ledger position of its last item: treat
 * it as opaque). 400 `invalid_query` otherwise.
 */
export function parsePage(after?: string, limit?: string): PageRequest {
  const a = after === undefined || after === '' ? 0 : /^\d{1,15}$/.test(after) ? Number(after) : NaN;
  const l = limit === undefined || limit === '' ? DEFAULT_PAGE : /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
  if (!Number.isSafeInteger(a)) throw new BadInputError('invalid_query', 'after must be the `next` cursor of a previous page');
  if (!Number.isSafeInteger(l) || l < 1 || l > MAX_PAGE) throw new BadInputError('invalid_query', `limit must be an integer from 1 to ${MAX_PAGE}`);
  return { after: a, limit: l };
}

/** `{items, next}` from up to `limit + 1` rows in position order: `next` is set only when more follow. */
export function toPage<R extends { position: number | string }, T>(rows: R[], limit: number, map: (r: R) => T): { items: T[]; next: string | null } {
  const shown = rows.slice(0, limit);
  return { items: shown.map(map), next: rows.length > limit ? String(Number(shown[shown.length - 1].position)) : null };
}
