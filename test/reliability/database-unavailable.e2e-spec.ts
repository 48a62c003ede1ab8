/**
 * A database that stops answering is a 503 `database_unavailable` with
 * Retry-After, never a 500 (src/common/database-unavailable.ts): PostgreSQL's
 * backends of the app are terminated (57P01, what a server restart or a
 * failover does to open connections) and, for connections it cannot get, the
 * database is closed to new ones. Nothing is recorded by a refused write, and
 * the app answers again once the database does.
 */
import { Client } from 'pg';
import { isDatabaseUnavailable } from '../../src/common/database-unavailable';
import { PG_ADMIN_URL, startApp, TestApp } from '../helpers/app';
import { freshReceipt } from './helpers';

describe('database unavailable (PostgreSQL)', () => {
  let t: TestApp;
  let admin: Client;
  let name: string;
  beforeAll(async () => {
    t = await startApp('postgres');
    name = new URL(t.databaseUrl).pathname.slice(1);
    admin = new Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin.end();
    await t.close();
  });

  const post = (r: { text: string }) => t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text);
  const count = async (): Promise<number> => {
    const c = new Client({ connectionString: t.databaseUrl });
    await c.connect();
    try {
      return Number((await c.query('SELECT COUNT(*) AS n FROM receipts')).rows[0].n);
    } finally {
      await c.end();
    }
  };

  it('answers 503 database_unavailable with Retry-After while the database refuses, records nothing, and recovers', async () => {
    const first = freshReceipt();
    expect((await post(first)).status).toBe(201);
    // No new connections, and every open one of the app's pool terminated.
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    const refused = freshReceipt();
    const statuses: [number, string, string | undefined][] = [];
    for (const r of [await post(refused), await t.http.get(`/api/receipts/${first.id}`), await t.http.get(`/run/${first.id}`).set('Accept', 'application/json')]) {
      statuses.push([r.status, r.body.error, r.headers['retry-after']]);
      expect(JSON.stringify(r.body)).not.toMatch(/at .*\.js:\d+|stack/i);
    }
    expect(statuses).toEqual([
      [503, 'database_unavailable', '5'],
      [503, 'database_unavailable', '5'],
      [503, 'database_unavailable', '5'],
    ]);
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    // Back: the refused receipt was not recorded; sent again it is, once.
    expect(await count()).toBe(1);
    expect((await t.http.get(`/api/receipts/${refused.id}`)).status).toBe(404);
    expect((await post(refused)).status).toBe(201);
    expect(await count()).toBe(2);
  });
});

describe('isDatabaseUnavailable', () => {
  it('names the connection, resource and shutdown failures of both databases, and nothing else', () => {
    const yes = [{ code: '57P01' }, { code: '55000', message: 'database "x" is not currently accepting connections' }, { code: '3D000' }, { code: '53300' }, { code: '08006' }, { code: 'ECONNREFUSED' }, { driverError: { code: 'SQLITE_BUSY_SNAPSHOT' } }, { code: 'SQLITE_FULL' }, new Error('Connection terminated unexpectedly'), { message: 'timeout exceeded when trying to connect' }];
    const no = [{ code: '23505' }, { code: '55000', message: 'lock not available' }, { code: '40001' }, { code: 'SQLITE_CONSTRAINT_UNIQUE' }, new Error('boom'), null, 'ECONNREFUSED', { driverError: { code: '42P01' } }];
    expect(yes.map(isDatabaseUnavailable)).toEqual(yes.map(() => true));
    expect(no.map(isDatabaseUnavailable)).toEqual(no.map(() => false));
  });
});
