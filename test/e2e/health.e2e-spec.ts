/**
 * `/health` reports the database and, when REDIS_URL is set, Redis
 * (honest answers issue; it used to answer `ok` with only the database while
 * Redis was down and every batch answered 503).
 */
import { randomBytes } from 'node:crypto';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { startApp, TestApp } from '../helpers/app';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('/health', () => {
  jest.setTimeout(30_000);
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('without REDIS_URL: ok, the database only', async () => {
    t = await startApp('sqlite');
    await t.app.get(CheckpointSigner).tick();
    const r = await t.http.get('/health');
    expect(r.status).toBe(200);
    const log = { status: 'up', origin: 'ledger.test', signing: 'active', checkpoint_size: 0, checkpoint_age_seconds: expect.any(Number) };
    expect(r.body.details.log.checkpoint_age_seconds).toBeLessThan(30);
    expect(r.body).toEqual({ status: 'ok', info: { database: { status: 'up', dialect: 'sqlite' }, log }, error: {}, details: { database: { status: 'up', dialect: 'sqlite' }, log } });
  });

  it('with Redis up: ok, database and redis up', async () => {
    t = await startApp('sqlite', { REDIS_URL, QUEUE_PREFIX: `aer1t_health_${randomBytes(4).toString('hex')}` });
    const r = await t.http.get('/health');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
    expect(r.body.details).toEqual({ database: { status: 'up', dialect: 'sqlite' }, log: expect.objectContaining({ status: 'up', signing: 'active' }), redis: { status: 'up' } });
  });

  it('with Redis down: 200 degraded, redis down, while batches answer 503 (was: 200 ok, Redis not reported)', async () => {
    t = await startApp('sqlite', { REDIS_URL: 'redis://127.0.0.1:6391', QUEUE_PREFIX: `aer1t_health_${randomBytes(4).toString('hex')}` });
    const fresh = Date.now();
    const first = await t.http.get('/health'); // before anything used the queue's connection
    expect(Date.now() - fresh).toBeLessThan(2900);
    expect([first.status, first.body.status, first.body.details.redis.status]).toEqual([200, 'degraded', 'down']);
    const batch = await t.http.post('/api/verification-batches').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send('{"scope":"all"}');
    expect([batch.status, batch.body.error]).toEqual([503, 'queue_unavailable']);
    const started = Date.now();
    const r = await t.http.get('/health');
    expect(Date.now() - started).toBeLessThan(2900); // within compose's 3 s health check timeout
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
    expect(r.body.status).toBe('degraded');
    expect(r.body.info).toEqual({ database: { status: 'up', dialect: 'sqlite' }, log: expect.objectContaining({ status: 'up', signing: 'active' }) });
    expect(r.body.details.database).toEqual({ status: 'up', dialect: 'sqlite' });
    expect(r.body.details.redis).toEqual({ status: 'down', message: expect.any(String) });
    expect(r.body.error).toEqual({ redis: r.body.details.redis });
  });
});
