/**
 * Webhooks for compliance teams (issue 16), on both databases: subscriptions
 * (POST/GET/DELETE /api/webhooks), deliveries a local receiver verifies with
 * the `standardwebhooks` library, once per delivery id, retried after a 500
 * with the same id, never followed through a redirect, and never sent to a
 * loopback or private address without WEBHOOK_ALLOW_PRIVATE=true.
 */
import Ajv from 'ajv';
import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { postOnce } from '../../src/webhooks/webhook-http';
import { DatabaseService } from '../../src/database/database.service';
import { deliveryId, FEED_RETENTION_MS, WebhookDispatcher } from '../../src/webhooks/webhook.dispatcher';
import { WebhookFeedRepository } from '../../src/webhooks/webhooks.repository';
import { WitnessLagPayload } from '../../src/webhooks/webhook.events';
import { buildTimeline, EIGHT_STEPS, eightStepPlan } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1: records every request; `answer` decides each status (200 by default). */
class Receiver {
  readonly got: Received[] = [];
  answer: (r: Received) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 });
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const r = { path: req.url ?? '', headers: req.headers, body };
        this.got.push(r);
        const a = this.answer(r);
        res.writeHead(a.status, a.headers ?? {});
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  at(path: string): Received[] {
    return this.got.filter((r) => r.path === path);
  }

  async until(pred: () => boolean, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`receiver: condition not met within ${ms} ms (${this.got.length} requests)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const LAG: WitnessLagPayload = { origin: 'ledger.test/aer1', witness: 'witness-a', checkpoint_size: 120, cosigned_size: 100, lag_seconds: 900, threshold_seconds: 600 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DIALECTS)('webhooks on %s', (dialect) => {
  let t: TestApp;
  let rx: Receiver;
  let ajv: Ajv;
  let schemas: Record<string, unknown>;
  beforeAll(async () => {
    t = await startApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_BACKOFF_MS: '50', WEBHOOK_MAX_ATTEMPTS: '4', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_MAX_PER_KEY: '4', WEBHOOK_MAX_PER_OWNER: '5', WEBHOOK_POLL_MS: '100' });
    rx = new Receiver();
    await rx.start();
    const doc = (await t.http.get('/docs-json')).body as { components: { schemas: Record<string, unknown> } };
    schemas = doc.components.schemas;
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  });
  afterAll(async () => {
    await t.close();
    await rx.stop();
  });

  const post = (body: unknown, key = t.keys.compliance) => t.http.post('/api/webhooks').set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const valid = (name: string, body: unknown): string[] => {
    const v = ajv.compile({ $ref: `#/components/schemas/${name}`, components: { schemas } });
    return v(body) ? [] : [ajv.errorsText(v.errors)];
  };
  const dispatcher = () => t.app.get(WebhookDispatcher);

  it('needs a compliance key; validates the body (400/422)', async () => {
    expect((await t.http.post('/api/webhooks').set('Content-Type', 'application/json').send('{}')).status).toBe(401);
    expect((await post({ url: `${rx.url}/x`, events: ['coverage.report.issued'] }, t.keys.producer)).body.error).toBe('forbidden_role');
    expect((await post({ url: `${rx.url}/x`, events: ['coverage.report.issued'] }, t.keys.auditor)).status).toBe(403);
    expect((await post({ url: `${rx.url}/x` })).body.error).toBe('invalid_body');
    expect((await post({ url: `${rx.url}/x`, events: ['coverage.report.issued'], secret: 'mine' })).body.error).toBe('invalid_body');
    const cases: [unknown, string][] = [
      [{ url: `${rx.url}/x`, events: [] }, 'unknown_webhook_event'],
      [{ url: `${rx.url}/x`, events: ['receipt.recorded'] }, 'unknown_webhook_event'],
      [{ url: `${rx.url}/x`, events: ['coverage.report.issued', 'coverage.report.issued'] }, 'unknown_webhook_event'],
      [{ url: 'ftp://example.com/x', events: ['coverage.report.issued'] }, 'invalid_webhook_url'],
      [{ url: 'not a url', events: ['coverage.report.issued'] }, 'invalid_webhook_url'],
      [{ url: 'https://user:pw@example.com/x', events: ['coverage.report.issued'] }, 'url_has_userinfo'],
    ];
    for (const [body, code] of cases) {
      const r = await post(body);
      expect([r.status, r.body.error]).toEqual([422, code]);
      expect(valid('Error', r.body)).toEqual([]);
    }
    expect((await t.http.get('/api/webhooks').set('Authorization', `Bearer ${t.keys.compliance}`)).body).toEqual([]);
  });

  it('creates a subscription (secret shown once), lists it for its owner only, deletes it for its owner only', async () => {
    const r = await post({ url: `${rx.url}/hook`, events: ['coverage.report.issued', 'verification.batch.completed'] });
    expect(r.status).toBe(201);
    expect(valid('WebhookCreated', r.body)).toEqual([]);
    expect(r.body).toMatchObject({ url: `${rx.url}/hook`, events: ['coverage.report.issued', 'verification.batch.completed'], key_name: 'test-compliance', owner: null });
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.headers.location).toBe(`https://ledger.test/api/webhooks/${r.body.id}`);
    const list = await t.http.get('/api/webhooks').set('Authorization', `Bearer ${t.keys.compliance}`);
    expect(list.status).toBe(200);
    expect(valid('Webhook', list.body[0])).toEqual([]);
    expect(list.body).toEqual([{ id: r.body.id, url: `${rx.url}/hook`, events: r.body.events, key_id: r.body.key_id, key_name: 'test-compliance', owner: null, created_at: r.body.created_at }]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const other = (await t.app.get(ApiKeysService).create('other-compliance', 'compliance')).key;
    expect((await t.http.get('/api/webhooks').set('Authorization', `Bearer ${other}`)).body).toEqual([]);
    expect((await t.http.get('/api/webhooks').set('Authorization', `Bearer ${t.keys.admin}`)).body).toHaveLength(1);
    expect((await t.http.delete(`/api/webhooks/${r.body.id}`).set('Authorization', `Bearer ${other}`)).body.error).toBe('not_owner');
    expect((await t.http.delete('/api/webhooks/no-such-id').set('Authorization', `Bearer ${t.keys.compliance}`)).status).toBe(404);
    expect((await t.http.delete(`/api/webhooks/${r.body.id}`).set('Authorization', `Bearer ${t.keys.compliance}`)).status).toBe(204);
    expect((await t.http.get('/api/webhooks').set('Authorization', `Bearer ${t.keys.compliance}`)).body).toEqual([]);
    // A deleted subscription gets nothing.
    await dispatcher().emit('coverage.report.issued', {} as never, 'after-delete');
    await sleep(200);
    expect(rx.at('/hook')).toEqual([]);
  });

  it('delivers a direct emit signed by Standard Webhooks, once per delivery id, only to subscribers of that type', async () => {
    const sub = (await post({ url: `${rx.url}/lag`, events: ['ledger.checkpoint.witness_lag'] })).body as { id: string; secret: string };
    const notLag = (await post({ url: `${rx.url}/not-lag`, events: ['coverage.report.issued'] })).body as { id: string };
    const pos = await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'witness-a@120');
    expect(pos).toEqual(expect.any(Number));
    const ids = [deliveryId(sub.id, pos!)];
    expect(ids[0]).toMatch(/^msg_[0-9a-f]{32}$/);
    await rx.until(() => rx.at('/lag').length >= 1);
    // The same event emitted again is the same event: not sent twice.
    expect(await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'witness-a@120')).toBe(pos);
    await sleep(300);
    const got = rx.at('/lag');
    expect(got).toHaveLength(1);
    expect(got[0].headers['webhook-id']).toBe(ids[0]);
    expect(got[0].headers['content-type']).toBe('application/json');
    const msg = new Webhook(sub.secret).verify(got[0].body, got[0].headers as Record<string, string>) as { type: string; timestamp: string; data: unknown };
    expect(msg).toMatchObject({ type: 'ledger.checkpoint.witness_lag', data: LAG });
    expect(Date.parse(msg.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    // The signature has teeth: another secret, or one changed byte, does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got[0].body, got[0].headers as Record<string, string>)).toThrow();
    expect(() => new Webhook(sub.secret).verify(got[0].body.replace('900', '901'), got[0].headers as Record<string, string>)).toThrow();
    expect(rx.at('/not-lag')).toEqual([]);
    // A new event is a new delivery id.
    const next = await dispatcher().emit('ledger.checkpoint.witness_lag', { ...LAG, checkpoint_size: 130 }, 'witness-a@130');
    expect(next).toBeGreaterThan(pos!);
    await rx.until(() => rx.at('/lag').length >= 2);
    expect(rx.at('/lag')[1].headers['webhook-id']).toBe(deliveryId(sub.id, next!));
    expect(rx.at('/lag')[1].headers['webhook-id']).not.toBe(ids[0]);
    for (const id of [sub.id, notLag.id]) await t.http.delete(`/api/webhooks/${id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
  });

  it('retries after a 500 with the same delivery id and body, and backs off', async () => {
    const sub = (await post({ url: `${rx.url}/flaky`, events: ['ledger.checkpoint.witness_lag'] })).body as { id: string; secret: string };
    let calls = 0;
    rx.answer = (r) => (r.path === '/flaky' && ++calls <= 2 ? { status: 500 } : { status: 200 });
    try {
      const id = deliveryId(sub.id, (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'flaky-1'))!);
      await rx.until(() => rx.at('/flaky').length >= 3);
      await sleep(300);
      const got = rx.at('/flaky');
      expect(got).toHaveLength(3);
      expect(got.map((g) => g.headers['webhook-id'])).toEqual([id, id, id]);
      expect(new Set(got.map((g) => g.body)).size).toBe(1);
      for (const g of got) expect(new Webhook(sub.secret).verify(g.body, g.headers as Record<string, string>)).toMatchObject({ data: LAG });
      const tries = dispatcher().attempts.filter((a) => a.delivery_id === id);
      expect(tries.map((a) => [a.attempt, a.result.ok, a.result.status])).toEqual([
        [1, false, 500],
        [2, false, 500],
        [3, true, 200],
      ]);
      expect(dispatcher().delayBefore(2)).toBe(50);
      expect(dispatcher().delayBefore(3)).toBe(100);
      expect(dispatcher().delayBefore(4)).toBe(200);
    } finally {
      rx.answer = () => ({ status: 200 });
      await t.http.delete(`/api/webhooks/${sub.id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
    }
  });

  it('does not follow a redirect (to a loopback address or anywhere): the attempt fails and is retried', async () => {
    const sub = (await post({ url: `${rx.url}/redirect`, events: ['ledger.checkpoint.witness_lag'] })).body as { id: string };
    rx.answer = (r) => (r.path === '/redirect' ? { status: 302, headers: { Location: `${rx.url}/internal` } } : { status: 200 });
    try {
      const id = deliveryId(sub.id, (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'redirect-1'))!);
      await rx.until(() => rx.at('/redirect').length >= 2);
      expect(rx.at('/internal')).toEqual([]);
      const first = dispatcher().attempts.find((a) => a.delivery_id === id && a.attempt === 1)!;
      expect(first.result).toEqual({ ok: false, status: 302, reason: `redirect to "${rx.url}/internal" not followed` });
    } finally {
      rx.answer = () => ({ status: 200 });
      await t.http.delete(`/api/webhooks/${sub.id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
    }
  });

  it('gives a delivery up after WEBHOOK_MAX_ATTEMPTS, records it, and goes on with the next event', async () => {
    const sub = (await post({ url: `${rx.url}/down`, events: ['ledger.checkpoint.witness_lag'] })).body as { id: string; secret: string };
    rx.answer = (r) => (r.path === '/down' && rx.at('/down').length <= 4 ? { status: 500 } : { status: 200 });
    try {
      const first = (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'down-1'))!;
      const second = (await dispatcher().emit('ledger.checkpoint.witness_lag', { ...LAG, checkpoint_size: 121 }, 'down-2'))!;
      await rx.until(() => rx.at('/down').length >= 5);
      await sleep(300);
      // Four attempts of the first event (all 500), then the second event, delivered at once.
      expect(rx.at('/down').map((g) => g.headers['webhook-id'])).toEqual([...Array<string>(4).fill(deliveryId(sub.id, first)), deliveryId(sub.id, second)]);
      expect(await dispatcher().failures(sub.id)).toEqual([{ position: first, webhook_id: deliveryId(sub.id, first), type: 'ledger.checkpoint.witness_lag', attempts: 4, reason: 'answered 500', failed_at: expect.any(String) }]);
    } finally {
      rx.answer = () => ({ status: 200 });
      await t.http.delete(`/api/webhooks/${sub.id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
    }
  });

  it('caps subscriptions per key and per owner (409 webhook_limit_key / webhook_limit_owner); a revoked key\'s do not count', async () => {
    const keys = t.app.get(ApiKeysService);
    const a = await keys.create('acme-a', 'compliance', { owner: 'acme' });
    const b = await keys.create('acme-b', 'compliance', { owner: 'acme' });
    const sub = (key: string) => post({ url: `${rx.url}/cap`, events: ['coverage.report.issued'] }, key);
    for (let i = 0; i < 4; i++) expect((await sub(a.key)).status).toBe(201);
    const overKey = await sub(a.key);
    expect([overKey.status, overKey.body.error, overKey.body.limit]).toEqual([409, 'webhook_limit_key', 4]);
    expect(valid('Error', overKey.body)).toEqual([]);
    expect((await sub(b.key)).status).toBe(201);
    const overOwner = await sub(b.key);
    expect([overOwner.status, overOwner.body.error]).toEqual([409, 'webhook_limit_owner']);
    // Keys without an owner are capped per key only; the default compliance key is not acme's.
    const own = await sub(t.keys.compliance);
    expect(own.status).toBe(201);
    await t.http.delete(`/api/webhooks/${own.body.id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
    // Revoking acme-a frees the owner's places.
    expect((await t.http.delete(`/api/keys/${a.id}`).set('Authorization', `Bearer ${t.keys.admin}`)).status).toBe(204);
    expect((await sub(b.key)).status).toBe(201);
    for (const w of (await t.http.get('/api/webhooks').set('Authorization', `Bearer ${t.keys.admin}`)).body as { id: string; url: string }[]) {
      if (w.url.endsWith('/cap')) expect((await t.http.delete(`/api/webhooks/${w.id}`).set('Authorization', `Bearer ${t.keys.admin}`)).status).toBe(204);
    }
  });

  it('delivers nothing more to the subscriptions of a revoked key', async () => {
    const keys = t.app.get(ApiKeysService);
    const k = await keys.create('soon-revoked', 'compliance');
    const gone = (await post({ url: `${rx.url}/revoked`, events: ['ledger.checkpoint.witness_lag'] }, k.key)).body as { id: string };
    const live = (await post({ url: `${rx.url}/live`, events: ['ledger.checkpoint.witness_lag'] })).body as { id: string };
    const before = (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'revoke-1'))!;
    await rx.until(() => rx.at('/revoked').length >= 1 && rx.at('/live').length >= 1);
    expect(rx.at('/revoked').map((g) => g.headers['webhook-id'])).toEqual([deliveryId(gone.id, before)]);
    expect((await t.http.delete(`/api/keys/${k.id}`).set('Authorization', `Bearer ${t.keys.admin}`)).status).toBe(204);
    const after = (await dispatcher().emit('ledger.checkpoint.witness_lag', { ...LAG, checkpoint_size: 140 }, 'revoke-2'))!;
    // The live subscription gets the second event; by then the revoked one would have had it too.
    await rx.until(() => rx.at('/live').length >= 2);
    await sleep(400);
    expect(rx.at('/live').map((g) => g.headers['webhook-id'])).toEqual([deliveryId(live.id, before), deliveryId(live.id, after)]);
    expect(rx.at('/revoked')).toHaveLength(1);
    expect(dispatcher().attempts.filter((a) => a.subscription_id === gone.id)).toHaveLength(1);
    await t.http.delete(`/api/webhooks/${gone.id}`).set('Authorization', `Bearer ${t.keys.admin}`);
    await t.http.delete(`/api/webhooks/${live.id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
  });

  it('prunes feed events older than the retention that every live subscription has passed, never the newest', async () => {
    const db = t.app.get(DatabaseService);
    const keys = t.app.get(ApiKeysService);
    const k = await keys.create('prune-behind', 'compliance');
    // A subscription that stays before the first of the three events below (its next attempt is far away).
    const behind = (await post({ url: `${rx.url}/behind`, events: ['ledger.checkpoint.witness_lag'] }, k.key)).body as { id: string };
    await db.unsafeQuery('UPDATE webhook_subscriptions SET next_attempt_at = ? WHERE id = ?', [Date.now() + 3_600_000, behind.id]);
    const p1 = (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'prune-1'))!;
    const p2 = (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'prune-2'))!;
    const p3 = (await dispatcher().emit('ledger.checkpoint.witness_lag', LAG, 'prune-3'))!;
    await db.unsafeQuery('UPDATE webhook_events SET created_at = ? WHERE position <= ?', ['2000-01-01T00:00:00.000Z', p3]);
    const left = async () => (await db.query<{ position: number | string }>('SELECT position FROM webhook_events WHERE position >= ? ORDER BY position', [p1])).map((r) => Number(r.position));
    const prune = () => db.write((tx) => new WebhookFeedRepository().prune(tx, new Date(Date.now() - FEED_RETENTION_MS).toISOString()));
    await prune();
    // `behind` is still before p1: nothing it needs goes.
    expect(await left()).toEqual([p1, p2, p3]);
    // Once its key is revoked it no longer holds the feed back; the newest event stays.
    expect((await t.http.delete(`/api/keys/${k.id}`).set('Authorization', `Bearer ${t.keys.admin}`)).status).toBe(204);
    await prune();
    expect(await left()).toEqual([p3]);
    expect(rx.at('/behind')).toEqual([]);
    await t.http.delete(`/api/webhooks/${behind.id}`).set('Authorization', `Bearer ${t.keys.admin}`);
  });

  it('emits coverage.report.issued (result and findings) and verification.batch.completed (failures) after their commits', async () => {
    const sub = (await post({ url: `${rx.url}/compliance`, events: ['coverage.report.issued', 'verification.batch.completed'] })).body as { id: string; secret: string };
    const send = (method: 'post' | 'put', path: string, body: unknown, key: string) => t.http[method](path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await send('post', '/api/plans', eightStepPlan('job-wh'), t.keys.compliance)).status).toBe(201);
    expect((await send('put', '/api/jobs/job-wh/timeline', buildTimeline('job-wh', EIGHT_STEPS), t.keys.producer)).status).toBe(201);
    const report = await send('post', '/api/coverage-reports', { job_id: 'job-wh' }, t.keys.auditor);
    expect(report.status).toBe(201);
    await rx.until(() => rx.at('/compliance').length >= 1);
    const stored = (await t.http.get(`/api/coverage-reports/${report.body.report_id}`)).body as { report: { result: string; findings: unknown[] } };
    const c = new Webhook(sub.secret).verify(rx.at('/compliance')[0].body, rx.at('/compliance')[0].headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(c.type).toBe('coverage.report.issued');
    expect(c.data).toEqual({
      report_id: report.body.report_id,
      url: `https://ledger.test/api/coverage-reports/${report.body.report_id}`,
      subject: { job_id: 'job-wh' },
      result: report.body.result,
      findings: stored.report.findings,
      digest: report.body.digest,
      as_of_position: report.body.as_of_position,
      issued_at: expect.any(String),
    });
    expect(c.data.result).toBe(stored.report.result);

    const batch = await send('post', '/api/verification-batches', { targets: [{ kind: 'job', id: 'job-wh' }, { kind: 'job', id: 'no-such-job' }] }, t.keys.auditor);
    expect(batch.status).toBe(202);
    await rx.until(() => rx.at('/compliance').length >= 2, 20_000);
    await sleep(300);
    expect(rx.at('/compliance')).toHaveLength(2);
    const b = new Webhook(sub.secret).verify(rx.at('/compliance')[1].body, rx.at('/compliance')[1].headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(b).toMatchObject({
      type: 'verification.batch.completed',
      data: {
        batch_id: batch.body.batch_id,
        total: 2,
        invalid: 1,
        failures: [{ kind: 'job', id: 'no-such-job', verdict: 'invalid', reasons: ['not_found'] }],
        failures_truncated: false,
      },
    });
    await t.http.delete(`/api/webhooks/${sub.id}`).set('Authorization', `Bearer ${t.keys.compliance}`);
  }, 30_000);
});

describe.each(DIALECTS)('webhooks without WEBHOOK_ALLOW_PRIVATE on %s', (dialect) => {
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startApp(dialect);
    rx = new Receiver();
    await rx.start();
  });
  afterAll(async () => {
    await t.close();
    await rx.stop();
  });

  it('refuses a loopback, link-local or private receiver (every resolved address is checked), and sends nothing there', async () => {
    const post = (url: string) => t.http.post('/api/webhooks').set('Authorization', `Bearer ${t.keys.compliance}`).set('Content-Type', 'application/json').send(JSON.stringify({ url, events: ['coverage.report.issued'] }));
    for (const url of [`${rx.url}/hook`, 'http://localhost/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/', 'http://192.168.1.1/', 'http://[::ffff:127.0.0.1]/', 'http://[fd00::1]/', 'http://0.0.0.0/']) {
      const r = await post(url);
      expect([url, r.status, r.body.error]).toEqual([url, 422, 'webhook_address_refused']);
    }
    expect((await t.http.get('/api/webhooks').set('Authorization', `Bearer ${t.keys.compliance}`)).body).toEqual([]);
    // The sender itself refuses at delivery time too (a host whose address changed after subscribing).
    const r = await postOnce(`${rx.url}/direct`, '{}', {}, { allowPrivate: false, timeoutMs: 1000 });
    expect(r.ok).toBe(false);
    expect(r).toMatchObject({ status: null, reason: expect.stringContaining('resolves to 127.0.0.1') });
    expect(rx.got).toEqual([]);
  });
});

