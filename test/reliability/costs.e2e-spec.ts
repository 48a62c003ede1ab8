/**
 * Integrity issue, costs and limits: requests that used to cost far more than
 * they should. One public read budget per client (weighted, every public read
 * limited, shared across replicas through Redis, TRUST_PROXY); the batch
 * answer bounded; coverage reports and batch target lists built outside the
 * write lock, with a per-key quota; 401 before the body is read; server
 * timeouts; repeated query parameters; security headers; JSON 431; Bull
 * Board's Redis stats hidden; the job page paged; a closed timeline's chain
 * verified once. Each test here failed before its fix (test/reliability/README.md).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import * as reader from '../../src/coverage/ledger-reader';
import { DatabaseService } from '../../src/database/database.service';
import { FallbackThrottlerStorage } from '../../src/common/rate-limit';
import { TimelineVerificationService } from '../../src/timelines/timeline-verification.service';
import { VerificationBatchesService } from '../../src/verification-queue/verification-batches.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { call, freshReceipt, leaksInternals, listen } from './helpers';

jest.setTimeout(60_000);

const ex = (f: string): string => readFileSync(join(__dirname, '../../examples/coverage', f), 'utf8');
const NONE = '00000000-0000-4000-8000-000000000000';

/** `p`'s value, or `fallback` after `ms` (the timer is cleared either way). */
async function orAfter<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Send raw bytes, resolve with everything the server sent before closing (or what arrived within `ms`). */
async function rawExchange(port: number, bytes: string, ms: number): Promise<{ text: string; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(bytes);
  const result = await orAfter(closed, ms, false);
  socket.destroy();
  return { text, closed: result };
}

const portOf = (base: string): number => Number(new URL(base).port);

describe('one public read budget per client (VERIFY_RATE_LIMIT=6)', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp('sqlite', { VERIFY_RATE_LIMIT: '6', TRUST_PROXY: 'loopback' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });
  // Behind the (trusted, loopback) proxy every test is its own client.
  const client = (): Record<string, string> => ({ 'x-forwarded-for': `10.${randomBytes(3).join('.')}` });

  it('429 on one endpoint is 429 on every public read: the key is the client, not the handler', async () => {
    const h = client();
    for (let i = 0; i < 6; i++) expect((await call(base, 'GET', `/api/receipt/${NONE}/verify`, { headers: h })).status).toBe(404);
    const paths = ['/api/receipt/x/verify', '/api/ledger/head', `/run/${NONE}`, '/api/jobs/job-x/timeline', '/api/jobs/job-x/endpoint', '/api/jobs/job-x/verify', '/jobs/job-x', `/coverage/${NONE}`, `/api/coverage-reports/${NONE}`, `/api/verification-batches/${NONE}`, '/api/ledger/verify', `/workflow/${NONE}`, '/'];
    for (const p of paths) {
      const r = await call(base, 'GET', p, { headers: h });
      expect({ p, status: r.status, body: r.body }).toEqual({ p, status: 429, body: { error: 'rate_limited', message: expect.stringContaining('VERIFY_RATE_LIMIT') } });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(leaksInternals(r.text)).toBeNull();
    }
    // /health is outside the budget; writes with a key are not public reads.
    expect((await call(base, 'GET', '/health', { headers: h })).status).toBe(200);
    expect((await call(base, 'POST', '/api/receipts', { headers: h, key: t.keys.producer, body: freshReceipt().text })).status).toBe(201);
    // Another client has its own budget.
    expect((await call(base, 'GET', '/api/ledger/head', { headers: client() })).status).toBe(200);
  });

  it('weights: a chain re-verification costs 5, the ledger verification the whole budget', async () => {
    const h = client();
    expect((await call(base, 'GET', '/api/jobs/job-w/verify', { headers: h })).status).toBe(404); // 5 of 6
    expect((await call(base, 'GET', '/api/ledger/head', { headers: h })).status).toBe(200); // 6 of 6
    expect((await call(base, 'GET', '/api/ledger/head', { headers: h })).status).toBe(429);
    const h2 = client();
    expect((await call(base, 'GET', '/api/ledger/verify', { headers: h2 })).status).toBe(200); // 20, capped at the budget
    expect((await call(base, 'GET', '/api/ledger/head', { headers: h2 })).status).toBe(429);
    const h3 = client();
    for (let i = 0; i < 6; i++) expect((await call(base, 'GET', '/api/ledger/head', { headers: h3 })).status).toBe(200);
    expect((await call(base, 'GET', '/api/ledger/head', { headers: h3 })).status).toBe(429);
  });
});

