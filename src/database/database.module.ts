import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions, dialectOf } from './database-url';
import { DatabaseService, GroupCommitOptions, runMigrationsLocked } from './database.service';
import { WalCheckpointer, type WriterPragma } from './wal-checkpointer';
import { WalSync } from './wal-sync';

/** TypeORM connection from DATABASE_URL, migrations run at start; exposes {@link DatabaseService} (group commit from GROUP_COMMIT_MAX, GROUP_COMMIT_MAX_WAIT_MS). */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) => {
        const url = config.get('DATABASE_URL', { infer: true });
        return dataSourceOptions(url, MIGRATIONS[dialectOf(url)]);
      },
    }),
  ],
  providers: [
    {
      provide: DatabaseService,
      inject: [DataSource, ConfigService],
      useFactory: async (ds: DataSource, config: ConfigService<AppConfig, true>) => {
        await runMigrationsLocked(ds);
        const group: GroupCommitOptions = { max: config.get('GROUP_COMMIT_MAX', { infer: true }), maxWaitMs: config.get('GROUP_COMMIT_MAX_WAIT_MS', { infer: true }) };
        const o = ds.options;
        if (o.type !== 'better-sqlite3' || o.database === ':memory:') return new DatabaseService(ds, undefined, group);
        // A read-only second connection: reads see committed data only (see DatabaseService).
        const reader = new DataSource({ type: 'better-sqlite3', database: o.database, readonly: true, timeout: 10_000 });
        await reader.initialize();
        // Durable without blocking the event loop (issue 34): COMMIT writes the WAL, and each group is acknowledged
        // once an fsync of the WAL on the thread pool covers it (wal-sync.ts). Migrations above ran with FULL.
        await ds.query('PRAGMA synchronous = NORMAL');
        // WAL checkpoints in a worker thread, off the event loop (issue 34; wal-checkpointer.ts): the writer's
        // auto-checkpoint is off from here (after the migrations) while the worker runs.
        const writer = (ds.driver as unknown as { databaseConnection: WriterPragma }).databaseConnection;
        const checkpointer = new WalCheckpointer(o.database, writer);
        const service = new DatabaseService(ds, reader, group, new WalSync(`${o.database}-wal`, checkpointer));
        checkpointer.hold = (fn) => service.write(fn, { alone: true });
        return service;
      },
    },
  ],
  exports: [DatabaseService],
})
export class DatabaseModule {}
