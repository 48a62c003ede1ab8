/**
 * The unit of work every statement runs in ({@link Tx}), and the input
 * errors a statement can raise (refused text, driver errors caused by a
 * request): shared by the write path (database.service.ts), the deferred
 * inserts and the scratch databases.
 */
import { BadInputError } from '../common/errors';
import { hasLoneSurrogate } from '../core/text';
import type { Dialect } from './database-url';

/** A unit of work: every statement of one request runs in one of these. */
export interface Tx {
  readonly dialect: Dialect;
  /** Run SQL written with `?` placeholders (rewritten to `$n` for PostgreSQL). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Run `hook` once, after the transaction's own work and before it commits
   * (hooks run in the order they were added; a throw rolls everything back).
   * Only a write transaction has hooks: elsewhere this throws.
   */
  beforeCommit(hook: () => Promise<void>): void;
  /**
   * The commit group this transaction is part of (see
   * {@link DatabaseService.write}): one object shared by every call of one
   * database transaction, for state a service keeps per group (the ledger's
   * head and pending tree leaves).
   */
  readonly group: object;
  /**
   * Run `fn` (synchronous, must not throw) once this call's work is kept in
   * its group: its before-commit hooks done and its savepoint released. Not
   * run for a call rolled back alone. Only a write transaction has hooks.
   */
  whenKept(fn: () => void): void;
  /**
   * Run `hook` once, after every call of the group and before COMMIT. A
   * throw fails the whole group (every call, nothing written): for work the
   * group's calls share, like integrating all of their leaves at once. Only a
   * write transaction has hooks. `hook` gets a handle on the group's
   * transaction (with no hooks of its own).
   */
  beforeGroupCommit(hook: (tx: Tx) => Promise<void>): void;
  /**
   * Queue one row for `INSERT INTO table (columns) VALUES (values)` instead
   * of running it now (issue 17): the rows a write call queues are written as
   * multi-row INSERTs (chunked under each driver's parameter limit, see
   * deferred-inserts.ts; rows of a table in the order queued, no order kept
   * between tables, so a row must not depend on another table's row queued
   * in the same call) before any other statement of this Tx runs (so every
   * read sees them), and at the latest when the call's own work is done,
   * before its before-commit hooks and before its savepoint is released (on
   * PostgreSQL full chunks are also sent as they fill, not awaited). A row
   * the database refuses fails the call as the INSERT run at once would have
   * (a {@link StorageInputError} for what {@link inputError} maps, else the
   * driver's error), thrown by the call's next statement or at its end
   * instead of here. Values are checked by {@link refuseNul} here, at once,
   * and bound as {@link query} binds parameters, one per column; the
   * `values` array is kept, not copied (pass a fresh one). Only a write
   * transaction queues: elsewhere this throws; a scratch database's Tx runs
   * the INSERT at once.
   */
  insertLater(table: string, columns: readonly string[], values: readonly unknown[]): void;
  /**
   * Queue `UPDATE table SET columns = values WHERE key = keyValues` for one
   * row instead of running it now: written with the rows queued by
   * {@link insertLater}, after them (so it may update a row queued in the
   * same call), before any other statement of this Tx runs and at the
   * latest when the call's own work is done. An update queued again for the
   * same table, columns and row replaces the one queued: a row whose state
   * moves many times in one call (a timeline's head, once per entry) is
   * written once, with its last values. Errors and the {@link refuseNul}
   * check as for {@link insertLater}. Only a write transaction queues:
   * elsewhere this throws; a scratch database's Tx runs the UPDATE at once.
   */
  updateLater(table: string, columns: readonly string[], values: readonly unknown[], key: readonly string[], keyValues: readonly unknown[]): void;
}

/** What a write transaction reports to an observer of write transactions (the metrics, src/metrics/ledger-metrics.ts). */
export interface WriteObserver {
  /**
   * One write transaction (a commit group, see `DatabaseService.write`)
   * ended, or one call of a group was rolled back to its savepoint alone.
   * `txs` are the handles of the calls it covers, in order (on commit, the
   * calls that committed; a rolled-back call alone is `[its tx]`). Times in
   * seconds: `waited` each call's time in the in-process write queue before
   * its group began, `total` from BEGIN to the end of COMMIT (or ROLLBACK;
   * for a call rolled back alone, its own run), `commit` the COMMIT alone
   * (its WAL flush; 0 on rollback).
   */
  writeFinished(txs: readonly object[], committed: boolean, times: { waited: readonly number[]; total: number; commit: number }): void;
}

/**
 * A 400 raised while a statement runs (see {@link refuseNul}, {@link inputError}):
 * part of the transaction may already be written, so it must end the whole
 * transaction, never be caught and carried past (as a per-line error would be).
 */
export class StorageInputError extends BadInputError {}

/**
 * Text neither database stores faithfully: PostgreSQL cannot hold U+0000
 * (the driver failed: a 500), and both drivers write an unpaired UTF-16
 * surrogate as U+FFFD, so ids differing only in lone surrogates collided
 * (a plan for `...\ud800` blocked one for `...\udfff`). Refused as input
 * instead (400 `unsupported_character`) on both dialects alike, before the
 * statement runs; in a write transaction the throw rolls everything back.
 * Stored texts never contain either (JSON escapes them), so only
 * identifiers and fields taken from a request can, and reads by such an id
 * answer 400 too. The texts inside an array parameter are checked too.
 */
export function refuseNul(params: readonly unknown[]): void {
  for (const p of params) {
    if (Array.isArray(p)) refuseNul(p); // an array parameter (PostgreSQL `= ANY(?)`): each of its texts
    if (typeof p !== 'string') continue;
    if (p.includes('\u0000')) throw new StorageInputError('unsupported_character', 'identifiers and recorded text fields cannot contain the NUL character (U+0000)');
    if (hasLoneSurrogate(p)) throw new StorageInputError('unsupported_character', 'identifiers and recorded text fields cannot contain an unpaired UTF-16 surrogate (a \\ud800-\\udfff escape without its pair)');
  }
}

/**
 * A driver error caused by what a request carried rather than by the service,
 * as a 400 instead of a 500: a PostgreSQL btree index entry is at most 2704
 * bytes, so a long incompressible identifier (a job id, an entry id) cannot be
 * indexed (SQLSTATE 54000 "index row size ... exceeds"); 22021/22P05 are
 * characters the database encoding cannot hold. Null for anything else.
 */
export function inputError(e: unknown): StorageInputError | null {
  const err = e as { code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } };
  const code = err?.driverError?.code ?? err?.code;
  const message = String(err?.driverError?.message ?? err?.message ?? '');
  if (code === '54000' && /index row/i.test(message)) return new StorageInputError('value_too_large', 'an identifier or indexed field is too long to be stored; nothing was recorded');
  if (code === '22021' || code === '22P05') return new StorageInputError('unsupported_character', 'the request carries text the database cannot store; nothing was recorded');
  return null;
}

/** Empty a read-model table (a projection rebuild; the caller names only tables a projection owns). */
export async function emptyTable(tx: Tx, table: string): Promise<void> {
  await tx.query(`DELETE FROM ${table}`);
}
