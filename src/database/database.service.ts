/**
 * The write path: transactions, commit groups and deferred inserts. The
 * unit of work and its input errors are in tx.ts, a call's Tx handle in open-tx.ts, the statements sent to
 * the driver in statement-runner.ts, the migration runner in migrate.ts
 * (re-exported here for the callers that import them from this file).
 */
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type BetterSqlite3 from 'better-sqlite3';
import { Dialect } from './database-url';
import { CallHooks, openTx } from './open-tx';
import { Queryable, toPostgresPlaceholders } from './rows';
import { sqliteTx } from './scratch';
import { StatementRunner } from './statement-runner';
import { Tx, WriteObserver } from './tx';
import type { WalSync } from './wal-sync';

export { toPostgresPlaceholders } from './rows';
export * from './tx';
export { runMigrationsLocked } from './migrate';

/**
 * Group commit (issue 17): concurrent {@link DatabaseService.write} calls
 * run in one database transaction, each in its own SAVEPOINT, with one
 * COMMIT. `max` calls at most per group (1: group commit off, every call
 * its own transaction); a group starts when it is full or when its oldest
 * call has waited `maxWaitMs` milliseconds (0: only the calls already
 * queued, with no added wait).
 */
export interface GroupCommitOptions {
  max: number;
  maxWaitMs: number;
}

/** Group commit off: one transaction per call. */
export const NO_GROUP_COMMIT: GroupCommitOptions = { max: 1, maxWaitMs: 0 };

/** A queued {@link DatabaseService.write} call. */
interface WriteCall {
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  queuedAt: number;
  /** Runs in a group of its own (see {@link DatabaseService.write}). */
  alone: boolean;
  /** Yields to every other waiting call (see {@link DatabaseService.write}). */
  background: boolean;
}


/** Advisory lock key that serializes ledger appends across API replicas and workers. */
const APPEND_LOCK_KEY = 0x4145_5231; // "AER1"

/**
 * The only place with database I/O besides migrations. Write transactions
 * are serialized: in-process by a queue (SQLite has one connection and one
 * writer), and across processes by a PostgreSQL advisory transaction lock,
 * so the global event order and the ledger hash chain never fork.
 */
@Injectable()
export class DatabaseService implements OnApplicationShutdown {
  readonly dialect: Dialect;
  private readonly statements: StatementRunner;
  private observer: WriteObserver | null = null;

  /**
   * @param dataSource the read-write connection (migrations already run).
   * @param readDataSource for a SQLite file: a second, read-only connection, so
   *   reads outside a write transaction see only committed data (WAL). SQLite has
   *   one write connection, and a read on it could see a transaction that later
   *   rolls back. PostgreSQL's pool gives each query its own connection already.
   * @param groupCommit see {@link GroupCommitOptions} (GROUP_COMMIT_MAX, GROUP_COMMIT_MAX_WAIT_MS).
   * @param walSync a SQLite file written with `synchronous = NORMAL`: each group is acknowledged once this fsync of its WAL is done (see wal-sync.ts).
   */
  constructor(
    readonly dataSource: DataSource,
    private readonly readDataSource?: DataSource,
    private readonly groupCommit: GroupCommitOptions = NO_GROUP_COMMIT,
    private readonly walSync?: WalSync,
  ) {
    this.dialect = dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
    this.statements = new StatementRunner(this.dialect);
  }

  /**
   * Where another connection (a worker thread's) can read this database: a
   * SQLite file or a PostgreSQL URL; null for an in-memory SQLite database,
   * which only its own connection sees.
   */
  get connectionTarget(): { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string } | null {
    const o = this.dataSource.options as { type: string; database?: unknown; url?: unknown };
    if (o.type === 'postgres') return typeof o.url === 'string' ? { dialect: 'postgres', url: o.url } : null;
    return typeof o.database === 'string' && o.database !== ':memory:' ? { dialect: 'sqlite', file: o.database } : null;
  }

  private wrap(manager: EntityManager): Tx {
    return openTx(this.statements, manager).tx;
  }


