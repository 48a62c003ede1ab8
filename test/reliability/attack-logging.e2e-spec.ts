/**
 * Security review of request logging by pino-http (2026-12-01): the API
 * server as a process at LOG_LEVEL trace writes request lines and app logs,
 * and no key, credential header or webhook secret.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminKey, call, freshReceipt, killAll, ServerProcess } from './helpers';

describe('request logging at LOG_LEVEL trace (server process)', () => {
  jest.setTimeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-attack-log-'));
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('request lines and app logs are written; no key in any header, no webhook secret', async () => {
    const admin = adminKey();
    const server = await ServerProcess.start({ DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}`, LEDGER_ADMIN_KEY: admin, LOG_LEVEL: 'trace', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const made = await call(server.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name: 'log-compliance', role: 'compliance' }) });
    expect(made.status).toBe(201);
    const compliance = made.body.key as string;
    const hook = await call(server.url, 'POST', '/api/webhooks', { key: compliance, body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['coverage.report.issued'] }) });
    expect(hook.status).toBe(201);
    const whsec = hook.body.secret as string;
    expect(whsec).toMatch(/^whsec_/);
    const r = freshReceipt();
    await call(server.url, 'POST', '/api/receipts', { headers: { authorization: `Bearer ${compliance}`, 'proxy-authorization': `Bearer ${compliance}`, 'x-api-key': compliance, cookie: `k=${compliance}` }, body: r.text });
    await call(server.url, 'GET', '/api/webhooks', { key: compliance });
    await server.stop();
    const logs = server.stdout.text + server.stderr.text;
    expect(logs).toContain('"url":"/api/webhooks"');
    expect(logs).toContain('[redacted]');
    // App logs (Nest's, through the same pino logger) still written.
    expect(logs).toMatch(/"context":"(NestApplication|NestFactory|InstanceLoader|RoutesResolver)"/);
    for (const s of [admin, compliance, whsec]) {
      expect(logs.includes(s)).toBe(false);
      expect(logs.includes(s.slice(6, 30))).toBe(false);
    }
  });
});
