import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { dataSourceOptions } from './database-url';
import { DatabaseService } from './database.service';

/** TypeORM connection from DATABASE_URL, migrations run at start; exposes {@link DatabaseService}. */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) => dataSourceOptions(config.get('DATABASE_URL', { infer: true })),
    }),
  ],
  providers: [{ provide: DatabaseService, inject: [DataSource], useFactory: (ds: DataSource) => new DatabaseService(ds) }],
  exports: [DatabaseService],
})
export class DatabaseModule {}
