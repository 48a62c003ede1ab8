import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';
import { refCoreReceipt } from '../reference/reference-verifier';


describe.each(DIALECTS)('receipts on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  const post = (path: string, body: string, key = t.keys.producer) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(body);

  it('records a valid core receipt once, stores it byte for byte, and serves it', async () => {
    const text = JSON.stringify(vector('receipt-core-valid'), null, 2);
    const first = await post('/api/receipts', text);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: '38b2097d-75ca-5ae7-8135-da763ecf0256', verdict: 'valid', url: 'https://ledger.test/run/38b2097d-75ca-5ae7-8135-da763ecf0256', verify_url: 'https://ledger.test/api/receipts/38b2097d-75ca-5ae7-8135-da763ecf0256/verify' });
    const again = await post('/api/receipts', text);
    expect(again.status).toBe(200);
    expect(again.body.position).toBe(first.body.position);
    const v = await t.http.get('/api/receipt/38B2097D-75CA-5AE7-8135-DA763ECF0256/verify');
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ id: '38b2097d-75ca-5ae7-8135-da763ecf0256', verification_status: 'verified', output_hash: 'sha256:3f8dfebc3bdf8445321ba564aa800a906b41852559493ea4b8af557b5ec85581' });
    const rows = await t.app.get((await import('../../src/database/database.service')).DatabaseService).query<{ raw: string }>('SELECT raw FROM receipts WHERE id = ?', ['38b2097d-75ca-5ae7-8135-da763ecf0256']);
    expect(rows[0].raw).toBe(text);
  });

  it('a Content-Type that cannot be parsed: 415 unsupported_media_type, nothing recorded (an attack found 415 bad_request)', async () => {
    const before = (await t.http.get('/api/ledger/head')).body.position as number;
    for (const ct of ['application/json, text/html', ';', 'x']) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', ct).send('{}');
      expect([ct, r.status, r.body.error]).toEqual([ct, 415, 'unsupported_media_type']);
    }
    expect((await t.http.get('/api/ledger/head')).body.position).toBe(before);
  });

  it('answers 409 for the same id with different bytes and changes nothing', async () => {
    const head = (await t.http.get('/api/ledger/head')).body;
    const changed = JSON.stringify(vector('receipt-core-valid'));
    const r = await post('/api/receipts', changed);
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('receipt_id_conflict');
    expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
  });

  it('rejects a receipt that does not verify with 422 and its reason codes, recording nothing', async () => {
    const head = (await t.http.get('/api/ledger/head')).body;
    const r = await post('/api/receipts', JSON.stringify(vector('receipt-tampered-bytes')));
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('verification_failed');
    expect(r.body.reasons).toEqual(['output_hash_mismatch']);
    expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
  });

  it('accepts a transport receipt of a provider failure and a JSON-RPC tools/call response', async () => {
    expect((await post('/api/receipts', JSON.stringify(vector('transport-provider-failure')))).status).toBe(201);
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'ok' }], _receipt: vector('transport-valid') } });
    const r = await post('/api/receipts', rpc);
    expect(r.status).toBe(201);
    expect(r.body.id).toBe('c90ac30c-bf8d-5452-a36f-8b58a3a40241');
  });

  it('answers the receipt\'s own status and verification_status as sent, beside its own verdict (issue 12)', async () => {
    await post('/api/receipts', JSON.stringify(vector('transport-provider-failure')));
    const v = await t.http.get('/api/receipts/4e5e4a26-3286-5ef9-b758-8aefd9f610a5/verify');
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({
      status: 'provider_unavailable',
      verification_status: 'not_verified',
      verdict: 'valid',
      output_commitment: { matches: true, declared: 'sha256:c0dde99239b63ba9575ee5cbc159e497a37278d3a97565054a6d85bd390a92a4', computed: 'sha256:c0dde99239b63ba9575ee5cbc159e497a37278d3a97565054a6d85bd390a92a4' },
    });
    // A core receipt has no `status`: the member is absent, not invented.
    const core = await t.http.get('/api/receipts/38b2097d-75ca-5ae7-8135-da763ecf0256/verify');
    expect(core.body.status).toBeUndefined();
    expect('status' in core.body).toBe(false);
    expect(core.body.verification_status).toBe('verified');
    // Inside a JSON-RPC wrapper, the wrapped receipt's own values.
    const rpc = await t.http.get('/api/receipts/c90ac30c-bf8d-5452-a36f-8b58a3a40241/verify');
    const tv = vector('transport-valid') as { status: string; verification_status: string };
    expect(rpc.body).toMatchObject({ status: tv.status, verification_status: tv.verification_status, output_commitment: { matches: true } });
  });

  it('needs a producer key to write', async () => {
    const body = JSON.stringify(vector('receipt-core-logged'));
    expect((await t.http.post('/api/receipts').send(body)).body.error).toBe('missing_key');
    expect((await post('/api/receipts', body, 'aer1_wrong')).status).toBe(401);
    const forbidden = await post('/api/receipts', body, t.keys.auditor);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden_role');
  });

  it('gives 400 for malformed JSON and 404 for an unknown receipt', async () => {
    const bad = await post('/api/receipts', '{"id": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('malformed_json');
    expect((await t.http.get('/api/receipt/00000000-0000-0000-0000-000000000000/verify')).status).toBe(404);
  });

  it('refuses a document with a member name twice (400 duplicate_member) and records nothing', async () => {
    const head = (await t.http.get('/api/ledger/head')).body;
    const v = vector('receipt-core-observed') as Record<string, string>;
    const text = JSON.stringify(v).replace('"output_hash":', `"output_hash":"sha256:${'0'.repeat(64)}","output_hash":`);
    expect(JSON.parse(text)).toEqual(v);
    const r = await post('/api/receipts', text);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'duplicate_member', member: 'output_hash' });
    const key = await t.http.post('/api/keys').set('Authorization', `Bearer ${t.keys.admin}`).set('Content-Type', 'application/json').send('{"name":"x","role":"producer","role":"admin"}');
    expect(key.status).toBe(400);
    expect(key.body.error).toBe('duplicate_member');
    expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
  });

  it('treats white space around the document as outside it: a trailing newline is the same receipt', async () => {
    const text = JSON.stringify(vector('receipt-core-leap-day'));
    const first = await post('/api/receipts', `${text}\n`);
    expect(first.status).toBe(201);
    const again = await post('/api/receipts', ` \r\n${text}`);
    expect(again.status).toBe(200);
    expect(again.body.position).toBe(first.body.position);
  });

  it('answers an NDJSON batch line by line: new, repeated in the batch, recorded before, conflicting, malformed', async () => {
    const id = (n: number): string => `7a0c1f52-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const before = JSON.stringify(refCoreReceipt(id(1), Buffer.from('{"before":true}')));
    const earlier = await post('/api/receipts', before);
    expect(earlier.status).toBe(201);
    const a = JSON.stringify(refCoreReceipt(id(2), Buffer.from('{"a":1}')));
    const aOther = JSON.stringify(refCoreReceipt(id(2), Buffer.from('{"a":2}')));
    const b = JSON.stringify(refCoreReceipt(id(3).toUpperCase(), Buffer.from('{"b":1}')));
    const lines = [a, a, before, aOther, '{"not json', b, JSON.stringify(refCoreReceipt(id(3), Buffer.from('{"b":2}')))];
    const r = await t.http.post('/api/receipts/batch').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/x-ndjson').send(lines.join('\n'));
    expect(r.status).toBe(200);
    expect([r.body.accepted, r.body.existing, r.body.rejected]).toEqual([2, 2, 3]);
    const results = r.body.results as { line: number; status: number; id?: string; error?: string; position?: number }[];
    expect(results.map((x) => [x.line, x.status, x.error ?? x.id])).toEqual([
      [1, 201, id(2)],
      [2, 200, id(2)],
      [3, 200, id(1)],
      [4, 409, 'receipt_id_conflict'],
      [5, 400, 'malformed_json'],
      [6, 201, id(3)],
      [7, 409, 'receipt_id_conflict'],
    ]);
    expect(results[1].position).toBe(results[0].position);
    expect(results[2].position).toBe(earlier.body.position);
    expect(results[5].position).toBe((results[0].position as number) + 1);
    const db = t.app.get((await import('../../src/database/database.service')).DatabaseService);
    const rows = await db.query<{ id: string; raw: string; position: number | string }>('SELECT id, raw, position FROM receipts WHERE id IN (?, ?, ?) ORDER BY position', [id(1), id(2), id(3)]);
    expect(rows.map((x) => [x.id, x.raw, Number(x.position)])).toEqual([
      [id(1), before, earlier.body.position],
      [id(2), a, results[0].position],
      [id(3), b, results[5].position],
    ]);
    const events = await db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM events WHERE stream_id IN (?, ?, ?)", [`receipt:${id(1)}`, `receipt:${id(2)}`, `receipt:${id(3)}`]);
    expect(Number(events[0].n)).toBe(3);
  });

  it('answers a batch line that is not UTF-8 alone (400 invalid_utf8) and records the others; a line of U+00A0 is not blank (found by a trial)', async () => {
    const id = (n: number): string => `7a0c1f52-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const good = JSON.stringify(refCoreReceipt(id(20), Buffer.from('{"ok":20}')));
    const body = Buffer.concat([Buffer.from(good + '\n'), Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x7d, 0x0a]), Buffer.from('\u00a0\n \t\r\n'), Buffer.from(JSON.stringify(refCoreReceipt(id(21), Buffer.from('{"ok":21}'))))]);
    const r = await t.http.post('/api/receipts/batch').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/x-ndjson').send(body);
    expect(r.status).toBe(200);
    expect((r.body.results as { line: number; status: number; error?: string }[]).map((x) => [x.line, x.status, x.error ?? null])).toEqual([
      [1, 201, null],
      [2, 400, 'invalid_utf8'],
      [3, 400, 'malformed_json'],
      [5, 201, null],
    ]);
    expect([r.body.accepted, r.body.rejected]).toEqual([2, 2]);
  });

  it('a correction that reuses a recorded receipt says so exactly (409 receipt_id_conflict, not "different bytes")', async () => {
    const id = (n: number): string => `7a0c1f52-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const x = JSON.stringify(refCoreReceipt(id(30), Buffer.from('{"x":30}')));
    const y = JSON.stringify(refCoreReceipt(id(31), Buffer.from('{"y":31}')));
    expect((await post('/api/receipts', x)).status).toBe(201);
    expect((await post('/api/receipts', y)).status).toBe(201);
    const r = await post(`/api/receipts/${id(31)}/corrections`, x);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'receipt_id_conflict', id: id(30) });
    expect(r.body.message).toBe(`receipt ${id(30)} is already recorded as a receipt of its own; a correction is a new receipt with an id not recorded before (S9)`);
  });

  it('keeps the ledger chain verifiable', async () => {
    const v = await t.http.get('/api/ledger/verify');
    expect(v.status).toBe(200);
    expect(v.body.ok).toBe(true);
    expect(v.body.first_failure).toBeNull();
    expect(v.body.checked).toBe((await t.http.get('/api/ledger/head')).body.position);
  });
});