describe('the client address: X-Forwarded-For only behind TRUST_PROXY', () => {
  it('without TRUST_PROXY a forged X-Forwarded-For does not buy a new budget', async () => {
    const t = await startApp('sqlite', { VERIFY_RATE_LIMIT: '2' });
    try {
      const base = await listen(t.app);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await call(base, 'GET', '/api/ledger/head', { headers: { 'x-forwarded-for': `10.0.0.${i}` } })).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await t.close();
    }
  });

  it('TRUST_PROXY is validated at start', async () => {
    await expect(startApp('sqlite', { TRUST_PROXY: 'not a proxy list!' })).rejects.toThrow(/TRUST_PROXY/);
  });
});

describe('with REDIS_URL, replicas share one budget', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const env = { VERIFY_RATE_LIMIT: '4', TRUST_PROXY: 'loopback', REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: `aer1-cost-${randomBytes(4).toString('hex')}` };
    a = await startApp('sqlite', env);
    b = await startApp('sqlite', env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('reads on replica A spend the budget replica B checks', async () => {
    const [ua, ub] = [await listen(a.app), await listen(b.app)];
    const h = { 'x-forwarded-for': `10.${randomBytes(3).join('.')}` }; // a client of its own: Redis is shared with other suites
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(i % 2 === 0 ? ua : ub, 'GET', '/api/ledger/head', { headers: h })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });
});

