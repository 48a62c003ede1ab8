/** Running the migrations at start (migrations/index.ts lists them), one process at a time. */
import { DataSource } from 'typeorm';

/** Advisory lock key held while migrations run, so replicas started together do not race. */
const MIGRATION_LOCK_KEY = 0x4145_524d; // "AERM"

/**
 * Run pending migrations (migrations/<dialect>/, never `synchronize`). On
 * PostgreSQL a session advisory lock makes processes that start at the same
 * time run them one after the other; the later ones find nothing pending.
 */
export async function runMigrationsLocked(ds: DataSource): Promise<void> {
  if (ds.options.type !== 'postgres') {
    await ds.runMigrations({ transaction: 'each' });
    return;
  }
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await ds.runMigrations({ transaction: 'each' });
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}
