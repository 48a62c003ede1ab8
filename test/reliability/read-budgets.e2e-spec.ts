/**
 * Read budgets (issue 26): a public read sent with a valid API key spends that
 * key's own budget (KEY_READ_RATE_LIMIT), not its address's, so an auditor
 * behind an address that anonymous readers exhausted still reads; an unknown
 * or revoked key gets no key budget. Anonymous IPv6 clients are counted per
 * /64, IPv4-mapped addresses as IPv4. Heavy reads (PDF, ledger verification,
 * export, evidence packs) are limited per process (HEAVY_READ_CONCURRENCY):
 * one more is 429 `server_busy` with Retry-After while cheap reads and
 * /health go on.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { LedgerService } from '../../src/ledger/ledger.service';
import { HeavyReads, KEY_BUDGET_MESSAGE } from '../../src/common/rate-limit';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { call, leaksInternals, listen, makeEntry } from './helpers';

jest.setTimeout(60_000);

describe.each(DIALECTS)('%s: a key has a read budget of its own (VERIFY_RATE_LIMIT=3, KEY_READ_RATE_LIMIT=5)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '3', KEY_READ_RATE_LIMIT: '5' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('anonymous reads exhaust the address; the auditor key from the same address still reads, up to its own budget; a revoked or unknown key reads as anonymous', async () => {
    // A key to revoke (writes need a key and spend no read budget).
    const made = await call(base, 'POST', '/api/keys', { key: t.keys.admin, body: JSON.stringify({ name: 'revoked-reader', role: 'auditor' }) });
    expect(made.status).toBe(201);
    expect((await call(base, 'DELETE', `/api/keys/${made.body.id}`, { key: t.keys.admin })).status).toBe(204);
    // The revoked key spends the address's budget: 3 reads, then 429 with the anonymous message.
    const revoked: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(base, 'GET', '/api/ledger/head', { key: made.body.key });
      revoked.push(r.status);
      expect(r.headers.get('ratelimit-limit')).toBe('3');
      expect(r.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    expect(revoked).toEqual([200, 200, 200]);
    const anon = await call(base, 'GET', '/api/ledger/head');
    expect(anon.status).toBe(429);
    expect(anon.body).toEqual({ error: 'rate_limited', message: expect.stringContaining('VERIFY_RATE_LIMIT') });
    // An unknown key and a malformed header are anonymous too: refused with the address.
    for (const authorization of [`Bearer aer1_${'Z'.repeat(43)}`, `Bearer ${made.body.key}`, `Basic ${Buffer.from(`a:${t.keys.auditor}`).toString('base64')}`]) {
      const r = await call(base, 'GET', '/api/ledger/head', { headers: { authorization } });
      expect({ authorization: authorization.slice(0, 12), status: r.status, error: r.body.error }).toEqual({ authorization: authorization.slice(0, 12), status: 429, error: 'rate_limited' });
    }
    // The auditor's key, same address: its own budget of 5 (the RateLimit-* headers say so), weighted like the anonymous one.
    const keyed: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(base, 'GET', '/api/ledger/head', { key: t.keys.auditor });
      keyed.push(r.status);
      expect([r.headers.get('ratelimit-limit'), r.headers.get('ratelimit-remaining'), r.headers.get('ratelimit-policy')]).toEqual(['5', String(4 - i), '5;w=60']);
    }
    // A keyed read the endpoint uses (an auditor is served withheld bytes) spends the same budget.
    expect((await call(base, 'GET', '/api/ledger/leaves?start=0&count=1', { key: t.keys.auditor })).status).toBeLessThan(429);
    expect((await call(base, 'GET', '/api/ledger/head', { key: t.keys.auditor })).status).toBe(200);
    expect(keyed).toEqual([200, 200, 200]);
    const over = await call(base, 'GET', '/api/ledger/head', { key: t.keys.auditor });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: 'rate_limited', message: KEY_BUDGET_MESSAGE });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(leaksInternals(over.text)).toBeNull();
    // Another key has its own budget; the anonymous address is still refused.
    expect((await call(base, 'GET', '/api/ledger/head', { key: t.keys.compliance })).status).toBe(200);
    expect((await call(base, 'GET', '/api/ledger/head')).status).toBe(429);
  });
});

describe('anonymous IPv6 clients are counted per /64 (VERIFY_RATE_LIMIT=2, behind a trusted proxy)', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp('sqlite', { VERIFY_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });
  const read = async (address: string): Promise<number> => (await call(base, 'GET', '/api/ledger/head', { headers: { 'x-forwarded-for': address } })).status;

  it('addresses of one /64 share a budget; the next /64 has its own', async () => {
    expect([await read('2001:db8:aa:1::1'), await read('2001:db8:aa:1:ffff:ffff:ffff:fffe'), await read('2001:0db8:00aa:0001:1234::9')]).toEqual([200, 200, 429]);
    expect([await read('2001:db8:aa:2::1'), await read('2001:db8:aa:2::2'), await read('2001:db8:aa:2::3')]).toEqual([200, 200, 429]);
  });

  it('an IPv4-mapped IPv6 address is its IPv4 address', async () => {
    expect([await read('::ffff:10.9.8.7'), await read('10.9.8.7'), await read('::ffff:a09:807')]).toEqual([200, 200, 429]);
    expect(await read('10.9.8.8')).toBe(200);
  });
});

describe.each(DIALECTS)('%s: heavy reads run at most HEAVY_READ_CONCURRENCY=1 at once', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { HEAVY_READ_CONCURRENCY: '1' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
  });

  it('one more heavy read is 429 server_busy with Retry-After; cheap reads and /health answer meanwhile; the slot comes back', async () => {
    const ledger = t.app.get(LedgerService);
    const real = ledger.verifyChain.bind(ledger);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    jest.spyOn(ledger, 'verifyChain').mockImplementationOnce(async (...args) => {
      entered();
      await gate;
      return real(...args);
    });
    const first = call(base, 'GET', '/api/ledger/verify');
    await inside;
    expect(t.app.get(HeavyReads).inFlight).toBe(1);
    // Re-verifying a whole timeline (JSON, page) is heavy too.
    const paths = ['/api/ledger/verify', `/coverage/${randomUUID()}.pdf`, '/api/jobs/job-none/export', '/api/jobs/job-none/verify', '/jobs/job-none'];
    for (const p of paths) {
      const r = await call(base, 'GET', p);
      expect({ p, status: r.status, body: r.body }).toEqual({ p, status: 429, body: { error: 'server_busy', message: expect.stringContaining('HEAVY_READ_CONCURRENCY'), limit: 1, retry_after_seconds: 2 } });
      expect(r.headers.get('retry-after')).toBe('2');
    }
    // A job badge too, answered as a grey "busy" image (no verdict) that image clients show and never cache.
    const badge = await call(base, 'GET', '/badge/job/job-none.svg');
    expect({ status: badge.status, type: badge.headers.get('content-type'), code: badge.headers.get('x-error-code'), retry: badge.headers.get('retry-after'), cache: badge.headers.get('cache-control') }).toEqual({
      status: 429,
      type: 'image/svg+xml; charset=utf-8',
      code: 'server_busy',
      retry: '2',
      cache: 'no-store',
    });
    expect(badge.text).toContain('not checked now, busy');
    expect(badge.text).not.toMatch(/verified|\u2713/);
    // An evidence pack is a heavy read too, but its key is checked first.
    expect((await call(base, 'GET', '/api/jobs/job-none/evidence')).status).toBe(401);
    expect((await call(base, 'GET', '/api/jobs/job-none/evidence', { key: t.keys.auditor })).body.error).toBe('server_busy');
    expect((await call(base, 'GET', '/health')).status).toBeLessThan(500);
    expect((await call(base, 'GET', '/api/ledger/head')).status).toBe(200);
    open();
    expect((await first).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50)); // the 'close' of the first answer
    expect(t.app.get(HeavyReads).inFlight).toBe(0);
    // Answers that fail (404) give the slot back too: one at a time, each gets it.
    for (let i = 0; i < 3; i++) {
      expect((await call(base, 'GET', `/coverage/${randomUUID()}.pdf`)).status).toBe(404);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await call(base, 'GET', '/api/jobs/job-none/export')).status).toBe(404);
  });
});

describe.each(DIALECTS)('%s: a heavy answer read slowly (HEAVY_READ_STALL_MS=1000)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { HEAVY_READ_CONCURRENCY: '1', HEAVY_READ_STALL_MS: '1000', VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is served whole to a client that reads in bursts with pauses shorter than the stall limit, though the whole answer takes longer than it', async () => {
    // ~8 MB of NDJSON: more than the loopback socket buffers hold, so the server waits on this reader.
    let prev = ZERO_DIGEST;
    for (let seq = 1; seq <= 20; seq++) {
      const e = makeEntry('job-slow', seq, prev, { nonce: randomBytes(400_000).toString('hex').slice(0, 400_000) });
      expect((await call(base, 'POST', '/api/jobs/job-slow/entries', { key: t.keys.producer, body: JSON.stringify(e) })).status).toBe(201);
      prev = entryDigest(e)!;
    }
    const u = new URL(base);
    const started = Date.now();
    const received = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const s = connect(Number(u.port), u.hostname, () => {
        s.write(`GET /api/jobs/job-slow/export HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`);
        s.pause();
        // Every 600 ms take up to ~2 MB (a loopback receiver reopens its window only once it has read a good part of
        // its buffer), then stop reading again.
        const tick = setInterval(() => {
          let burst = 0;
          const onData = (c: Buffer): void => {
            chunks.push(c);
            burst += c.length;
            if (burst >= 2 * 1024 * 1024) {
              s.off('data', onData);
              s.pause();
            }
          };
          s.on('data', onData);
          s.resume();
          setTimeout(() => {
            s.off('data', onData);
            s.pause();
          }, 150);
        }, 600);
        s.on('close', () => {
          clearInterval(tick);
          resolve(Buffer.concat(chunks));
        });
      });
      s.on('error', reject);
    });
    const took = Date.now() - started;
    const text = received.toString('latin1');
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    expect(text.endsWith('0\r\n\r\n')).toBe(true); // the chunked answer ended normally, not cut
    expect(received.length).toBeGreaterThan(8_000_000);
    expect(took).toBeGreaterThan(1_500); // longer than the stall limit: only progress kept it open
  });
});
