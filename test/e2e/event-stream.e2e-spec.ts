/**
 * The live feed (issue 16): GET /api/ledger/events/stream as Server-Sent
 * Events, on both databases: resumes exactly after a dropped connection
 * (Last-Event-ID), filters by stream prefix, bounds subscribers, sends
 * heartbeats, withholds `metadata` content from compliance keys, sees another
 * process's appends by polling, ends cleanly at shutdown, and ends when its
 * key is revoked (by this process at once, by another within seconds).
 */
import { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { ApiKeysRepository } from '../../src/auth/api-keys.repository';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { eventHash, SYSTEM } from '../../src/core/ledger/event-hash';
import { DatabaseService } from '../../src/database/database.service';
import { EventsRepository } from '../../src/ledger/events.repository';
import { LedgerNotifier } from '../../src/ledger/ledger-notifier';
import { LedgerService, NO_CONCURRENCY_CHECK } from '../../src/ledger/ledger.service';
import { EventStreamService, StreamedEvent } from '../../src/ledger/event-stream.service';
import { buildTimeline, EIGHT_STEPS } from '../coverage/fixtures';
import { createPgDatabase, DIALECTS, startApp, TestApp } from '../helpers/app';
import { openSse, SseClient } from '../helpers/sse';

const ENV = { SSE_HEARTBEAT_MS: '150', SSE_POLL_MS: '100', SSE_MAX_PER_KEY: '2', SSE_MAX_STREAMS: '4' };

async function listen(app: INestApplication): Promise<string> {
  await new Promise<void>((resolve) => app.getHttpServer().listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
}

const parsed = (c: SseClient): StreamedEvent[] => c.events.map((e) => JSON.parse(e.data) as StreamedEvent);

describe.each(DIALECTS)('live event stream on %s', (dialect) => {
  let t: TestApp;
  let base: string;
  const open: SseClient[] = [];
  beforeAll(async () => {
    t = await startApp(dialect, ENV);
    base = await listen(t.app);
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.close();
    // Slots are released once the server sees each drop.
    const svc = t.app.get(EventStreamService);
    for (let i = 0; i < 50 && svc.open > 0; i++) await new Promise((r) => setTimeout(r, 20));
  });
  afterAll(async () => {
    await t.close();
  });

  const sse = async (path: string, key: string | null, headers: Record<string, string> = {}): Promise<SseClient> => {
    const c = await openSse(base, path, { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers });
    open.push(c);
    return c;
  };
  const append = async (job: string, entries: unknown[], key = t.keys.producer): Promise<void> => {
    for (const e of entries) {
      const r = await t.http.post(`/api/jobs/${job}/entries`).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(e));
      expect(r.status).toBe(201);
    }
  };

  it('needs an auditor, compliance or admin key, and a well-formed position', async () => {
    expect((await sse('/api/ledger/events/stream', null)).status).toBe(401);
    const producer = await sse('/api/ledger/events/stream', t.keys.producer);
    expect(producer.status).toBe(403);
    await producer.ended;
    expect(JSON.parse(producer.body())).toMatchObject({ error: 'forbidden_role' });
    const bad = await sse('/api/ledger/events/stream', t.keys.auditor, { 'Last-Event-ID': 'abc' });
    expect(bad.status).toBe(400);
    await bad.ended;
    expect(JSON.parse(bad.body())).toMatchObject({ error: 'invalid_query' });
    expect((await sse('/api/ledger/events/stream?after=-1', t.keys.auditor)).status).toBe(400);
  });

  it('sends stored events in order, then live ones, and resumes exactly after a dropped connection (Last-Event-ID)', async () => {
    const job = buildTimeline('job-sse-a', EIGHT_STEPS);
    await append('job-sse-a', job.slice(0, 3));
    const first = await sse('/api/ledger/events/stream', t.keys.auditor);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await first.until(() => first.events.length >= 3);
    await append('job-sse-a', job.slice(3, 5));
    await first.until(() => first.events.length >= 5);
    const got1 = parsed(first);
    expect(got1.map((e) => e.position)).toEqual([1, 2, 3, 4, 5]);
    expect(first.events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5']);
    // Every stored column: the chain recomputes from what the stream sent.
    let prev = '0'.repeat(64);
    for (const e of got1) {
      expect(e).toMatchObject({ stream_id: 'timeline:job-sse-a', type: 'TimelineEntryAppended', format: 3, key_name: 'test-producer', prev_hash: prev });
      expect(eventHash({ ...e, data: e.data as string })).toBe(e.event_hash);
      prev = e.event_hash;
    }
    expect(got1.map((e) => (JSON.parse(e.data as string) as { seq: number }).seq)).toEqual([1, 2, 3, 4, 5]);

    // The connection drops; three entries are appended meanwhile; the client comes back with its last id.
    first.close();
    await append('job-sse-a', job.slice(5, 8));
    const again = await sse('/api/ledger/events/stream?after=0', t.keys.auditor, { 'Last-Event-ID': '5' });
    // Issue 15: entry 8 closes the job, so the ledger-issued commitment follows it (position 9).
    await again.until(() => again.events.length >= 4);
    await append('job-sse-b', buildTimeline('job-sse-b', EIGHT_STEPS).slice(0, 1));
    await again.until(() => again.events.length >= 5);
    await new Promise((r) => setTimeout(r, 300)); // nothing more arrives
    expect(parsed(again).map((e) => e.position)).toEqual([6, 7, 8, 9, 10]);
    expect(parsed(again)[3].type).toBe('EndpointCommitmentRecorded');
    expect(parsed(again)[0].prev_hash).toBe(got1[4].event_hash); // no gap: it chains onto the last event received
  });

  it('keeps only the streams named by stream_prefix, from `after`', async () => {
    const c = await sse('/api/ledger/events/stream?stream_prefix=timeline:job-sse-b&after=0', t.keys.compliance);
    await c.until(() => c.events.length >= 1);
    await append('job-sse-a2', buildTimeline('job-sse-a2', EIGHT_STEPS).slice(0, 2));
    await append('job-sse-b', buildTimeline('job-sse-b', EIGHT_STEPS).slice(1, 3));
    await c.until(() => c.events.length >= 3);
    await new Promise((r) => setTimeout(r, 300));
    const got = parsed(c);
    expect(got.map((e) => e.stream_id)).toEqual(['timeline:job-sse-b', 'timeline:job-sse-b', 'timeline:job-sse-b']);
    // One later than before issue 15: job-sse-a's close added the ledger-issued commitment at position 9.
    expect(got.map((e) => e.position)).toEqual([10, 13, 14]);
    const later = await sse('/api/ledger/events/stream?stream_prefix=timeline:job-sse-b&after=13', t.keys.auditor);
    await later.until(() => later.events.length >= 1);
    expect(parsed(later).map((e) => e.position)).toEqual([14]);
  });

  it('sends a heartbeat comment every SSE_HEARTBEAT_MS while idle', async () => {
    const c = await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.auditor);
    await c.until(() => c.comments.filter((x) => x.startsWith('heartbeat')).length >= 3, 2000);
    expect(c.events).toEqual([]);
    expect(c.comments[0]).toMatch(/^heartbeat \d{4}-\d\d-\d\dT/);
  });

  it('bounds open streams per key (429 stream_limit_key) and per server (429 stream_limit_server), and frees a slot when a client leaves', async () => {
    const a1 = await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.auditor);
    await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.auditor);
    const a3 = await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.auditor);
    expect(a3.status).toBe(429);
    expect(a3.headers['retry-after']).toBe('5');
    await a3.ended;
    expect(JSON.parse(a3.body())).toMatchObject({ error: 'stream_limit_key', limit: 2 });
    expect((await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.compliance)).status).toBe(200);
    expect((await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.compliance)).status).toBe(200);
    const over = await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.admin);
    expect(over.status).toBe(429);
    await over.ended;
    expect(JSON.parse(over.body())).toMatchObject({ error: 'stream_limit_server', limit: 4 });
    a1.close();
    const svc = t.app.get(EventStreamService);
    for (let i = 0; i < 50 && svc.open > 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await sse('/api/ledger/events/stream?stream_prefix=none:', t.keys.admin)).status).toBe(200);
  });

  it('reads pages only as a slow client drains (no unbounded buffering), and delivers every event once it reads', async () => {
    const db = t.app.get(DatabaseService);
    const ledger = t.app.get(LedgerService);
    const before = (await ledger.head())?.position ?? 0;
    const big = 'x'.repeat(50_000);
    // 1000 events of 50 KB (50 MB): far more than the socket buffers hold.
    await db.write((tx) => ledger.append(tx, 'test:bulk', NO_CONCURRENCY_CHECK, Array.from({ length: 1000 }, (_, i) => ({ type: 'TestBulkAppended', data: { i, big } })), SYSTEM));
    const repo = t.app.get(EventsRepository);
    const pages = jest.spyOn(repo, 'pageWithPrefix');
    try {
      const res = await new Promise<import('node:http').IncomingMessage>((resolve) =>
        get(new URL(`/api/ledger/events/stream?stream_prefix=test:bulk`, base), { headers: { Authorization: `Bearer ${t.keys.auditor}` } }, resolve),
      );
      res.pause(); // a client that does not read
      await new Promise((r) => setTimeout(r, 1000));
      const whilePaused = pages.mock.calls.length;
      // 1000 events are 5 pages of 200; a stalled client holds the server at its first pages.
      expect(whilePaused).toBeLessThanOrEqual(3);
      let rest = '';
      const ids: string[] = [];
      res.setEncoding('utf8');
      await new Promise<void>((resolve) => {
        res.on('data', (c: string) => {
          // Only complete lines are looked at; the 50 KB data lines are skipped, not kept.
          const lines = (rest + c).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) if (line.startsWith('id: ')) ids.push(line.slice(4));
          if (ids.length >= 1000) resolve();
        });
        res.resume();
      });
      res.destroy();
      expect(ids.map(Number)).toEqual(Array.from({ length: 1000 }, (_, i) => before + 1 + i));
      expect(pages.mock.calls.length).toBeGreaterThan(whilePaused);
    } finally {
      pages.mockRestore();
    }
  }, 60_000);

  it('tells waiting streams only about committed appends (a refused append notifies nothing)', async () => {
    const notifier = t.app.get(LedgerNotifier);
    const head = (await t.app.get(LedgerService).head())!.position;
    expect(notifier.committedHead).toBe(head);
    const gap = buildTimeline('job-sse-a', EIGHT_STEPS)[0]; // seq 1 again: 409, rolled back
    const r = await t.http.post('/api/jobs/job-sse-a/entries').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(gap));
    expect(r.status).toBe(409);
    expect(notifier.committedHead).toBe(head);
    expect((await t.app.get(LedgerService).head())!.position).toBe(head);
  });

  it('withholds the data of events recorded under a metadata publication from compliance keys, not from auditors', async () => {
    const secretKey = (await t.app.get(ApiKeysService).create('sse-metadata-producer', 'producer', { publication: 'metadata' })).key;
    await append('job-sse-meta', buildTimeline('job-sse-meta', EIGHT_STEPS).slice(0, 1), secretKey);
    const comp = await sse('/api/ledger/events/stream?stream_prefix=timeline:job-sse-meta', t.keys.compliance);
    const aud = await sse('/api/ledger/events/stream?stream_prefix=timeline:job-sse-meta', t.keys.auditor);
    await comp.until(() => comp.events.length >= 1);
    await aud.until(() => aud.events.length >= 1);
    expect(parsed(comp)[0]).toMatchObject({ data: null, data_withheld: true, type: 'TimelineEntryAppended' });
    expect(comp.events[0].data).not.toContain('canonical_bytes');
    expect(JSON.parse(parsed(aud)[0].data as string)).toMatchObject({ job_id: 'job-sse-meta', publication: 'metadata' });
    expect(parsed(aud)[0].data_withheld).toBeUndefined();
  });

  describe('a stream lives no longer than its key (issue 26)', () => {
    const keyFor = async (name: string): Promise<{ id: string; key: string }> => {
      const r = await t.http.post('/api/keys').set('Authorization', `Bearer ${t.keys.admin}`).set('Content-Type', 'application/json').send(JSON.stringify({ name, role: 'auditor' }));
      expect(r.status).toBe(201);
      return { id: r.body.id as string, key: r.body.key as string };
    };
    /** The seq of each event's entry (events with an id), in order. */
    const seqs = (c: SseClient): number[] => c.events.filter((e) => e.id !== null).map((e) => (JSON.parse((JSON.parse(e.data) as StreamedEvent).data as string) as { seq: number }).seq);
    const withheldWriter = async (): Promise<string> => (await t.app.get(ApiKeysService).create(`sse-meta-${Math.random().toString(36).slice(2, 8)}`, 'producer', { publication: 'metadata' })).key;

    it('DELETE /api/keys/{id}: the open stream ends at once with a key_revoked event and never carries an event recorded afterwards', async () => {
      const job = 'job-sse-revoke';
      const entries = buildTimeline(job, EIGHT_STEPS);
      const secret = await withheldWriter();
      const k = await keyFor('sse-revoked-auditor');
      const c = await sse(`/api/ledger/events/stream?stream_prefix=timeline:${job}`, k.key);
      expect(c.status).toBe(200);
      await append(job, entries.slice(0, 1), secret);
      await c.until(() => c.events.length >= 1);
      expect(JSON.parse(parsed(c)[0].data as string)).toMatchObject({ job_id: job, seq: 1 }); // the auditor did read withheld bytes
      const del = await t.http.delete(`/api/keys/${k.id}`).set('Authorization', `Bearer ${t.keys.admin}`);
      expect(del.status).toBe(204);
      await append(job, entries.slice(1, 2), secret);
      const started = Date.now();
      await c.ended;
      expect(Date.now() - started).toBeLessThan(2000);
      await new Promise((r) => setTimeout(r, 200));
      expect(seqs(c)).toEqual([1]);
      expect(c.events.map((e) => e.id)).toEqual([expect.any(String), null]);
      expect(c.body()).toContain('event: key_revoked\n');
      expect(JSON.parse(c.events[1].data)).toMatchObject({ error: 'key_revoked' });
      expect(c.body()).not.toContain('"seq":2');
      // Coming back with the revoked key: 401.
      const again = await sse(`/api/ledger/events/stream?stream_prefix=timeline:${job}`, k.key);
      expect(again.status).toBe(401);
      await again.ended;
      expect(JSON.parse(again.body())).toMatchObject({ error: 'key_revoked' });
    });

    it('revoked by another process (its row updated, this process not told): the stream ends within seconds and never carries an event recorded afterwards', async () => {
      const job = 'job-sse-revoke-cli';
      const entries = buildTimeline(job, EIGHT_STEPS);
      const secret = await withheldWriter();
      const k = await keyFor('sse-revoked-elsewhere');
      const c = await sse(`/api/ledger/events/stream?stream_prefix=timeline:${job}`, k.key);
      await append(job, entries.slice(0, 1), secret);
      await c.until(() => c.events.length >= 1);
      // What `npm run ledger -- revoke-key` does from its own process: the row only.
      const db = t.app.get(DatabaseService);
      await db.write((tx) => t.app.get(ApiKeysRepository).revoke(tx, k.id, new Date().toISOString()));
      const started = Date.now();
      await append(job, entries.slice(1, 3), secret); // at once: before any idle re-check could have run
      await c.ended;
      expect(Date.now() - started).toBeLessThan(4000);
      expect(seqs(c)).toEqual([1]);
      expect(JSON.parse(c.events[c.events.length - 1].data)).toMatchObject({ error: 'key_revoked' });
      expect(c.body()).not.toContain('"seq":2');
    });

    it('an idle stream ends within seconds of a revocation by another process', async () => {
      const k = await keyFor('sse-idle-revoked');
      const c = await sse('/api/ledger/events/stream?stream_prefix=none:', k.key);
      expect(c.status).toBe(200);
      await t.app.get(DatabaseService).write((tx) => t.app.get(ApiKeysRepository).revoke(tx, k.id, new Date().toISOString()));
      const started = Date.now();
      await c.ended;
      expect(Date.now() - started).toBeLessThan(3000);
      expect(c.body()).toContain('event: key_revoked\n');
    });
  });
});