describe.each(DIALECTS)('%s: costly writes', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp(dialect, { REPORT_QUOTA_PER_HOUR: '2' });
    base = await listen(t.app);
    expect((await call(base, 'POST', '/api/plans', { key: t.keys.compliance, body: ex('plan.json') })).status).toBe(201);
    expect((await call(base, 'PUT', '/api/jobs/job-kyc-42/timeline', { key: t.keys.producer, body: ex('timeline.json') })).status).toBe(201);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
  });

  it('a write completes while a coverage report is being built (the report does not hold the write lock)', async () => {
    const real = reader.reportEventsAsOf;
    let during: number | 'blocked' | undefined;
    jest.spyOn(reader, 'reportEventsAsOf').mockImplementationOnce(async (...args) => {
      // Midway through building the report: another write must not wait for it.
      const write = call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text }).then((r) => r.status);
      during = await orAfter(write, 8_000, 'blocked' as const);
      return real(...args);
    });
    const r = await call(base, 'POST', '/api/coverage-reports', { key: t.keys.auditor, body: JSON.stringify({ job_id: 'job-kyc-42' }) });
    expect(r.status).toBe(201);
    expect(during).toBe(201);
    // The report was built as of the head before the write: the write came after its position.
    expect(r.body.as_of_position).toBeLessThan(Number((await call(base, 'GET', '/api/ledger/head')).body.position));
  });

  it('a write completes while a batch target list is being read', async () => {
    const proto = VerificationBatchesService.prototype as unknown as { targetsSince: (...a: unknown[]) => Promise<unknown> };
    const real = proto.targetsSince;
    let during: number | 'blocked' | undefined;
    jest.spyOn(proto, 'targetsSince').mockImplementationOnce(async function (this: unknown, ...args: unknown[]) {
      const write = call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text }).then((r) => r.status);
      during = await orAfter(write, 8_000, 'blocked' as const);
      return real.apply(this, args);
    });
    const r = await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: JSON.stringify({ scope: 'all' }) });
    expect(r.status).toBe(202);
    expect(during).toBe(201);
  });

  it('per-key quota: past REPORT_QUOTA_PER_HOUR, 429 quota_exceeded with Retry-After, nothing written', async () => {
    const db = t.app.get(DatabaseService);
    const count = async (table: string): Promise<number> => Number((await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);
    // Batches already accepted go on recording results in the background: count what a refused request could write.
    const requested = async (): Promise<number> => Number((await db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM events WHERE type IN ('CoverageReportIssued', 'VerificationBatchRequested')"))[0].n);
    // The first report and batch above spent one unit each; one more each is allowed.
    expect((await call(base, 'POST', '/api/coverage-reports', { key: t.keys.auditor, body: JSON.stringify({ job_id: 'job-kyc-42' }) })).status).toBe(201);
    expect((await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: JSON.stringify({ targets: [{ kind: 'job', id: 'job-kyc-42' }] }) })).status).toBe(202);
    const [reports, batches, events] = [await count('coverage_reports'), await count('verification_batches'), await requested()];
    const r = await call(base, 'POST', '/api/coverage-reports', { key: t.keys.auditor, body: JSON.stringify({ job_id: 'job-kyc-42' }) });
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: 'quota_exceeded', message: expect.stringContaining('REPORT_QUOTA_PER_HOUR'), kind: 'coverage_reports', limit: 2, retry_after_seconds: expect.any(Number) });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(60);
    const b = await call(base, 'POST', '/api/verification-batches', { key: t.keys.auditor, body: JSON.stringify({ scope: 'all' }) });
    expect(b.status).toBe(429);
    expect(b.body.error).toBe('quota_exceeded');
    expect([await count('coverage_reports'), await count('verification_batches'), await requested()]).toEqual([reports, batches, events]);
    // Another key has its own quota.
    expect((await call(base, 'POST', '/api/coverage-reports', { key: t.keys.admin, body: JSON.stringify({ job_id: 'job-kyc-42' }) })).status).toBe(201);
  });

  it('POST /api/receipts/batch answers within a small multiple of the request: 100 rejected lines in full, the rest by line number', async () => {
    const n = 20_000;
    const body = Array(n).fill('{}').join('\n');
    const ok = freshReceipt();
    const r = await call(base, 'POST', '/api/receipts/batch', { key: t.keys.producer, body: `${body}\n${ok.text}`, contentType: 'application/x-ndjson' });
    expect(r.status).toBe(200);
    expect(r.text.length).toBeLessThan(4 * body.length);
    expect(r.body).toMatchObject({ accepted: 1, existing: 0, rejected: n, rejected_by_error: { verification_failed: n } });
    expect(r.body.rejected_by_reason['missing_field:id']).toBe(n);
    expect(r.body.results).toHaveLength(101);
    expect(r.body.results[0]).toMatchObject({ line: 1, status: 422, error: 'verification_failed', checks: expect.any(Array) });
    expect(r.body.results[100]).toMatchObject({ line: n + 1, status: 201, id: ok.id });
    expect(r.body.rejected_groups).toEqual([{ status: 422, error: 'verification_failed', reasons: expect.arrayContaining(['missing_field:id']), lines: Array.from({ length: n - 100 }, (_, i) => i + 101) }]);
  });
});

