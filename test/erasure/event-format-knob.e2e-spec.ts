/**
 * LEDGER_EVENT_FORMAT (the bench and testing knob, docs/operating.md): `2`
 * writes new events exactly as before issue 29 (format 2: the data in the
 * leaf, no stream_prev, public ids, commitment or salt), and the ledger
 * still verifies; the default is 3; any other value stops the start.
 */
import { validateConfig } from '../../src/config/configuration';
import { eventHashInput, StoredEvent } from '../../src/core/ledger/event-hash';
import { DatabaseService } from '../../src/database/database.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { freshReceipt } from '../reliability/helpers';

describe('LEDGER_EVENT_FORMAT', () => {
  it('defaults to 3, takes 2, refuses anything else', () => {
    expect(validateConfig({}).LEDGER_EVENT_FORMAT).toBe(3);
    expect(validateConfig({ LEDGER_EVENT_FORMAT: '2' }).LEDGER_EVENT_FORMAT).toBe(2);
    expect(() => validateConfig({ LEDGER_EVENT_FORMAT: '1' })).toThrow(/LEDGER_EVENT_FORMAT/);
    expect(() => validateConfig({ LEDGER_EVENT_FORMAT: 'x' })).toThrow(/LEDGER_EVENT_FORMAT/);
  });
});

describe.each(DIALECTS)('LEDGER_EVENT_FORMAT=2 on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect, { LEDGER_EVENT_FORMAT: '2' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes format 2 events as before issue 29, and the ledger verifies', async () => {
    const r = freshReceipt();
    expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text)).status).toBe(201);
    const rows = await t.app.get(DatabaseService).query<StoredEvent>('SELECT * FROM events ORDER BY position');
    expect(rows).toHaveLength(1);
    const e = rows[0];
    expect([Number(e.format), e.key_name, e.stream_prev, e.public_ids, e.payload_commitment, e.payload_salt]).toEqual([2, 'test-producer', null, null, null, null]);
    const leaf = eventHashInput({ ...e, position: Number(e.position), stream_position: Number(e.stream_position) });
    expect(leaf.startsWith('["aer1-ledger-event/2",1,')).toBe(true);
    expect(leaf).toContain(JSON.stringify(r.id).slice(1, -1));
    const v = await t.http.get('/api/ledger/verify');
    expect([v.status, v.body.verdict, v.body.checked]).toEqual([200, 'valid', 1]);
  });
});
