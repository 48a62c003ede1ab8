/**
 * DATABASE_URL parsing: `sqlite:<path>` (default `sqlite:./data/ledger.sqlite`),
 * `sqlite::memory:` for tests, or a `postgres://` / `postgresql://` URL.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DataSourceOptions, MigrationInterface } from 'typeorm';

/** A migration class. */
export type MigrationClass = new () => MigrationInterface;
import { CreateLedgerSqlite1764450000000 } from '../../migrations/sqlite/1764450000000-CreateLedger';
import { CreateLedgerPostgres1764450000000 } from '../../migrations/postgres/1764450000000-CreateLedger';
import { CreatePlansSqlite1764460000000 } from '../../migrations/sqlite/1764460000000-CreatePlans';
import { CreatePlansPostgres1764460000000 } from '../../migrations/postgres/1764460000000-CreatePlans';
import { CreateVerificationBatchesSqlite1764470000000 } from '../../migrations/sqlite/1764470000000-CreateVerificationBatches';
import { CreateVerificationBatchesPostgres1764470000000 } from '../../migrations/postgres/1764470000000-CreateVerificationBatches';
import { KeyAttributionSqlite1764480000000 } from '../../migrations/sqlite/1764480000000-KeyAttribution';
import { KeyAttributionPostgres1764480000000 } from '../../migrations/postgres/1764480000000-KeyAttribution';
import { ListIndexesSqlite1764490000000 } from '../../migrations/sqlite/1764490000000-ListIndexes';
import { ListIndexesPostgres1764490000000 } from '../../migrations/postgres/1764490000000-ListIndexes';
import { VerifiableLogSqlite1764500000000 } from '../../migrations/sqlite/1764500000000-VerifiableLog';
import { VerifiableLogPostgres1764500000000 } from '../../migrations/postgres/1764500000000-VerifiableLog';
import { WebhooksSqlite1764520000000 } from '../../migrations/sqlite/1764520000000-Webhooks';
import { WebhooksPostgres1764520000000 } from '../../migrations/postgres/1764520000000-Webhooks';
import { OutcomesSqlite1764510000000 } from '../../migrations/sqlite/1764510000000-Outcomes';
import { OutcomesPostgres1764510000000 } from '../../migrations/postgres/1764510000000-Outcomes';
import { WitnessingSqlite1764530000000 } from '../../migrations/sqlite/1764530000000-Witnessing';
import { WitnessingPostgres1764530000000 } from '../../migrations/postgres/1764530000000-Witnessing';
import { CommitmentAttestationSqlite1764540000000 } from '../../migrations/sqlite/1764540000000-CommitmentAttestation';
import { CommitmentAttestationPostgres1764540000000 } from '../../migrations/postgres/1764540000000-CommitmentAttestation';
import { WebhookPositionsSqlite1764560000000 } from '../../migrations/sqlite/1764560000000-WebhookPositions';
import { WebhookPositionsPostgres1764560000000 } from '../../migrations/postgres/1764560000000-WebhookPositions';

export type Dialect = 'sqlite' | 'postgres';

export const DEFAULT_DATABASE_URL = 'sqlite:./data/ledger.sqlite';

/** Which dialect a DATABASE_URL names; throws on anything else. */
export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres';
  throw new Error(`DATABASE_URL must be sqlite:<path> or postgres://..., got ${url.split(':')[0]}:...`);
}

/** The migrations of each dialect, in order. */
export const MIGRATIONS: Record<Dialect, MigrationClass[]> = {
  sqlite: [CreateLedgerSqlite1764450000000, CreatePlansSqlite1764460000000, CreateVerificationBatchesSqlite1764470000000, KeyAttributionSqlite1764480000000, ListIndexesSqlite1764490000000, VerifiableLogSqlite1764500000000, OutcomesSqlite1764510000000, WebhooksSqlite1764520000000, WitnessingSqlite1764530000000, CommitmentAttestationSqlite1764540000000, WebhookPositionsSqlite1764560000000],
  postgres: [CreateLedgerPostgres1764450000000, CreatePlansPostgres1764460000000, CreateVerificationBatchesPostgres1764470000000, KeyAttributionPostgres1764480000000, ListIndexesPostgres1764490000000, VerifiableLogPostgres1764500000000, OutcomesPostgres1764510000000, WebhooksPostgres1764520000000, WitnessingPostgres1764530000000, CommitmentAttestationPostgres1764540000000, WebhookPositionsPostgres1764560000000],
};

/**
 * TypeORM options for `url`. Schema comes only from migrations, run at
 * start; `synchronize` is never used. SQLite runs in WAL mode with a busy
 * timeout; its parent folder is created when missing.
 */
export function dataSourceOptions(url: string, extra: { migrations?: MigrationClass[] } = {}): DataSourceOptions {
  const dialect = dialectOf(url);
  const migrations = [...MIGRATIONS[dialect], ...(extra.migrations ?? [])];
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
