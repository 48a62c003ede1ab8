/**
 * The medium tier: the application's services on their real repositories and
 * a real database (in-memory SQLite, or a throwaway PostgreSQL database),
 * called directly, without HTTP (immich `test/medium`). A Nest application
 * context of the same AppModule `npm start` runs, so wiring is tested too.
 */
import { INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { AppModule } from '../../src/app.module';
import { ApiKeysService, KeyOptions, Principal, Role } from '../../src/auth/api-keys.service';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { parseRequestJson, RawJson } from '../../src/common/raw-json';
import { DatabaseService } from '../../src/database/database.service';
import { createPgDatabase, TestDialect } from '../helpers/app';
import { vector } from '../helpers/corpus';

export { DIALECTS } from '../helpers/app';

export interface Medium {
  dialect: TestDialect;
  get<T>(type: Type<T>): T;
  db: DatabaseService;
  /** A new API key of `role` (with `options`), as the principal its requests carry. */
  principal(role: Role, options?: KeyOptions): Promise<Principal>;
  close(): Promise<void>;
}

/** Start the application context (no HTTP server) on a fresh database. */
export async function startMedium(dialect: TestDialect): Promise<Medium> {
  let url = 'sqlite::memory:';
  let drop: (() => Promise<void>) | undefined;
  if (dialect === 'postgres') ({ url, drop } = await createPgDatabase());
  const ctx: INestApplicationContext = await NestFactory.createApplicationContext(
    AppModule.register({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://ledger.test', LOG_LEVEL: 'silent', DATABASE_URL: url }),
    { logger: false, abortOnError: false },
  );
  const keys = ctx.get(ApiKeysService);
  return {
    dialect,
    get: (type) => ctx.get(type),
    db: ctx.get(DatabaseService),
    principal: async (role, options = {}) => keys.authenticate((await keys.create(`medium-${role}-${randomUUID().slice(0, 8)}`, role, options)).key),
    close: async () => {
      await ctx.close();
      if (drop) await drop();
    },
  };
}

/** A request body as the controllers hand it to a service: exact text and parsed value. */
export function body(value: unknown): RawJson {
  return parseRequestJson(typeof value === 'string' ? value : JSON.stringify(value));
}

/** The valid corpus receipt under a new random id (canonical bytes and output hash stay valid). */
export function freshReceipt(): { id: string; text: string } {
  const v = vector('receipt-core-valid') as Record<string, unknown>;
  const id = randomUUID();
  return { id, text: JSON.stringify({ ...v, id }) };
}

/** A well-formed -07 timeline of `n` entries for `job` (closed when `close`), each linked to the one before. */
export function timeline(job: string, n: number, close = true): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= n; seq++) {
    const e: Record<string, unknown> = {
      seq,
      job_id: job,
      id: randomUUID(),
      tool: `tool_${seq}`,
      provenance_class: 'EXECUTED BY LEDGER',
      canonical_bytes: Buffer.from(JSON.stringify({ job, seq })).toString('base64'),
      prev_digest: prev,
    };
    if (close && seq === n) e.close = true;
    out.push(e);
    prev = entryDigest(e)!;
  }
  return out;
}
