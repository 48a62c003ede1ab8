/**
 * `GET /metrics` (issue 17): off by default (404), readable only with an
 * admin key or METRICS_TOKEN (401/403 otherwise), and scraped after real
 * requests on both databases: counters, histogram buckets, route templates
 * (never ids), appended events and group sizes, rate-limit refusals, chunk
 * durations and the gauges another module sets through LedgerMetrics.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { LedgerMetrics } from '../../src/metrics/ledger-metrics';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';
import { has, parseProm, Sample, value } from '../metrics/prom-text';

const TOKEN = 'metrics-scrape-token-0123456789';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const receiptText = (id = randomUUID()): string => JSON.stringify({ ...(vector('receipt-core-valid') as Record<string, unknown>), id });

describe('/metrics disabled (the default)', () => {
  jest.setTimeout(30_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite', { METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => t.close());

  it('answers 404 to everyone, admin key and token included', async () => {
    for (const auth of [undefined, `Bearer ${t.keys.admin}`, `Bearer ${TOKEN}`]) {
      const req = t.http.get('/metrics');
      const r = auth ? await req.set('Authorization', auth) : await req;
      expect([r.status, r.body.error]).toEqual([404, 'not_found']);
    }
  });
});

describe.each(DIALECTS)('/metrics enabled (%s)', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect, { METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN, VERIFY_RATE_LIMIT: '40' });
  });
  afterAll(async () => t.close());

  const scrape = async (auth = `Bearer ${TOKEN}`): Promise<Sample[]> => {
    const r = await t.http.get('/metrics').set('Authorization', auth);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
    return parseProm(r.text);
  };

  it('401 without a key or with an unknown one, 403 for a key of another role; 200 with the token or an admin key', async () => {
    const none = await t.http.get('/metrics');
    expect([none.status, none.body.error]).toEqual([401, 'missing_key']);
    const wrong = await t.http.get('/metrics').set('Authorization', 'Bearer metrics-scrape-token-XXXXXXXXXX');
    expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_key']);
    const malformed = await t.http.get('/metrics').set('Authorization', TOKEN);
    expect([malformed.status, malformed.body.error]).toEqual([401, 'invalid_authorization']);
    for (const role of ['producer', 'auditor', 'compliance'] as const) {
      const r = await t.http.get('/metrics').set('Authorization', `Bearer ${t.keys[role]}`);
      expect([r.status, r.body.error]).toEqual([403, 'forbidden_role']);
    }
    expect(value(await scrape(`Bearer ${t.keys.admin}`), 'aer1_http_requests_total', { method: 'GET', route: '/metrics', status: '403' })).toBe(3);
  });

  it('counts requests by route template and status (never ids or raw paths), with latency buckets', async () => {
    const before = await scrape();
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(receiptText(id));
      expect(r.status).toBe(201);
    }
    for (const id of ids) expect((await t.http.get(`/api/receipts/${id}`)).status).toBe(200);
    const missing = randomUUID();
    expect((await t.http.get(`/api/receipts/${missing}`)).status).toBe(404);
    const stray = `/no/such/${randomUUID()}`;
    expect((await t.http.get(stray)).status).toBe(404);
    const after = await scrape();
    const d = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(d('aer1_http_requests_total', { method: 'POST', route: '/api/receipts', status: '201' })).toBe(2);
    expect(d('aer1_http_requests_total', { method: 'GET', route: '/api/receipts/:id', status: '200' })).toBe(2);
    expect(d('aer1_http_requests_total', { method: 'GET', route: '/api/receipts/:id', status: '404' })).toBe(1);
    expect(d('aer1_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    const post = { method: 'POST', route: '/api/receipts', status_class: '2xx' };
    expect(d('aer1_http_request_duration_seconds_count', post)).toBe(2);
    expect(d('aer1_http_request_duration_seconds_bucket', { ...post, le: '+Inf' })).toBe(2);
    expect(d('aer1_http_request_duration_seconds_bucket', { ...post, le: '30' })).toBe(2);
    expect(d('aer1_http_request_duration_seconds_sum', post)).toBeGreaterThan(0);
    // Buckets are cumulative: each le holds at least the one below it.
    const les = after.filter((s) => s.name === 'aer1_http_request_duration_seconds_bucket' && s.labels.route === '/api/receipts' && s.labels.status_class === '2xx').map((s) => s.value);
    expect(les.length).toBe(15);
    expect([...les].sort((a, b) => a - b)).toEqual(les);
    // Bounded labels: no id or raw path appears anywhere in the exposition.
    const text = (await t.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).text;
    for (const s of [...ids, missing, stray, t.keys.producer]) expect(text).not.toContain(s);
  });

  it('counts appended events by type and the events per write transaction (single POSTs 1, an NDJSON batch of 3 is 3)', async () => {
    const before = await scrape();
    const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(receiptText());
    expect(r.status).toBe(201);
    const dup = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(vector('receipt-tampered-bytes')));
    expect(dup.status).toBe(422); // refused before any write: nothing appended
    const batch = await t.http
      .post('/api/receipts/batch')
      .set('Authorization', `Bearer ${t.keys.producer}`)
      .set('Content-Type', 'application/x-ndjson')
      .send([receiptText(), receiptText(), receiptText()].join('\n') + '\n');
    expect([batch.status, batch.body.accepted]).toEqual([200, 3]);
    const after = await scrape();
    const d = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    expect(d('aer1_events_appended_total', { type: 'ReceiptRecorded' })).toBe(4);
    expect(d('aer1_append_group_size_count')).toBe(2);
    expect(d('aer1_append_group_size_sum')).toBe(4);
    expect(d('aer1_append_group_size_bucket', { le: '1' })).toBe(1);
    expect(d('aer1_append_group_size_bucket', { le: '2' })).toBe(1);
    expect(d('aer1_append_group_size_bucket', { le: '5' })).toBe(2);
    expect(d('aer1_write_transaction_seconds_count', { outcome: 'commit' })).toBeGreaterThanOrEqual(2);
    expect(d('aer1_write_commit_seconds_count')).toBe(d('aer1_write_transaction_seconds_count', { outcome: 'commit' }));
    expect(d('aer1_write_commit_seconds_sum')).toBeGreaterThan(0);
  });

  it('verification chunks: their duration, and the queue depth back to 0 when done', async () => {
    const before = await scrape();
    const r = await t.http.post('/api/verification-batches').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send('{"scope":"all"}');
    expect(r.status).toBe(202);
    const end = Date.now() + 20_000;
    let after = await scrape();
    while (value(after, 'aer1_verification_chunk_seconds_count', { outcome: 'ok' }) <= value(before, 'aer1_verification_chunk_seconds_count', { outcome: 'ok' })) {
      if (Date.now() > end) throw new Error('no chunk processed within 20 s');
      await sleep(100);
      after = await scrape();
    }
    expect(value(after, 'aer1_verification_chunk_seconds_sum', { outcome: 'ok' })).toBeGreaterThan(0);
    await sleep(200);
    after = await scrape();
    expect(value(after, 'aer1_verification_queue_depth', { state: 'waiting' })).toBe(0);
    expect(value(after, 'aer1_verification_queue_depth', { state: 'active' })).toBe(0);
    expect(d2(before, after, 'aer1_events_appended_total', { type: 'VerificationBatchRequested' })).toBe(1);
  });

  it('counts rate-limit refusals (public read budget) beside the 429 answers', async () => {
    const before = await scrape();
    let refused = 0;
    for (let i = 0; i < 60 && refused < 3; i++) if ((await t.http.get('/api/ledger/head')).status === 429) refused++;
    expect(refused).toBe(3);
    const after = await scrape();
    expect(d2(before, after, 'aer1_rate_limit_refusals_total', { limiter: 'public_read' })).toBe(3);
    expect(d2(before, after, 'aer1_http_requests_total', { method: 'GET', route: '/api/ledger/head', status: '429' })).toBe(3);
    // The scrape itself is not a public read: it still answers 200 past the budget.
    expect((await t.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).status).toBe(200);
  });

  it('checkpoint size and age and witness lag, as set through LedgerMetrics', async () => {
    const before = await scrape();
    // The app may already have signed checkpoints of the few events the tests above appended (size < 120,
    // age under a minute); the checkpoint set below is newer and larger, so it is the one reported.
    const signed = value(before, 'aer1_checkpoint_size');
    if (!Number.isNaN(signed)) {
      expect(signed).toBeLessThan(120);
      expect(value(before, 'aer1_checkpoint_age_seconds')).toBeLessThan(60);
    }
    const metrics = t.app.get(LedgerMetrics);
    metrics.checkpointSigned(120, Date.now() - 30_000);
    metrics.witnessCosigned('witness-a', 100, 120);
    const after = await scrape();
    expect(value(after, 'aer1_checkpoint_size')).toBe(120);
    expect(value(after, 'aer1_checkpoint_age_seconds')).toBeGreaterThanOrEqual(30);
    expect(value(after, 'aer1_checkpoint_age_seconds')).toBeLessThan(60);
    expect(value(after, 'aer1_witness_lag_entries', { witness: 'witness-a' })).toBe(20);
    expect(has(after, 'process_resident_memory_bytes')).toBe(true);
  });
});

describe('/metrics: per-key quota refusals', () => {
  jest.setTimeout(30_000);
  it('counts a verification batch refused by REPORT_QUOTA_PER_HOUR under limiter="verification_batches"', async () => {
    const t = await startApp('sqlite', { METRICS_ENABLED: 'true', REPORT_QUOTA_PER_HOUR: '1' });
    try {
      const submit = () => t.http.post('/api/verification-batches').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send('{"scope":"all"}');
      expect((await submit()).status).toBe(202);
      const refused = await submit();
      expect([refused.status, refused.body.error]).toEqual([429, 'quota_exceeded']);
      const s = parseProm((await t.http.get('/metrics').set('Authorization', `Bearer ${t.keys.admin}`)).text);
      expect(value(s, 'aer1_rate_limit_refusals_total', { limiter: 'verification_batches' })).toBe(1);
      expect(value(s, 'aer1_rate_limit_refusals_total', { limiter: 'public_read' })).toBe(0);
      expect(value(s, 'aer1_http_requests_total', { method: 'POST', route: '/api/verification-batches', status: '429' })).toBe(1);
    } finally {
      await t.close();
    }
  });
});

describe('/metrics with REDIS_URL: the queue depth is BullMQ\'s', () => {
  jest.setTimeout(30_000);
  it('reports waiting, active, delayed and failed chunks; no depth sample while Redis does not answer', async () => {
    const up = await startApp('sqlite', { METRICS_ENABLED: 'true', REDIS_URL, QUEUE_PREFIX: `aer1t_metrics_${randomBytes(4).toString('hex')}` });
    try {
      const r = await up.http.get('/metrics').set('Authorization', `Bearer ${up.keys.admin}`);
      expect(r.status).toBe(200);
      const s = parseProm(r.text);
      for (const state of ['waiting', 'active', 'delayed', 'failed']) expect(value(s, 'aer1_verification_queue_depth', { state })).toBe(0);
      expect(has(s, 'aer1_verification_queue_depth', { state: 'waiting' })).toBe(true);
    } finally {
      await up.close();
    }
    const down = await startApp('sqlite', { METRICS_ENABLED: 'true', REDIS_URL: 'redis://127.0.0.1:6391', QUEUE_PREFIX: `aer1t_metrics_${randomBytes(4).toString('hex')}` });
    try {
      const started = Date.now();
      const r = await down.http.get('/metrics').set('Authorization', `Bearer ${down.keys.admin}`);
      expect(r.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(has(parseProm(r.text), 'aer1_verification_queue_depth')).toBe(false);
    } finally {
      await down.close();
    }
  });
});

function d2(before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}): number {
  return value(after, name, labels) - value(before, name, labels);
}