describe('requests that need a key: 401 from the headers, before the body is read', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp('sqlite');
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an unauthenticated POST with a partial body gets 401 at once and the connection is closed', async () => {
    const head = 'POST /api/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n{"id":';
    const r = await rawExchange(portOf(base), head, 5_000);
    expect(r.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(r.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'missing_key' });
    expect(r.closed).toBe(true);
  });

  it('the wrong role: 403 before the body is read', async () => {
    const head = `POST /api/coverage-reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.keys.producer}\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n{`;
    const r = await rawExchange(portOf(base), head, 5_000);
    expect(r.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(r.closed).toBe(true);
  });

  it('a key and a complete body are still recorded; the server has header and request timeouts', async () => {
    expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text })).status).toBe(201);
    const server = t.app.getHttpServer() as { headersTimeout: number; requestTimeout: number };
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(60_000);
  });

  it('headers that do not arrive in time: JSON 408 and the connection closed', async () => {
    const slow = await startApp('sqlite');
    try {
      const server = slow.app.getHttpServer() as { headersTimeout: number; connectionsCheckingInterval: number };
      expect(server.connectionsCheckingInterval).toBe(1_000);
      server.headersTimeout = 1_000; // 10 s in service; shortened here before the server listens
      const r = await rawExchange(portOf(await listen(slow.app)), 'GET / HTTP/1.1\r\nHost: x\r\n', 15_000);
      expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'request_timeout', message: expect.any(String) });
      expect(r.closed).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('431 for oversized headers carries the JSON error body', async () => {
    const r = await rawExchange(portOf(base), `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 5_000);
    expect(r.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(r.text).toMatch(/\r\ncontent-type: application\/json/i);
    expect(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'headers_too_large', message: expect.any(String) });
  });

  it('a malformed request line is a JSON 400', async () => {
    const r = await rawExchange(portOf(base), 'GET / HTTP/1.1\r\nHost x\r\n\r\n', 5_000);
    expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'bad_request', message: expect.any(String) });
  });
});

describe.each(DIALECTS)('%s: repeated query parameters', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['/api/plans?job_id=a&job_id=b', '/api/jobs/j/timeline?after=1&after=2', `/api/verification-batches/${NONE}?limit=1&limit=2`, '/jobs/j?limit=1&limit=1'])('%s: 400 repeated_parameter', async (path) => {
    const r = await t.http.get(path).set('Authorization', `Bearer ${t.keys.admin}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'repeated_parameter', message: expect.any(String), parameter: expect.any(String) });
  });

  it.each(['/api/coverage-reports?job_id=%ED%A0%80', '/api/plans?job_id=a%zz', '/api/receipts?after=%C3'])('%s: 400 bad_request (the query does not percent-decode as UTF-8), as the same bytes in a path are', async (path) => {
    const r = await t.http.get(path).set('Authorization', `Bearer ${t.keys.admin}`);
    expect([r.status, r.body.error]).toEqual([400, 'bad_request']);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
  });

  it('a query with valid percent-encoded UTF-8 is read as before', async () => {
    const r = await t.http.get('/api/coverage-reports?job_id=caf%C3%A9%20%26%20co').set('Authorization', `Bearer ${t.keys.admin}`);
    expect([r.status, r.body]).toEqual([200, { items: [], next: null }]);
  });
});

describe('security headers everywhere', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite', { REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: `aer1-cost-${randomBytes(4).toString('hex')}` });
  });
  afterAll(async () => {
    await t?.close();
  });

  const basic = (key: string): string => `Basic ${Buffer.from(`auditor:${key}`).toString('base64')}`;

  it.each([
    ['/docs', {}],
    ['/queues', { auth: true }],
    ['/api/ledger/head', {}],
    ['/api/receipt/x/verify', {}],
    ['/jobs/job-none', {}],
    ['/', {}],
  ])('%s: CSP with frame-ancestors none, nosniff, Referrer-Policy, X-Frame-Options', async (path, o) => {
    const req = t.http.get(path);
    if ((o as { auth?: boolean }).auth) req.set('Authorization', basic(t.keys.auditor));
    const r = await req;
    expect(r.status).toBeLessThan(500);
    expect(r.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['x-frame-options']).toBe('DENY');
  });

  it("Bull Board's Redis stats (version, kernel, memory) are hidden from auditors", async () => {
    const r = await t.http.get('/queues/api/redis/stats').set('Authorization', basic(t.keys.auditor));
    expect(r.status).toBe(403);
    expect(r.text).not.toMatch(/redis_version|os|used_memory|version/i);
  });
});

