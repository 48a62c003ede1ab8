/**
 * Errors that mean the database cannot serve the request now, not that the
 * request or the code is wrong: answered 503 `database_unavailable` with
 * Retry-After (src/common/error.filter.ts), never 500. Nothing of a write
 * that failed this way was committed (its transaction never reached COMMIT,
 * or COMMIT itself failed and the call was refused).
 *
 * - PostgreSQL SQLSTATE classes 08 (connection exception), 28 (the
 *   connection's authorization refused) and 53 (insufficient resources: too
 *   many connections, disk full, out of memory), 57P01-57P03 (the server
 *   shutting down or starting up), 3D000 (the database is gone) and a 55000
 *   saying the database is not accepting connections;
 * - node-postgres' own connection failures (refused, reset, timed out,
 *   terminated);
 * - SQLite's SQLITE_BUSY / SQLITE_LOCKED (another process holds the lock past
 *   the busy timeout), SQLITE_FULL and SQLITE_IOERR.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const PG_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect$/, /^Client has encountered a connection error and is not queryable$/, /^Cannot use a pool after calling end on the pool$/];

/** True when `e` (or the driver error a TypeORM QueryFailedError wraps) says the database is unavailable. */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (const x of [e, (e as { driverError?: unknown } | null)?.driverError]) {
    if (typeof x !== 'object' || x === null) continue;
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (/^(08|28|53)[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03', '3D000'].includes(code)) return true;
      if (code === '55000' && /is not currently accepting connections/.test(String((x as { message?: unknown }).message))) return true;
      if (SOCKET_CODES.has(code)) return true;
      if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR)/.test(code)) return true;
    }
    const message = (x as { message?: unknown }).message;
    if (typeof message === 'string' && PG_MESSAGES.some((r) => r.test(message))) return true;
  }
  return false;
}
