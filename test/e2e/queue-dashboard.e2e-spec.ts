import { randomBytes } from 'node:crypto';
import { dashboardKey } from '../../src/verification-queue/queue-dashboard';
import { startApp, TestApp } from '../helpers/app';

describe('queue dashboard at /queues (Redis mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite', { REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: `aer1-dash-${randomBytes(4).toString('hex')}` });
  });
  afterAll(async () => {
    await t.close();
  });
  const basic = (key: string): string => `Basic ${Buffer.from(`auditor:${key}`).toString('base64')}`;

  it('asks for credentials without a key, refuses the wrong role, and is served to auditors and admins', async () => {
    const none = await t.http.get('/queues');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic realm="aer1 queues"/);
    expect(none.body.error).toBe('missing_key');
    const producer = await t.http.get('/queues').set('Authorization', `Bearer ${t.keys.producer}`);
    expect(producer.status).toBe(403);
    expect(producer.body.error).toBe('forbidden_role');
    const auditor = await t.http.get('/queues').set('Authorization', basic(t.keys.auditor));
    expect(auditor.status).toBe(200);
    expect(auditor.text).toMatch(/<html/i);
    const admin = await t.http.get('/queues').set('Authorization', `Bearer ${t.keys.admin}`);
    expect(admin.status).toBe(200);
  });

  it('protects the dashboard API under /queues too', async () => {
    expect((await t.http.get('/queues/api/queues')).status).toBe(401);
    const r = await t.http.get('/queues/api/queues').set('Authorization', basic(t.keys.auditor));
    expect(r.status).toBe(200);
    expect(r.body.queues.map((q: { name: string; readOnlyMode: boolean }) => [q.name, q.readOnlyMode])).toEqual([['verification', true]]);
  });

  it('reads the key from Bearer or Basic credentials only', () => {
    expect(dashboardKey('Bearer k1')).toBe('k1');
    expect(dashboardKey(`Basic ${Buffer.from('me:k2:with:colons').toString('base64')}`)).toBe('k2:with:colons');
    expect(dashboardKey('Digest x')).toBeUndefined();
    expect(dashboardKey(undefined)).toBeUndefined();
  });
});
