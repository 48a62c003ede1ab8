/**
 * Pass the text of every statement node-postgres sends to `record` (a jest
 * spy on `Client.prototype.query`; undo with `jest.restoreAllMocks()`). `rewrite`,
 * when given, may change a plain-text statement before it is sent (a test
 * that injects a failure).
 */
import { Client } from 'pg';

export function recordPgStatements(record: (sql: string) => void, rewrite?: (sql: string) => string): void {
  const query = Client.prototype.query as (this: Client, ...args: unknown[]) => unknown;
  jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    if (rewrite && typeof args[0] === 'string') args[0] = rewrite(args[0]);
    const q = args[0];
    record(typeof q === 'string' ? q : (q as { text: string }).text);
    return query.apply(this, args);
  } as never);
}