describe.each(DIALECTS)('live event stream across processes and at shutdown on %s', (dialect) => {
  it("sees another process's appends by polling the head, and ends every stream when the app shuts down", async () => {
    let url: string;
    let cleanup: () => Promise<void>;
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      cleanup = db.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'aer1-sse-'));
      url = `sqlite:${join(dir, 'ledger.sqlite')}`;
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
    const env = { NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://ledger.test', LOG_LEVEL: 'silent', DATABASE_URL: url, ...ENV, SSE_POLL_MS: '100' };
    const reader = await createApp(env);
    await reader.init();
    const writer = await createApp(env);
    await writer.init();
    try {
      const auditor = (await reader.get(ApiKeysService).create('sse-auditor', 'auditor')).key;
      const producer = (await writer.get(ApiKeysService).create('sse-producer', 'producer')).key;
      const base = await listen(reader);
      const c = await openSse(base, '/api/ledger/events/stream', { Authorization: `Bearer ${auditor}` });
      expect(c.status).toBe(200);
      const entries = buildTimeline('job-sse-x', EIGHT_STEPS).slice(0, 2);
      for (const e of entries) {
        const r = await request(writer.getHttpServer()).post('/api/jobs/job-sse-x/entries').set('Authorization', `Bearer ${producer}`).set('Content-Type', 'application/json').send(JSON.stringify(e));
        expect(r.status).toBe(201);
      }
      await c.until(() => c.events.length >= 2, 3000);
      expect(parsed(c).map((e) => [e.position, e.stream_id])).toEqual([
        [1, 'timeline:job-sse-x'],
        [2, 'timeline:job-sse-x'],
      ]);
      // Shutdown: the stream ends with a comment, and the server closes promptly (an open stream does not hold it).
      const started = Date.now();
      await reader.close();
      await c.ended;
      expect(Date.now() - started).toBeLessThan(3000);
      expect(c.comments.some((x) => x.startsWith('server shutting down'))).toBe(true);
    } finally {
      await writer.close();
      await cleanup();
    }
  });
});