describe('webhooks with REDIS_URL set on postgres', () => {
  const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `aer1t_wh_${randomBytes(4).toString('hex')}`;
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startApp('postgres', { REDIS_URL, QUEUE_PREFIX: prefix, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_BACKOFF_MS: '50', WEBHOOK_MAX_ATTEMPTS: '4' });
    rx = new Receiver();
    await rx.start();
  });
  afterAll(async () => {
    await t.close();
    await rx.stop();
  });

  it('delivers from the same event feed (no queue of its own): a 500 is retried with the same id, the same event is not delivered twice', async () => {
    const sub = (await t.http.post('/api/webhooks').set('Authorization', `Bearer ${t.keys.compliance}`).set('Content-Type', 'application/json').send(JSON.stringify({ url: `${rx.url}/q`, events: ['ledger.checkpoint.witness_lag'] }))).body as { id: string; secret: string };
    let calls = 0;
    rx.answer = () => (++calls === 1 ? { status: 500 } : { status: 200 });
    const dispatcher = t.app.get(WebhookDispatcher);
    const pos = await dispatcher.emit('ledger.checkpoint.witness_lag', LAG, 'redis-1');
    const id = deliveryId(sub.id, pos!);
    await rx.until(() => rx.got.length >= 2, 10_000);
    expect(await dispatcher.emit('ledger.checkpoint.witness_lag', LAG, 'redis-1')).toBe(pos);
    await sleep(500);
    expect(rx.got.map((g) => g.headers['webhook-id'])).toEqual([id, id]);
    for (const g of rx.got) expect(new Webhook(sub.secret).verify(g.body, g.headers as Record<string, string>)).toMatchObject({ type: 'ledger.checkpoint.witness_lag', data: LAG });
    expect(dispatcher.attempts.filter((a) => a.delivery_id === id).map((a) => [a.attempt, a.result.status])).toEqual([
      [1, 500],
      [2, 200],
    ]);
  }, 30_000);
});
