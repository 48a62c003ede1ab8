/**
 * DATABASE_URL parsing: `sqlite:<path>` (default `sqlite:./data/ledger.sqlite`),
 * `sqlite::memory:` for tests, or a `postgres://` / `postgresql://` URL.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DataSourceOptions } from 'typeorm';

import type { MigrationClass } from '../../migrations';

export type { MigrationClass };

export type Dialect = 'sqlite' | 'postgres';

export const DEFAULT_DATABASE_URL = 'sqlite:./data/ledger.sqlite';

/** Which dialect a DATABASE_URL names; throws on anything else. */
export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres';
  throw new Error(`DATABASE_URL must be sqlite:<path> or postgres://..., got ${url.split(':')[0]}:...`);
}


/**
 * TypeORM options for `url`. Schema comes only from migrations, run at
 * start; `synchronize` is never used. SQLite runs in WAL mode with a busy
 * timeout; its parent folder is created when missing.
 */
export function dataSourceOptions(url: string, migrations: MigrationClass[]): DataSourceOptions {
  const dialect = dialectOf(url);
  if (dialect === 'sqlite') {
    const path = url.slice('sqlite:'.length);
    const database = path === ':memory:' ? ':memory:' : resolve(path);
    if (database !== ':memory:') mkdirSync(dirname(database), { recursive: true });
    return {
      type: 'better-sqlite3',
      database,
      enableWAL: database !== ':memory:',
      timeout: 10_000,
      prepareDatabase: (db: { pragma(s: string): unknown }) => {
        db.pragma('synchronous = FULL');
        db.pragma('foreign_keys = ON');
        // Issue 29: an erased payload's bytes are overwritten with zeros in the file, not left in free pages.
        db.pragma('secure_delete = ON');
      },
      migrations,
      migrationsRun: false, // run by DatabaseModule under a lock (runMigrationsLocked)
      migrationsTransactionMode: 'each',
      synchronize: false,
      logging: false,
    };
  }
  return {
    type: 'postgres',
    url,
    migrations,
    migrationsRun: false, // run by DatabaseModule under a lock (runMigrationsLocked)
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: { max: 10 },
  };
}
