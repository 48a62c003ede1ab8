/**
 * The {@link Tx} handle of a write call (or of a read outside one): its
 * queued rows, their flush and its hooks. Used by database.service.ts.
 */
import { EntityManager } from 'typeorm';
import { DeferredInserts, EAGER_ROWS, QueuedWrite } from './deferred-inserts';
import { toPostgresPlaceholders } from './rows';
import { StatementRunner } from './statement-runner';
import { refuseNul, Tx } from './tx';

/** The hooks of one call of a commit group (see {@link Tx}). */
export interface CallHooks {
  before: (() => Promise<void>)[];
  kept: (() => void)[];
  group: { beforeCommit: ((tx: Tx) => Promise<void>)[] };
}

/** A {@link Tx} with its flush and close (see {@link openTx}). */
export interface OpenTx {
  tx: Tx;
  flush: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * A {@link Tx} on `manager`. With `hooks` it is a write call's: it has
 * before-commit hooks and queues {@link Tx.insertLater} rows, which
 * `flush` writes (after any write still running); `close` drops what is
 * still queued and resolves once no write is running (before a rollback);
 * after `close`, insertLater throws (a row queued after the call ended
 * would be lost).
 */
export function openTx(statements: StatementRunner, manager: EntityManager, hooks?: CallHooks): OpenTx {
  const dialect = statements.dialect;
  const outside = (what: string): never => {
    throw new Error(`${what} outside a write transaction`);
  };
  const deferred = hooks ? new DeferredInserts() : null;
  const eager = EAGER_ROWS[dialect];
  let flushing: Promise<void> | null = null;
  /** The first write that failed: every later statement and flush of this Tx throws its error. */
  let failed: { error: unknown } | null = null;
  let closed = false;
  // Each write waits for the one before it (rows stay in order; a failure fails every later wait).
  const write = (runs: QueuedWrite[]): Promise<void> => {
    const before = flushing;
    const p = (async () => {
      if (before) await before;
      await statements.writeRuns(manager, runs);
    })();
    flushing = p;
    // Also marks a failure of an early write as handled: it is rethrown by the next statement or flush.
    p.then(
      () => {
        if (flushing === p) flushing = null;
      },
      (e: unknown) => {
        failed ??= { error: e };
        if (flushing === p) flushing = null;
      },
    );
    return p;
  };
  /** The queue of this write call, once `values` pass {@link refuseNul}. */
  const queue = (what: string, values: readonly unknown[]): DeferredInserts => {
    if (!deferred) throw new Error(`${what} outside a write transaction`);
    if (closed) throw new Error(`${what} after its write call ended`);
    refuseNul(values);
    return deferred;
  };
  const flush = async (): Promise<void> => {
    if (deferred && !deferred.empty) await write(deferred.take()).catch(() => undefined);
    else if (flushing) await flushing.catch(() => undefined);
    if (failed) throw failed.error;
  };
  const tx: Tx = {
    dialect,
    group: hooks?.group ?? {},
    beforeCommit: (hook) => (hooks ? void hooks.before.push(hook) : outside('beforeCommit')),
    whenKept: (fn) => (hooks ? void hooks.kept.push(fn) : outside('whenKept')),
    beforeGroupCommit: (hook) => (hooks ? void hooks.group.beforeCommit.push(hook) : outside('beforeGroupCommit')),
    insertLater: (table, columns, values) => {
      // Enough rows for a statement: sent now, not awaited (see EAGER_ROWS).
      if (queue('insertLater', values).add(table, columns, values) >= eager && eager > 0) void write(deferred!.takeFull(eager));
    },
    updateLater: (table, columns, values, key, keyValues) => queue('updateLater', [...values, ...keyValues]).update(table, columns, values, key, keyValues),
    query: async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
      refuseNul(params);
      // Read-your-writes: the rows queued so far are written before anything else runs.
      if (flushing || failed || (deferred && !deferred.empty)) await flush();
      const text = dialect === 'postgres' ? toPostgresPlaceholders(sql) : sql;
      return statements.run<T>(manager, text, params);
    },
  };
  return {
    tx,
    flush,
    close: async () => {
      closed = true;
      deferred?.take();
      // A write sent early may still be running: it must end before the savepoint (or transaction) is rolled back.
      await flushing?.catch(() => undefined);
    },
  };
}
