/**
 * The verifiable log end to end, on SQLite and PostgreSQL: every event a
 * leaf (its exact event-hash input), the tree integrated on append, signed
 * C2SP checkpoints, and proofs served over HTTP, each checked against the
 * RFC 6962 reference in test/reference (no shared code with src/) and with
 * our own verifiers.
 */
import { createHash } from 'node:crypto';
import { eventHashInput, StoredEvent } from '../../src/core/ledger/event-hash';
import { parseCheckpoint, parseVerifierKey, verifyCheckpoint, verifyConsistency, verifyInclusion } from '../../src/core/tlog';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { LogService } from '../../src/log/log.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { MTH, PATH, PROOF, refLeaf } from '../reference/rfc6962';
import { freshReceipt } from '../reliability/helpers';

const b64 = (h: Buffer): string => h.toString('base64');

describe.each(DIALECTS)('verifiable log on %s', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let signer: CheckpointSigner;
  let vkey: string;
  /** Leaf bytes computed in the test from the stored events (reference leaves). */
  let leaves: Buffer[] = [];
  const ids: string[] = [];

  async function record(): Promise<string> {
    const r = freshReceipt();
    const res = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text);
    expect(res.status).toBe(201);
    ids.push(r.id);
    return r.id;
  }

  async function storedLeaves(): Promise<Buffer[]> {
    const rows = await t.app.get(DatabaseService).query<StoredEvent>('SELECT * FROM events ORDER BY position');
    return rows.map((e) => Buffer.from(eventHashInput({ ...e, position: Number(e.position), stream_position: Number(e.stream_position) }), 'utf8'));
  }

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    signer = t.app.get(CheckpointSigner);
    await signer.tick();
    // 70 events, a checkpoint after each: sizes 0..70 are all signed.
    for (let i = 0; i < 70; i++) {
      await record();
      await signer.tick();
    }
    leaves = await storedLeaves();
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('publishes discovery and a checkpoint signed by the advertised key, over the reference root', async () => {
    const d = (await t.http.get('/.well-known/aer1')).body;
    expect(d).toMatchObject({ draft: 'draft-zambo-aer1-07', origin: 'ledger.test', checkpoint_url: 'https://ledger.test/checkpoint' });
    expect(d.log_vkey).toMatch(/^ledger\.test\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
    const r = await t.http.get('/checkpoint');
    expect([r.status, r.headers['content-type']]).toEqual([200, 'text/plain; charset=utf-8']);
    const { checkpoint } = verifyCheckpoint(r.text, [parseVerifierKey(vkey)], 'ledger.test');
    expect(checkpoint.size).toBe(70);
    expect(b64(checkpoint.rootHash)).toBe(b64(MTH(leaves)));
    expect(r.text).toMatch(/^ledger\.test\n70\n[A-Za-z0-9+/]{43}=\n\n\u2014 ledger\.test [A-Za-z0-9+/]+=*\n$/);
  });

  it('keeps every checkpoint 0..70, each over the reference root of that prefix', async () => {
    for (let n = 0; n <= 70; n++) {
      const r = await t.http.get(`/api/ledger/checkpoints/${n}`);
      expect(r.status).toBe(200);
      const cp = parseCheckpoint(verifyCheckpoint(r.text, [parseVerifierKey(vkey)]).note.text);
      expect([cp.size, b64(cp.rootHash)]).toEqual([n, b64(MTH(leaves.slice(0, n)))]);
    }
    expect((await t.http.get('/api/ledger/checkpoints/71')).body.error).toBe('checkpoint_not_found');
  });

  it('serves leaves equal to the events, with their RFC 6962 leaf hashes', async () => {
    const r = await t.http.get('/api/ledger/leaves?start=0&count=1000');
    expect(r.status).toBe(200);
    expect(r.body.leaves).toHaveLength(70);
    r.body.leaves.forEach((l: { index: number; position: number; leaf: string; leaf_hash: string }, i: number) => {
      expect(l).toEqual({ index: i, position: i + 1, leaf: b64(leaves[i]), leaf_hash: b64(refLeaf(leaves[i])) });
    });
    expect((await t.http.get('/api/ledger/leaves/69')).body.index).toBe(69);
    expect((await t.http.get('/api/ledger/leaves/70')).status).toBe(404);
    for (const bad of ['-1', '01', 'x', '1e3']) expect([(await t.http.get(`/api/ledger/leaves/${bad}`)).status]).toEqual([400]);
    expect((await t.http.get('/api/ledger/leaves?start=0&count=1001')).body.error).toBe('invalid_query');
  });

  it('serves inclusion proofs equal to the reference PATH for every leaf of every size 1..70', async () => {
    const log = t.app.get(LogService);
    for (let n = 1; n <= 70; n++) {
      for (let m = 0; m < n; m++) {
        const p = await log.inclusion(m, n);
        expect(p.proof).toEqual(PATH(m, leaves.slice(0, n)).map(b64));
        expect(p.leaf_hash).toBe(b64(refLeaf(leaves[m])));
      }
    }
    // And over HTTP, checked with our verifier against the signed root.
    const note = (await t.http.get('/checkpoint')).text;
    const root = verifyCheckpoint(note, [parseVerifierKey(vkey)]).checkpoint.rootHash;
    for (const m of [0, 1, 31, 32, 63, 69]) {
      const r = await t.http.get(`/api/ledger/proof/inclusion?index=${m}&tree_size=70`);
      expect(r.status).toBe(200);
      expect(() => verifyInclusion(m, 70, Buffer.from(r.body.leaf_hash, 'base64'), r.body.proof.map((h: string) => Buffer.from(h, 'base64')), root)).not.toThrow();
    }
    const dflt = await t.http.get('/api/ledger/proof/inclusion?index=5');
    expect(dflt.body.tree_size).toBe(70);
    expect((await t.http.get('/api/ledger/proof/inclusion?index=70&tree_size=70')).body.error).toBe('leaf_index_out_of_range');
    expect((await t.http.get('/api/ledger/proof/inclusion?index=1&tree_size=71')).status).toBe(404);
    expect((await t.http.get('/api/ledger/proof/inclusion?index=1&tree_size=71')).body.error).toBe('tree_size_beyond_checkpoint');
  });

  it('serves consistency proofs equal to the reference PROOF for every pair 1 <= m <= n <= 70', async () => {
    const log = t.app.get(LogService);
    for (let n = 1; n <= 70; n++) {
      for (let m = 1; m <= n; m++) {
        const p = await log.consistency(m, n);
        expect(p.proof).toEqual(m === n ? [] : PROOF(m, leaves.slice(0, n)).map(b64));
      }
    }
    const r = await t.http.get('/api/ledger/proof/consistency?first=13&second=70');
    expect(r.status).toBe(200);
    expect(() => verifyConsistency(13, 70, r.body.proof.map((h: string) => Buffer.from(h, 'base64')), MTH(leaves.slice(0, 13)), MTH(leaves))).not.toThrow();
    expect((await t.http.get('/api/ledger/proof/consistency?first=0&second=70')).body).toEqual({ first: 0, second: 70, proof: [] });
    expect((await t.http.get('/api/ledger/proof/consistency?first=71&second=70')).body.error).toBe('invalid_query');
    expect((await t.http.get('/api/ledger/proof/consistency?first=1&second=71')).body.error).toBe('tree_size_beyond_checkpoint');
  });

  it('finds receipts by output commitment and events by hash, with leaf indexes', async () => {
    const rows = await t.app.get(DatabaseService).query<{ id: string; output_hash: string; position: number | string }>('SELECT id, output_hash, position FROM receipts WHERE id = ?', [ids[3]]);
    const r = await t.http.get(`/api/ledger/search?output_hash=${rows[0].output_hash}`);
    expect(r.status).toBe(200);
    expect(r.body.receipts.map((x: { id: string }) => x.id)).toContain(ids[3]);
    const hit = r.body.receipts.find((x: { id: string }) => x.id === ids[3]);
    expect(hit).toEqual({ id: ids[3], position: Number(rows[0].position), leaf_index: Number(rows[0].position) - 1, url: `https://ledger.test/run/${ids[3]}` });
    const eh = createHash('sha256').update(leaves[9]).digest('hex');
    expect((await t.http.get(`/api/ledger/search?event_hash=${eh}`)).body.events).toEqual([{ position: 10, leaf_index: 9, stream_id: expect.stringMatching(/^receipt:/), type: 'ReceiptRecorded' }]);
    expect((await t.http.get('/api/ledger/search?event_hash=nothex')).body.error).toBe('invalid_query');
    expect((await t.http.get('/api/ledger/search')).body.error).toBe('invalid_query');
  });

  it('downloads a receipt proof file (JSON and C2SP tlog-proof) that verifies offline', async () => {
    const j = await t.http.get(`/api/receipts/${ids[20]}/proof`);
    expect(j.status).toBe(200);
    expect(j.body).toMatchObject({ format: 'aer1-log-proof/1', leaf_index: 20, position: 21, tree_size: 70, log_vkey: vkey });
    expect(Buffer.from(j.body.leaf, 'base64').equals(leaves[20])).toBe(true);
    const { checkpoint } = verifyCheckpoint(j.body.checkpoint, [parseVerifierKey(vkey)]);
    expect(() => verifyInclusion(20, checkpoint.size, refLeaf(leaves[20]), j.body.proof.map((h: string) => Buffer.from(h, 'base64')), checkpoint.rootHash)).not.toThrow();
    const txt = await t.http.get(`/api/receipt/${ids[20]}/proof?format=tlog-proof`);
    expect(txt.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(txt.text.startsWith(`c2sp.org/tlog-proof@v1\nextra ${b64(leaves[20])}\nindex 20\n`)).toBe(true);
  });

  it('integrates the tree in the same transaction as the events: a failed write leaves no node', async () => {
    const db = t.app.get(DatabaseService);
    const count = async (): Promise<number> => Number((await db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM tree_nodes'))[0].n);
    const before = await count();
    const dup = freshReceipt();
    await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(dup.text).expect(201);
    const after = await count();
    const n = Number((await db.query<{ n: number | string }>('SELECT MAX(position) AS n FROM events'))[0].n);
    expect(after).toBe(2 * n - n.toString(2).split('').filter((c) => c === '1').length);
    expect(after).toBeGreaterThan(before);
    // A conflicting correction is refused: nothing of it is written, tree included.
    const bad = await t.http.post(`/api/receipts/${dup.id}/corrections`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(dup.text);
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(await count()).toBe(after);
  });
});
