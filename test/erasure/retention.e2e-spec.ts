/**
 * Retention (issue 29), on SQLite and PostgreSQL, in process (no REDIS_URL):
 * RETENTION_PERIOD of seconds erases on schedule as the `system` writer with
 * the policy as legal basis; a key's own `retention_period` wins over the
 * global one (shorter or longer); a period under six months is warned about
 * once at start. Erasure pages: one erasure row for several PayloadsErased
 * events, and a payload erased between pages is not erased again.
 */
import { Logger } from '@nestjs/common';
import { DatabaseService } from '../../src/database/database.service';
import { ErasureService } from '../../src/erasure/erasure.service';
import { erasureTargets } from '../../src/erasure/erasure-pages';
import { RetentionService } from '../../src/erasure/retention.service';
import { EventsRepository } from '../../src/ledger/events.repository';
import { SYSTEM } from '../../src/core/ledger/event-hash';
import { buildTimeline, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DIALECTS)('retention on %s', (dialect) => {
  jest.setTimeout(60_000);

  const post = (t: TestApp, path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));

  /** Record `n` receipts as `key`; their ledger positions. */
  async function receipts(t: TestApp, job: string, n: number, key: string): Promise<number[]> {
    const tl = buildTimeline(job, Array.from({ length: n }, (_, i) => ({ tool: `lookup_${i}` })));
    for (const e of tl) expect((await post(t, '/api/receipts', receiptFor(e), key)).status).toBe(201);
    const ids = tl.map((e) => e.id.toLowerCase());
    const rows = await t.app.get(DatabaseService).query<{ position: number | string }>(`SELECT position FROM events WHERE stream_id IN (${ids.map(() => '?').join(',')}) ORDER BY position`, ids.map((i) => `receipt:${i}`));
    expect(rows).toHaveLength(n);
    return rows.map((r) => Number(r.position));
  }

  /** The PayloadsErased events naming each position (position -> erasure data). */
  async function erasuresNaming(t: TestApp): Promise<Map<number, Record<string, unknown>[]>> {
    const out = new Map<number, Record<string, unknown>[]>();
    const rows = await t.app.get(DatabaseService).query<{ data: string; key_id: string }>("SELECT data, key_id FROM events WHERE type = 'PayloadsErased' ORDER BY position");
    for (const r of rows) {
      const d = JSON.parse(r.data) as Record<string, unknown> & { positions: number[] };
      expect(r.key_id).toBe(d.origin === 'retention' ? 'system' : r.key_id);
      for (const p of d.positions) out.set(p, [...(out.get(p) ?? []), d]);
    }
    return out;
  }

  const held = async (t: TestApp, positions: number[]) =>
    (await t.app.get(DatabaseService).query<{ position: number | string; data: string }>(`SELECT position, data FROM events WHERE position IN (${positions.join(',')}) ORDER BY position`)).map((r) => r.data !== '');

  describe('RETENTION_PERIOD=PT2S checked every 300 ms', () => {
    let t: TestApp;
    let warned: string[];
    beforeAll(async () => {
      const spy = jest.spyOn(Logger.prototype, 'warn');
      t = await startApp(dialect, { RETENTION_PERIOD: 'PT2S', RETENTION_CHECK_INTERVAL_MS: '300' });
      warned = spy.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('RETENTION_PERIOD'));
      spy.mockRestore();
    });
    afterAll(async () => {
      await t.close();
    });

    it('warns once at start that the period is shorter than six months', () => {
      expect(warned).toEqual([expect.stringMatching(/^RETENTION_PERIOD=PT2S is shorter than six months: the EU AI Act \(Art\. 12 and 19\)/)]);
    });

    it('erases payloads on schedule once past the period, as the system writer, each exactly once', async () => {
      const positions = await receipts(t, 'job-retention-schedule', 3, t.keys.producer);
      const start = Date.now();
      expect(await held(t, positions)).toEqual([true, true, true]); // written a moment ago: within the period
      while ((await held(t, positions)).some((h) => h) && Date.now() - start < 15_000) await sleep(200);
      expect(await held(t, positions)).toEqual([false, false, false]);
      expect(Date.now() - start).toBeGreaterThanOrEqual(1500); // not before the period (2 s from recording)
      await sleep(1000); // more runs: nothing erased twice
      const by = await erasuresNaming(t);
      for (const p of positions) {
        expect(by.get(p)).toHaveLength(1);
        expect(by.get(p)![0]).toMatchObject({ reason: 'retention', legal_basis: 'retention policy RETENTION_PERIOD=PT2S', origin: 'retention', erased_by: { key_id: SYSTEM.key_id, name: 'system' } });
      }
      const id = by.get(positions[0])![0].erasure_id as string;
      const g = await t.http.get(`/api/erasures/${id}`);
      expect(g.status).toBe(200);
      expect(g.body).toMatchObject({ erased_by: 'system', reason: 'retention', legal_basis: 'retention policy RETENTION_PERIOD=PT2S' });
      const r = await t.http.get(`/api/receipts/${buildTimeline('job-retention-schedule', [{ tool: 'lookup_0' }])[0].id.toLowerCase()}`);
      expect(r.status).toBe(200);
      const v = await t.http.get('/api/ledger/verify').set('Authorization', `Bearer ${t.keys.auditor}`);
      expect([v.status, v.body.ok]).toEqual([200, true]);
    });
  });

  describe('a key\'s own retention_period wins over RETENTION_PERIOD=P1Y', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp(dialect, { RETENTION_PERIOD: 'P1Y' }); // checked hourly: the runs below are called by the test
    });
    afterAll(async () => {
      await t.close();
    });

    it('POST /api/keys takes retention_period (422 for one that is not an ISO 8601 duration)', async () => {
      const bad = await post(t, '/api/keys', { name: 'short-lived', role: 'producer', retention_period: '30 days' }, t.keys.admin);
      expect([bad.status, bad.body.error]).toEqual([422, 'invalid_key_options']);
      expect(bad.body.message).toContain('retention_period');
      const ok = await post(t, '/api/keys', { name: 'short-lived', role: 'producer', retention_period: 'PT1S' }, t.keys.admin);
      expect([ok.status, ok.body.retention_period]).toEqual([201, 'PT1S']);
      const listed = await t.http.get('/api/keys').set('Authorization', `Bearer ${t.keys.admin}`);
      expect((listed.body as { name: string; retention_period: string | null }[]).filter((k) => k.name === 'short-lived' || k.name === 'test-producer').map((k) => [k.name, k.retention_period])).toEqual([
        ['test-producer', null],
        ['short-lived', 'PT1S'],
      ]);
    });

    it('shorter and longer key periods each apply to their own key\'s records only', async () => {
      const short = (await post(t, '/api/keys', { name: 'short-key', role: 'producer', retention_period: 'PT1S' }, t.keys.admin)).body.key as string;
      const long = (await post(t, '/api/keys', { name: 'long-key', role: 'producer', retention_period: 'P2Y' }, t.keys.admin)).body.key as string;
      const s = await receipts(t, 'job-key-short', 2, short);
      const l = await receipts(t, 'job-key-long', 2, long);
      const g = await receipts(t, 'job-key-global', 2, t.keys.producer);
      const retention = t.app.get(RetentionService);
      expect(await retention.shortPeriodWarnings()).toContainEqual(expect.stringMatching(/^retention_period=PT1S \(2 keys\) is shorter than six months/));

      const soon = await retention.run(new Date(Date.now() + 5_000));
      expect(soon.erasures.map((e) => [e.legal_basis, e.count])).toEqual([['key retention_period=PT1S', 2]]);
      expect([...(await held(t, s)), ...(await held(t, l)), ...(await held(t, g))]).toEqual([false, false, true, true, true, true]);

      const yearOn = await retention.run(new Date(Date.now() + 367 * 86_400_000));
      expect(yearOn.erasures.map((e) => [e.legal_basis, e.count])).toEqual([['retention policy RETENTION_PERIOD=P1Y', 2]]);
      expect([...(await held(t, l)), ...(await held(t, g))]).toEqual([true, true, false, false]);
      const twoYearsOn = await retention.run(new Date(Date.now() + 731 * 86_400_000));
      expect(twoYearsOn.erasures.map((e) => [e.legal_basis, e.count])).toEqual([['key retention_period=P2Y', 2]]);
      expect(await retention.run(new Date(Date.now() + 731 * 86_400_000))).toMatchObject({ erased: 0, erasures: [] });
      const by = await erasuresNaming(t);
      for (const p of [...s, ...l, ...g]) expect(by.get(p)).toHaveLength(1);
    });

    it('an erasure in pages: one erasure row for all its events; a payload erased between pages is not erased again', async () => {
      const ps = await receipts(t, 'job-pages', 3, t.keys.producer);
      const db = t.app.get(DatabaseService);
      const targets = erasureTargets((await t.app.get(EventsRepository).atPositions(db, ps)).values());
      const erasure = t.app.get(ErasureService).pagedErasure({ reason: 'test pages', legal_basis: 'GDPR Art. 17(1)(a)' }, SYSTEM, 'request');
      expect(await erasure.erasePage(targets.slice(0, 1))).toEqual([ps[0]]);
      // Meanwhile a privacy officer erases the second one.
      const other = await post(t, '/api/erasures', { positions: [ps[1]], reason: 'customer request', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
      expect(other.status).toBe(201);
      expect(await erasure.erasePage(targets.slice(1))).toEqual([ps[2]]);
      expect(await erasure.erasePage(targets.slice(1))).toEqual([]); // nothing left: no event written
      expect(erasure.eventPositions).toHaveLength(2);
      const got = await t.http.get(`/api/erasures/${erasure.erasure_id}`);
      expect(got.body).toMatchObject({ positions: [ps[0], ps[2]], erasure_position: erasure.eventPositions[0], erasure_positions: erasure.eventPositions, reason: 'test pages' });
      const rows = await db.query<{ event_count: number | string; position: number | string }>('SELECT event_count, position FROM erasures WHERE erasure_id = ?', [erasure.erasure_id]);
      expect(rows.map((r) => [Number(r.event_count), Number(r.position)])).toEqual([[2, erasure.eventPositions[0]]]);
      // Each erased position names the page (event) that erased it.
      const of = await t.app.get(ErasureService).erasuresOf(ps);
      expect([of.get(ps[0])!.position, of.get(ps[1])!.position, of.get(ps[2])!.position]).toEqual([erasure.eventPositions[0], other.body.erasure_position, erasure.eventPositions[1]]);
      const by = await erasuresNaming(t);
      for (const p of ps) expect(by.get(p)).toHaveLength(1);
      const audit = await t.http.get('/api/ledger/verify').set('Authorization', `Bearer ${t.keys.auditor}`);
      expect([audit.status, audit.body.ok]).toEqual([200, true]);
    });
  });
});
