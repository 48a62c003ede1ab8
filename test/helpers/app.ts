/**
 * Test harness: the real application (same factory as `npm start`) on a
 * fresh database: in-memory SQLite, or a new PostgreSQL database created on
 * the local server and dropped afterwards.
 */
import { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp } from '../../src/app.factory';
import { ApiKeysService, Role } from '../../src/auth/api-keys.service';
import { createSigningKeyFile } from '../../src/log/log-key';

let pgKeyFile: string | undefined;
/**
 * A log signing key file for PostgreSQL test apps (one per test process: the
 * embedded default makes one only beside a SQLite file). Origin `ledger.test`,
 * matching the tests' PUBLIC_BASE_URL.
 */
export function testSigningKeyFile(): string {
  if (!pgKeyFile) {
    pgKeyFile = join(mkdtempSync(join(tmpdir(), 'aer1-logkey-')), 'log-signing.key');
    createSigningKeyFile(pgKeyFile, 'ledger.test');
  }
  return pgKeyFile;
}

/** The checkpoint state file {@link startApp} gives a PostgreSQL database signed with {@link testSigningKeyFile}: one per database. */
export function testStateFile(databaseUrl: string): string {
  return join(dirname(testSigningKeyFile()), `${databaseUrl.replace(/^.*\//, '').replace(/[^A-Za-z0-9_-]/g, '_')}.checkpoint`);
}

export type TestDialect = 'sqlite' | 'postgres';

/** The PostgreSQL server the tests use (trust auth on the local machine). */
export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestApp {
  app: INestApplication;
  http: TestAgent;
  dialect: TestDialect;
  databaseUrl: string;
  keys: Record<Role, string>;
  close(): Promise<void>;
}

/** Create a throwaway PostgreSQL database; returns its URL and a drop function. */
export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `aer1_t_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    drop: async () => {
      const c = new Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Start the app on a fresh database with one API key per role. */
export async function startApp(dialect: TestDialect, env: Record<string, string> = {}): Promise<TestApp> {
  let databaseUrl = env.DATABASE_URL ?? 'sqlite::memory:';
  let drop: (() => Promise<void>) | undefined;
  if (dialect === 'postgres' && !env.DATABASE_URL) {
    const db = await createPgDatabase();
    databaseUrl = db.url;
    drop = db.drop;
  }
  // Suites read freely (one shared public read budget per client would throttle them); a suite that tests the limit sets its own.
  // LEDGER_SIGNING_KEY_FILE '' starts PostgreSQL without a log key (nothing signed, no ledger-issued commitments).
  const { LEDGER_SIGNING_KEY_FILE: keyFile, ...rest } = env;
  const signing: Record<string, string> = keyFile === '' ? {} : keyFile !== undefined ? { LEDGER_SIGNING_KEY_FILE: keyFile } : databaseUrl.startsWith('postgres') ? { LEDGER_SIGNING_KEY_FILE: testSigningKeyFile() } : {};
  // The shared test key signs many throwaway databases (each a history of its own): each database gets its own state file
  // (src/log/checkpoint-state.ts), kept across restarts on that database; a test may set LEDGER_CHECKPOINT_STATE_FILE itself.
  if (signing.LEDGER_SIGNING_KEY_FILE !== undefined && signing.LEDGER_SIGNING_KEY_FILE === pgKeyFile && rest.LEDGER_CHECKPOINT_STATE_FILE === undefined) {
    signing.LEDGER_CHECKPOINT_STATE_FILE = testStateFile(databaseUrl);
  }
  // Checkpoints are signed when a test asks (CheckpointSigner.tick()), not on a clock: what a page says is then decided by the test.
  const app = await createApp({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://ledger.test', LOG_LEVEL: 'silent', VERIFY_RATE_LIMIT: '1000000', CHECKPOINT_INTERVAL_MS: '3600000', ...signing, ...rest, DATABASE_URL: databaseUrl });
  await app.init();
  const svc = app.get(ApiKeysService);
  const keys = {} as Record<Role, string>;
  for (const role of ['producer', 'compliance', 'auditor', 'admin', 'privacy'] as Role[]) keys[role] = (await svc.create(`test-${role}`, role)).key;
  return {
    app,
    http: request(app.getHttpServer()),
    dialect,
    databaseUrl,
    keys,
    close: async () => {
      await app.close();
      if (drop) await drop();
    },
  };
}

/** The dialects an e2e suite runs on: both by default; `TEST_DIALECTS=sqlite` narrows it. */
export const DIALECTS: TestDialect[] = (process.env.TEST_DIALECTS ?? 'sqlite,postgres').split(',').map((s) => s.trim()) as TestDialect[];
