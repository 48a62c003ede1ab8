/**
 * Security review of the 2026-12-01 changes (key cache, request logging,
 * group commit): each test is a finding or a probe that held.
 */
import express from 'express';
import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ApiKeysRepository } from '../../src/auth/api-keys.repository';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { REDACTED_PATHS, requestLogging } from '../../src/common/request-log';
import { startApp, TestApp } from '../helpers/app';
import { call, listen } from './helpers';

describe('API key cache (KEY_CACHE_MS): revocation through this process', () => {
  jest.setTimeout(30_000);
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp('sqlite');
    base = await listen(t.app);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  it('a key revoked while a request authenticating it reads its row is not cached: the next request is 401 key_revoked', async () => {
    const made = await call(base, 'POST', '/api/keys', { key: t.keys.admin, body: JSON.stringify({ name: `victim-${randomUUID().slice(0, 8)}`, role: 'admin' }) });
    expect(made.status).toBe(201);
    const victim = made.body.key as string;
    const victimHash = createHash('sha256').update(victim, 'utf8').digest('hex');
    // The victim's row is read (not revoked yet), and the answer is delivered only after the revocation returned.
    const repo = (t.app.get(ApiKeysService) as unknown as { keys: ApiKeysRepository }).keys;
    const byHash = repo.byHash.bind(repo);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let read!: () => void;
    const rowRead = new Promise<void>((r) => (read = r));
    jest.spyOn(repo, 'byHash').mockImplementation(async (q, hash) => {
      const row = await byHash(q, hash);
      if (hash === victimHash) {
        read();
        await gate;
      }
      return row;
    });
    const inFlight = call(base, 'GET', '/api/keys', { key: victim });
    await rowRead;
    expect((await call(base, 'DELETE', `/api/keys/${made.body.id}`, { key: t.keys.admin })).status).toBe(204);
    release();
    // Began before the revocation: may be answered.
    expect((await inFlight).status).toBe(200);
    // After DELETE answered 204, this process must refuse the key at once (README: "revoked here: at once").
    const after = await call(base, 'GET', '/api/keys', { key: victim });
    expect([after.status, after.body?.error]).toEqual([401, 'key_revoked']);
    jest.restoreAllMocks();
  });

  it('unknown keys are never cached, and a burst of them does not grow the cache', async () => {
    const svc = t.app.get(ApiKeysService);
    const active = (svc as unknown as { active: Map<string, unknown> }).active;
    const before = active.size;
    for (let i = 0; i < 50; i++) expect((await call(base, 'GET', '/api/keys', { key: `unknown-${randomUUID()}` })).status).toBe(401);
    expect(active.size).toBe(before);
  });
});

describe('request logging (pino-http over REDACTED_PATHS)', () => {
  /** The log lines written while one request with `headers` to `path` is answered with `status`, at level trace. */
  async function logged(path: string, headers: Record<string, string>, status = 200): Promise<string> {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString('utf8'));
        cb();
      },
    });
    const logger = pino({ level: 'trace', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
    const mw = requestLogging({ pinoHttp: { logger, autoLogging: true } });
    expect(mw).not.toBeNull();
    const app = express();
    app.use(mw!);
    app.use((_req, res) => void res.status(status).json({ ok: status < 400 }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((r) => server.once('listening', () => r()));
    const { port } = server.address() as { port: number };
    try {
      await fetch(`http://127.0.0.1:${port}${path}`, { headers });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    await new Promise((r) => setImmediate(r));
    return lines.join('');
  }

  it('Authorization and Cookie are redacted; the request line is written', async () => {
    const text = await logged('/api/keys', { authorization: 'Bearer sekrit-bearer-0001', cookie: 'session=sekrit-cookie-0002' });
    expect(text).toContain('"url":"/api/keys"');
    expect(text).not.toContain('sekrit-bearer-0001');
    expect(text).not.toContain('sekrit-cookie-0002');
  });

  it('a 5xx answer is logged, with its error', async () => {
    const text = await logged('/boom', {}, 500);
    const line = JSON.parse(text.trim().split('\n').pop()!) as { level: number; msg: string; err: { message: string }; res: { statusCode: number } };
    expect([line.res.statusCode, line.msg, line.err.message]).toEqual([500, 'request errored', 'failed with status code 500']);
    // Observation, not asserted: without customLogLevel pino-http writes it at info (30), as nestjs-pino did before.
    expect(line.level).toBe(30);
  });

  it('other credential headers (Proxy-Authorization, X-Api-Key) are not written', async () => {
    const text = await logged('/api/keys', { 'proxy-authorization': 'Basic c2Vrcml0LXByb3h5LTAwMDM=', 'x-api-key': 'sekrit-xkey-0004' });
    expect(text).not.toContain('c2Vrcml0LXByb3h5LTAwMDM=');
    expect(text).not.toContain('sekrit-xkey-0004');
  });
});
