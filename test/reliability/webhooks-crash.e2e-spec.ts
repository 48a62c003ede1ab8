/**
 * Webhooks across a crash (issue 26), on the compiled server: receivers
 * down, two coverage reports issued, the server SIGKILLed, restarted on the
 * same database, receivers up: each subscription gets exactly the two
 * events, in order, with the webhook-id derived from the subscription and the
 * event's feed position (an attempt made before the kill is redelivered
 * with the same id). Then SIGTERM with an attempt hanging on a receiver that
 * drips its answer: the server exits within the shutdown grace, not after
 * the attempt's deadline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { deliveryId } from '../../src/webhooks/webhook.dispatcher';
import { buildTimeline, EIGHT_STEPS, eightStepPlan } from '../coverage/fixtures';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { TestReceiver } from '../webhooks/receivers';
import { adminKey, call, freePort, killAll, openDirect, ServerProcess } from './helpers';

describe.each(DIALECTS)('webhooks across SIGKILL and SIGTERM on %s', (dialect) => {
  jest.setTimeout(120_000);
  let dir: string;
  let databaseUrl: string;
  let drop: (() => Promise<void>) | undefined;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-whcrash-'));
    if (dialect === 'sqlite') databaseUrl = `sqlite:${join(dir, 'ledger.sqlite')}`;
    else ({ url: databaseUrl, drop } = await createPgDatabase());
  });
  afterAll(async () => {
    await killAll();
    for (const r of receivers) await r.stop();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every event after a crash, once, with stable ids; SIGTERM does not wait for a dripping receiver', async () => {
    const admin = adminKey();
    const env = {
      DATABASE_URL: databaseUrl,
      LEDGER_ADMIN_KEY: admin,
      LOG_LEVEL: 'warn',
      VERIFY_RATE_LIMIT: '1000000',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_BACKOFF_MS: '100',
      WEBHOOK_MAX_ATTEMPTS: '30',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_SHUTDOWN_GRACE_MS: '1000',
      // A lease left by the killed process ends within this plus 5 s.
      WEBHOOK_TIMEOUT_MS: '2000',
    };
    // `down` is not listening yet (its port is reserved here); `failing` answers 503 and records the ids it was sent.
    const downPort = await freePort();
    const down = new TestReceiver();
    receivers.push(down);
    const failing = new TestReceiver();
    receivers.push(failing);
    failing.mode = 'error';
    await failing.start();

    const first = await ServerProcess.start(env);
    const key = async (name: string, role: string) => {
      const r = await call(first.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name, role }) });
      expect(r.status).toBe(201);
      return r.body.key as string;
    };
    const compliance = await key('wh-compliance', 'compliance');
    const producer = await key('wh-producer', 'producer');
    const auditor = await key('wh-auditor', 'auditor');
    const subscribe = async (base: string, url: string) => {
      const r = await call(base, 'POST', '/api/webhooks', { key: compliance, body: JSON.stringify({ url, events: ['coverage.report.issued'] }) });
      expect(r.status).toBe(201);
      return r.body as { id: string; secret: string };
    };
    const subDown = await subscribe(first.url, `http://127.0.0.1:${downPort}/down`);
    const subFailing = await subscribe(first.url, `${failing.url}/failing`);

    expect((await call(first.url, 'POST', '/api/plans', { key: compliance, body: JSON.stringify(eightStepPlan('job-crash')) })).status).toBe(201);
    expect((await call(first.url, 'PUT', '/api/jobs/job-crash/timeline', { key: producer, body: JSON.stringify(buildTimeline('job-crash', EIGHT_STEPS)) })).status).toBe(201);
    const reports: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await call(first.url, 'POST', '/api/coverage-reports', { key: auditor, body: JSON.stringify({ job_id: 'job-crash' }) });
      expect(r.status).toBe(201);
      reports.push(r.body.report_id as string);
    }
    // The first event has been tried (and failed) at least twice on `failing` before the kill.
    await failing.until(() => failing.got.length >= 2, 20_000);
    await first.kill();
    const beforeKill = failing.got.map((g) => g.headers['webhook-id']);
    expect(new Set(beforeKill).size).toBe(1);

    const db = await openDirect(databaseUrl);
    const events = await db.query<{ position: number | string; event_key: string }>('SELECT position, event_key FROM webhook_events ORDER BY position');
    await db.close();
    expect(events.map((e) => e.event_key)).toEqual(reports);
    const positions = events.map((e) => Number(e.position));

    // Receivers up, server restarted on the same database.
    await down.start(downPort);
    failing.mode = 'fast';
    const seenFailing = failing.got.length;
    // The restarted server gives an attempt 30 s: the SIGTERM below must not wait for that.
    const second = await ServerProcess.start({ ...env, WEBHOOK_TIMEOUT_MS: '30000' });
    const restarted = Date.now();
    await down.until(() => down.got.length >= 2, 30_000);
    await failing.until(() => failing.got.length >= seenFailing + 2, 30_000);
    // A lease the killed process held ends within WEBHOOK_TIMEOUT_MS + 5 s: nothing waits longer.
    expect(Date.now() - restarted).toBeLessThan(15_000);
    await new Promise((r) => setTimeout(r, 1000));

    const check = (got: { headers: Record<string, unknown>; body: string }[], sub: { id: string; secret: string }) => {
      expect(got.map((g) => g.headers['webhook-id'])).toEqual(positions.map((p) => deliveryId(sub.id, p)));
      expect(got.map((g) => (new Webhook(sub.secret).verify(g.body, g.headers as Record<string, string>) as { data: { report_id: string } }).data.report_id)).toEqual(reports);
    };
    check(down.got, subDown);
    check(failing.got.slice(seenFailing), subFailing);
    // The event tried before the kill came again with the id it had then.
    expect(failing.got[seenFailing].headers['webhook-id']).toBe(beforeKill[0]);

    // SIGTERM while an attempt hangs on a dripping receiver (deadline 30 s): the server exits after the 1 s grace.
    const drip = new TestReceiver();
    receivers.push(drip);
    drip.mode = 'drip';
    await drip.start();
    await subscribe(second.url, `${drip.url}/drip`);
    expect((await call(second.url, 'POST', '/api/coverage-reports', { key: auditor, body: JSON.stringify({ job_id: 'job-crash' }) })).status).toBe(201);
    await drip.until(() => drip.open === 1, 20_000);
    const stopping = Date.now();
    await second.stop();
    const stopMs = Date.now() - stopping;
    expect(second.child.signalCode).not.toBe('SIGKILL');
    expect(stopMs).toBeLessThan(8000);
  });
});