describe('the job page is paged; a closed timeline is verified once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite');
    const entries = JSON.parse(ex('timeline.json')) as unknown[];
    expect((await t.http.put('/api/jobs/job-kyc-42/timeline').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(entries))).status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('/jobs/{id}?after=&limit= shows one page of entries with links; the verdict covers them all', async () => {
    const all = await t.http.get('/jobs/job-kyc-42').set('Accept', 'application/json');
    const count = all.body.entry_count as number;
    expect(count).toBeGreaterThan(3);
    const first = await t.http.get('/jobs/job-kyc-42?limit=2').set('Accept', 'application/json');
    expect(first.body.entries.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
    expect(first.body.page).toEqual({ after: 0, limit: 2, next_after: 2 });
    expect(first.body.verdict).toBe(all.body.verdict);
    const next = await t.http.get('/jobs/job-kyc-42?after=2&limit=2').set('Accept', 'application/json');
    expect(next.body.entries.map((e: { seq: number }) => e.seq)).toEqual([3, 4]);
    const last = await t.http.get(`/jobs/job-kyc-42?after=${count - 1}&limit=2`).set('Accept', 'application/json');
    expect(last.body.page.next_after).toBeNull();
    const html = await t.http.get('/jobs/job-kyc-42?limit=2');
    expect(html.text).toContain('href="?after=2&amp;limit=2"');
    expect((await t.http.get('/jobs/job-kyc-42?limit=0')).status).toBe(400);
    expect((await t.http.get('/jobs/job-kyc-42?limit=100000')).body.error).toBe('invalid_query');
  });

  it('the chain result of a closed timeline is computed once and kept; the answers stay the same', async () => {
    const svc = t.app.get(TimelineVerificationService);
    const before = svc.closedChains.size;
    const a = await t.http.get('/api/jobs/job-kyc-42/verify');
    expect(svc.closedChains.size).toBe(before + 1);
    const b = await t.http.get('/api/jobs/job-kyc-42/verify');
    const e = await t.http.get('/api/jobs/job-kyc-42/endpoint');
    expect(svc.closedChains.size).toBe(before + 1);
    expect(b.body).toEqual(a.body);
    expect(e.body.final_entry_digest).toBe(a.body.final_entry_digest);
    // An open timeline is kept per state too (keyed by its last position: an append makes a new key).
    const open = { seq: 1, job_id: 'job-open', id: randomUUID(), tool: 't', provenance_class: 'LOGGED BY AGENT', canonical_bytes: 'e30=', prev_digest: '0'.repeat(64) };
    expect((await t.http.post('/api/jobs/job-open/entries').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(open))).status).toBe(201);
    await t.http.get('/api/jobs/job-open/verify');
    expect(svc.closedChains.size).toBe(before + 2);
    await t.http.get('/api/jobs/job-open/verify');
    expect(svc.closedChains.size).toBe(before + 2);
  });
});

describe('the coverage report page is bounded', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows at most 50 evidence items per list and counts the rest; the JSON keeps every one', async () => {
    const timeline = execFileSync(process.execPath, [join(__dirname, '../../bin/aer1'), 'generate', 'timeline', '--entries', '600', '--job', 'job-many', '--format', 'array'], { maxBuffer: 1 << 26 }).toString();
    const post = (path: string, key: string, body: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(body);
    const plan = { job_id: 'job-many', title: 'many', unplanned: 'flag', expected_actions: [{ action_id: 'search', tool: 'search_index', max_count: 1000 }] };
    expect((await post('/api/plans', t.keys.compliance, JSON.stringify(plan))).status).toBe(201);
    expect((await t.http.put('/api/jobs/job-many/timeline').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(timeline)).status).toBe(201);
    const r = await post('/api/coverage-reports', t.keys.auditor, JSON.stringify({ job_id: 'job-many' }));
    expect(r.status).toBe(201);
    const json = await t.http.get(`/api/coverage-reports/${r.body.report_id}`);
    expect(json.body.report.actions[0].evidence).toHaveLength(200);
    expect(json.body.report.unplanned.actions).toHaveLength(400);
    const page = await t.http.get(`/coverage/${r.body.report_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('&hellip; and 150 more (every one is in the JSON report)');
    expect(page.text).toContain('&hellip; and 350 more (every one is in the JSON report)');
    // Issue 12: each evidence item is a list item linking its entry.
    expect(page.text.match(/<li><a href="[^"]*">seq \d+<\/a>: /g)).toHaveLength(100);
  });
});

describe('the rate limit while Redis is down', () => {
  it('counts in memory per replica (reads stay limited and available)', async () => {
    const storage = new FallbackThrottlerStorage('redis://127.0.0.1:1'); // nothing listens on port 1
    try {
      const hits: boolean[] = [];
      for (let i = 0; i < 4; i++) hits.push((await storage.increment('k', 60_000, 2, 60_000, 'default')).isBlocked);
      expect(hits).toEqual([false, false, true, true]);
    } finally {
      storage.onApplicationShutdown();
    }
  });
});