  /**
   * True when reads outside a write may see a write still in progress (an
   * in-memory SQLite database has one connection for both): readers that must
   * not show uncommitted events bound themselves by what was seen committed.
   */
  get readsMaySeeUncommitted(): boolean {
    return this.dialect === 'sqlite' && this.readDataSource === undefined;
  }

  /** Hooks to run once each open write transaction has committed. */
  private readonly commitHooks = new WeakMap<Tx, (() => void)[]>();

  /**
   * Run `fn` (synchronous, must not throw) after the write transaction `tx`
   * commits; never when it rolls back. A no-op for a `tx` not opened by
   * {@link write}. The ledger's in-process "new events" notification uses it.
   */
  afterCommit(tx: Tx, fn: () => void): void {
    this.commitHooks.get(tx)?.push(fn);
  }

  /** Read outside a write transaction: sees committed data only. */
  query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.wrap((this.readDataSource ?? this.dataSource).manager).query<T>(sql, params);
  }

  /** Run a statement on the write connection outside the queue (tests and operator tooling only). */
  unsafeQuery<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.wrap(this.dataSource.manager).query<T>(sql, params);
  }

  /** Report every write transaction's times and outcome to `observer` (the metrics; one observer, the last set). */
  observeWrites(observer: WriteObserver): void {
    this.observer = observer;
  }

    /**
   * Run `fn` in one write transaction: all of its work commits or none of it
   * does, and the promise settles only after that (resolves after COMMIT,
   * rejects with `fn`'s error, or with the COMMIT's). Serialized with every
   * other write (see class comment).
   *
   * Group commit ({@link GroupCommitOptions}): calls queued together run one
   * after the other, in arrival order, in ONE database transaction, each
   * inside its own SAVEPOINT and with its own {@link Tx} handle (so state a
   * service keys by Tx is per call). A call that throws, including from its
   * before-commit hooks, is rolled back to its savepoint and fails alone; the
   * calls after it see none of its work. A call's before-commit hooks run
   * inside its savepoint, right after `fn` (the next call sees their work);
   * its after-commit hooks run only once the whole group has committed. If
   * the group's transaction fails as a whole (COMMIT, or a savepoint that
   * cannot be rolled back to), every call of the group fails and nothing of
   * the group is written. `options.alone`: run in a group of its own (a call
   * that must see only committed data, e.g. a copy of the database).
   * `options.background` (with `alone`): long maintenance work, such as an
   * erasure page; every call queued behind it that is not background runs
   * first, so requests wait for at most the one background call running.
   */
  write<T>(fn: (tx: Tx) => Promise<T>, options: { alone?: boolean; background?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ fn, resolve: resolve as (v: unknown) => void, reject, queuedAt: performance.now(), alone: options.alone === true || options.background === true, background: options.background === true });
      this.schedule();
    });
  }

  /** Calls waiting for a group, in arrival order. */
  private readonly waiting: WriteCall[] = [];
  /** The group running now, if any. */
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  /** Start the next group now, or when its oldest call has waited `maxWaitMs` (see {@link GroupCommitOptions}). */
  private schedule(): void {
    if (this.running || this.waiting.length === 0 || this.immediate) return;
    const { max, maxWaitMs } = this.groupCommit;
    const waited = performance.now() - this.waiting[0].queuedAt;
    if (max <= 1 || this.waiting.length >= max || this.waiting.some((c) => c.alone) || (maxWaitMs > 0 && waited >= maxWaitMs)) {
      this.startGroup();
    } else if (maxWaitMs <= 0) {
      // No added wait: still gather the calls made in this turn of the event loop.
      this.immediate = true;
      setImmediate(() => {
        this.immediate = false;
        this.startGroup();
      });
    } else {
      this.timer ??= setTimeout(() => {
        this.timer = null;
        this.startGroup();
      }, maxWaitMs - waited);
    }
  }
  private immediate = false;

  private startGroup(): void {
    if (this.running || this.waiting.length === 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const { max } = this.groupCommit;
    // Background calls wait while any other call waits (they keep their order among themselves).
    const first = this.waiting[0].background ? Math.max(0, this.waiting.findIndex((c) => !c.background)) : 0;
    let n = first + 1;
    if (!this.waiting[first].alone) while (n < this.waiting.length && n - first < max && !this.waiting[n].alone) n++;
    const group = this.waiting.splice(first, n - first);
    this.running = this.runGroup(group).finally(() => {
      this.running = null;
      this.schedule();
    });
  }

  /** Run one group (see {@link write}); settles every call's promise. Never rejects. */
  private async runGroup(calls: WriteCall[]): Promise<void> {
    const begun = performance.now();
    const waited = calls.map((c) => (begun - c.queuedAt) / 1000);
    const grouped = calls.length > 1;
    const done: { call: WriteCall; tx: Tx; value: unknown; after: (() => void)[]; waited: number }[] = [];
    const failed = new Map<WriteCall, unknown>();
    let bodyDone = 0;
    try {
      await this.dataSource.transaction(async (manager) => {
        const pg = this.dialect === 'postgres';
        // The call whose SAVEPOINT is already open. On PostgreSQL a SAVEPOINT rides with the statement before it, in one
        // simple-protocol message (statements run in order; the first that fails stops the rest and fails the message).
        let opened = -1;
        if (pg) {
          await manager.query(`SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})${grouped ? '; SAVEPOINT aer1_call_0' : ''}`);
          if (grouped) opened = 0;
        }
        const group: CallHooks['group'] = { beforeCommit: [] };
        for (let i = 0; i < calls.length; i++) {
          const call = calls[i];
          const hooks: CallHooks = { before: [], kept: [], group };
          const beforeHooks = hooks.before;
          const after: (() => void)[] = [];
          const open = openTx(this.statements, manager, hooks);
          const tx = open.tx;
          this.commitHooks.set(tx, after);
          const started = performance.now();
          if (grouped && opened !== i) await manager.query(`SAVEPOINT aer1_call_${i}`);
          // The next call's SAVEPOINT, sent with this call's RELEASE or rollback (PostgreSQL).
          const next = pg && i + 1 < calls.length ? `; SAVEPOINT aer1_call_${i + 1}` : '';
          try {
            const value = await call.fn(tx);
            // The call's queued rows are written inside its savepoint, before its hooks (which may read them) and after them.
            await open.flush();
            for (let k = 0; k < beforeHooks.length; k++) await beforeHooks[k]();
            await open.flush();
            await open.close();
            if (grouped) {
              // If this fails, the catch below rolls back to savepoint i: that works only when the RELEASE itself
              // failed (the call fails alone, as a lone RELEASE's failure would); after a RELEASE that succeeded the
              // savepoint is gone, the rollback fails, and so does the whole group.
              await manager.query(`RELEASE SAVEPOINT aer1_call_${i}${next}`);
              if (next) opened = i + 1;
            }
            for (const f of hooks.kept) f();
            done.push({ call, tx, value, after, waited: waited[i] });
          } catch (e) {
            await open.close();
            this.commitHooks.delete(tx);
            if (!grouped) throw e;
            failed.set(call, e);
            // Undo this call alone. If even that fails, the transaction cannot go on: the whole group fails.
            if (pg) {
              await manager.query(`ROLLBACK TO SAVEPOINT aer1_call_${i}; RELEASE SAVEPOINT aer1_call_${i}${next}`);
              if (next) opened = i + 1;
            } else {
              await manager.query(`ROLLBACK TO SAVEPOINT aer1_call_${i}`);
              await manager.query(`RELEASE SAVEPOINT aer1_call_${i}`);
            }
            this.observer?.writeFinished([tx], false, { waited: [waited[i]], total: (performance.now() - started) / 1000, commit: 0 });
          }
        }
        // Work the kept calls share (added by them as they ran): a throw here fails the whole group.
        if (group.beforeCommit.length > 0) {
          // The group's own handle: its queued rows are written before COMMIT; it adds no hooks of its own.
          const own = openTx(this.statements, manager, { before: [], kept: [], group });
          for (let k = 0; k < group.beforeCommit.length; k++) await group.beforeCommit[k](own.tx);
          try {
            await own.flush();
          } finally {
            await own.close();
          }
        }
        bodyDone = performance.now();
      });
    } catch (e) {
      return this.failGroup(calls, done, failed, begun, e);
    }
    const settle = (): void => {
      const end = performance.now();
      if (done.length > 0) this.observer?.writeFinished(done.map((d) => d.tx), true, { waited: done.map((d) => d.waited), total: (end - begun) / 1000, commit: (end - bodyDone) / 1000 });
      this.acknowledge(done, failed);
    };
    if (!this.walSync || done.length === 0) return settle();
    // Committed, not yet acknowledged: once the WAL is on disk. The next group runs meanwhile (its own fsync covers it).
    this.walSync.sync().then(settle, (e: unknown) => this.failGroup(calls, done, failed, begun, e));
  }

  /** Nothing of the group is written (or durable): every call fails, with its own error if it had one. */
  private failGroup(calls: WriteCall[], done: { tx: Tx; waited: number }[], failed: Map<WriteCall, unknown>, begun: number, e: unknown): void {
    this.observer?.writeFinished(done.map((d) => d.tx), false, { waited: done.map((d) => d.waited), total: (performance.now() - begun) / 1000, commit: 0 });
    for (const c of calls) c.reject(failed.get(c) ?? e);
  }

  /** Settle a committed (and durable) group's calls: failed ones rejected, then each kept one's after-commit hooks and its answer. */
  private acknowledge(done: { call: WriteCall; value: unknown; after: (() => void)[] }[], failed: Map<WriteCall, unknown>): void {
    for (const [call, error] of failed) call.reject(error);
    for (const d of done) {
      for (const h of d.after) {
        try {
          h();
        } catch {
          // A hook is a notification after the fact: it cannot undo or fail the committed write.
        }
      }
      d.call.resolve(d.value);
    }
  }

  /** Resolves once everything committed before the call is on disk (a SQLite file written with NORMAL; else at once): before publishing what was read. */
  durable(): Promise<void> {
    return this.walSync ? this.walSync.sync() : Promise.resolve();
  }

  /** Resolves once no write is queued, running or waiting for its fsync. */
  private async drained(): Promise<void> {
    while (this.running || this.waiting.length > 0 || this.walSync?.busy) {
      if (this.running) await this.running;
      else await new Promise<void>((resolve) => setTimeout(resolve, 1));
    }
  }

  /**
   * Run `fn` on one consistent read snapshot of the committed database,
   * without holding the write lock (writes go on meanwhile and are not seen):
   * PostgreSQL, a REPEATABLE READ READ ONLY transaction on its own pooled
   * connection; a SQLite file, a read transaction on a connection of its own
   * (WAL keeps the snapshot). An in-memory SQLite database (tests) has a
   * single connection, on which an open write transaction would be visible:
   * it is copied (serialized, one synchronous step) between two write
   * transactions, and `fn` reads the copy.
   */
  async snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres') {
      const runner = this.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query('START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        try {
          return await fn({ query: async <R>(sql: string, params: unknown[] = []) => (await runner.query(toPostgresPlaceholders(sql), params)) as R[] });
        } finally {
          await runner.query('ROLLBACK').catch(() => undefined);
        }
      } finally {
        await runner.release();
      }
    }
    const Database = (await import('better-sqlite3')).default;
    const file = (this.dataSource.options as { database?: unknown }).database;
    let db: BetterSqlite3.Database;
    if (typeof file === 'string' && file !== ':memory:') {
      db = new Database(file, { readonly: true, fileMustExist: true, timeout: 10_000 });
      db.exec('BEGIN');
      db.prepare('SELECT COUNT(*) AS n FROM events').get(); // the first read fixes the snapshot
    } else {
      const handle = (this.dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database }).databaseConnection;
      const copy = await this.write(async () => handle.serialize(), { alone: true });
      db = new Database(copy);
    }
    try {
      return await fn(sqliteTx(db));
    } finally {
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
    }
  }

  /** True when the database answers. */
  ping(): Promise<boolean> {
    return this.query('SELECT 1 AS ok').then(() => true, () => false);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.drained();
    await this.walSync?.close();
    if (this.readDataSource?.isInitialized) await this.readDataSource.destroy();
  }
}
