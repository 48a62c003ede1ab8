/**
 * Signed stream heads (issue 30), on SQLite and PostgreSQL: a statement for
 * a job's streams from GET /api/ledger/stream-heads, checked CONSISTENT by
 * `aer1 log check-heads` against the served leaves; a statement forged in
 * test code with the log key (a stale head for a stream that has a later
 * event) caught by check-heads and by `aer1 log monitor --check-heads`,
 * each naming the later event; a statement signed by another key refused;
 * sizes beyond the newest checkpoint refused; a head the stored tree does
 * not back refused with 409.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AddressInfo } from 'node:net';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { generateSignerKey, parseVerifierKey, signStreamHeads, StreamHeads, verifyStreamHeads } from '../../src/core/tlog';
import { buildTimeline, receiptFor } from '../coverage/fixtures';
import { PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { cli, TmpDir } from '../cli/helpers';

describe.each(DIALECTS)('stream heads on %s', (dialect) => {
  jest.setTimeout(90_000);
  let t: TestApp;
  let url: string;
  let vkey: string;
  const tmp = new TmpDir();
  const job = 'job heads 1'; // a space: written %20 in the statement
  let streams: string[];
  let full: ReturnType<typeof buildTimeline>;
  beforeAll(async () => {
    t = await startApp(dialect);
    await t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    vkey = t.app.get(LogIdentityService).current!.vkey;
    const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    // Three entries planned, two recorded now (an open timeline); the third comes later, after a statement.
    full = buildTimeline(job, [...PAYMENT_STEPS, { tool: 'refund' }]);
    const tl = full.slice(0, 2);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${encodeURIComponent(job)}/entries`, tl, t.keys.producer)).status).toBe(201);
    streams = [`timeline:${job}`, ...tl.map((e) => `receipt:${String((receiptFor(e) as { id: string }).id).toLowerCase()}`), 'receipt:00000000-0000-4000-8000-000000000000'];
    await t.app.get(CheckpointSigner).tick();
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  const db = () => t.app.get(DatabaseService);
  const query = (ss: string[], size?: number) => `/api/ledger/stream-heads?${ss.map((s) => `stream=${encodeURIComponent(s)}`).join('&')}${size === undefined ? '' : `&size=${size}`}`;
  /** The reference: the newest event of each stream at or below `size`, read plainly. */
  async function reference(ss: string[], size: number) {
    const out: Record<string, [number, string | null]> = {};
    for (const s of ss) {
      const r = await db().query<{ position: number | string; event_hash: string }>('SELECT position, event_hash FROM events WHERE stream_id = ? AND position <= ? ORDER BY position DESC LIMIT 1', [s, size]);
      out[s] = r[0] ? [Number(r[0].position), r[0].event_hash] : [0, null];
    }
    return out;
  }

  it('signs the heads of a job\'s streams as of the newest checkpoint; check-heads finds them CONSISTENT', async () => {
    const r = await t.http.get(query(streams));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    const v = verifyStreamHeads(r.text, [parseVerifierKey(vkey)], t.app.get(LogIdentityService).current!.origin);
    const size = (await db().query<{ n: number | string }>('SELECT MAX(size) AS n FROM checkpoints'))[0].n;
    expect(v.statement.size).toBe(Number(size));
    expect(r.text.split('\n')[1]).toBe('aer1-stream-heads/1');
    expect(r.text).toContain('timeline:job%20heads%201 ');
    expect(Object.fromEntries(v.statement.heads.map((h) => [h.streamId, [h.position, h.eventHash]]))).toEqual(await reference(streams, v.statement.size));
    const file = tmp.write(`honest-${dialect}.note`, r.text);
    const c = await cli(['log', 'check-heads', file, '--url', url, '--vkey', vkey, '--key', t.keys.auditor]);
    expect(c.out).toContain('Result: CONSISTENT');
    expect(c.code).toBe(0);
    expect(c.out).toContain(`receipt:00000000-0000-4000-8000-000000000000 head 0: CONSISTENT`);
  });

  it('refuses sizes beyond the newest checkpoint, unsigned sizes, too many or repeated parameters', async () => {
    const size = Number((await db().query<{ n: number | string }>('SELECT MAX(size) AS n FROM checkpoints'))[0].n);
    const beyond = await t.http.get(query(streams, size + 1));
    expect([beyond.status, beyond.body.error]).toEqual([404, 'tree_size_beyond_checkpoint']);
    const unsigned = await t.http.get(query(streams, 1));
    expect([unsigned.status, unsigned.body.error]).toEqual([404, 'checkpoint_not_found']);
    const many = await t.http.get(query(Array.from({ length: 101 }, (_, i) => `receipt:${i}`)));
    expect([many.status, many.body.error]).toEqual([400, 'invalid_query']);
    const none = await t.http.get('/api/ledger/stream-heads');
    expect([none.status, none.body.error]).toEqual([400, 'invalid_query']);
    const twice = await t.http.get(`${query(streams)}&size=${size}&size=${size}`);
    expect([twice.status, twice.body.error]).toEqual([400, 'repeated_parameter']);
    const dup = await t.http.get(query([streams[0], streams[0]]));
    expect([dup.status, dup.body.error]).toEqual([400, 'invalid_query']);
  });

  it('a statement forged with the log key (a stale head) is caught by check-heads and by the monitor, naming the later event', async () => {
    const before = await t.http.get(query([`timeline:${job}`]));
    const stale = verifyStreamHeads(before.text, [parseVerifierKey(vkey)]).statement;
    // A later event of the timeline: a second run's entries (the ledger closes nothing here), then a newer checkpoint.
    const more = full.slice(2);
    const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await post('/api/receipts', receiptFor(more[0]), t.keys.producer)).status).toBe(201);
    const ap = await post(`/api/jobs/${encodeURIComponent(job)}/entries`, more, t.keys.producer);
    expect(ap.status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const cp = (await db().query<{ size: number | string; root: string }>('SELECT size, root FROM checkpoints ORDER BY size DESC LIMIT 1'))[0];
    const later = await reference([`timeline:${job}`], Number(cp.size));
    expect(later[`timeline:${job}`][0]).toBeGreaterThan(stale.heads[0].position);
    const forged: StreamHeads = { ...stale, size: Number(cp.size), rootHash: Buffer.from(cp.root, 'base64') };
    const note = signStreamHeads(forged, t.app.get(LogIdentityService).current!.signer);
    const dir = join(tmp.dir, `heads-${dialect}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'forged.note'), note);
    const c = await cli(['log', 'check-heads', join(dir, 'forged.note'), '--url', url, '--vkey', vkey, '--key', t.keys.auditor]);
    expect(c.code).toBe(1);
    // The first event of the stream after the stale head: the entry appended above.
    const first = (await db().query<{ position: number | string; event_hash: string; type: string }>('SELECT position, event_hash, type FROM events WHERE stream_id = ? AND position > ? ORDER BY position LIMIT 1', [`timeline:${job}`, stale.heads[0].position]))[0];
    expect(first.type).toBe('TimelineEntryAppended');
    const claim = `stream timeline:job heads 1: the claimed head ${stale.heads[0].position} is contradicted by the later TimelineEntryAppended event at position ${Number(first.position)} (hash ${first.event_hash})`;
    expect(c.out).toContain(claim);
    // The same statement carried by a pack (the coming log/stream-heads member): read from the pack and caught.
    const pack = [{ member: 'header', format: 'aer1-evidence-pack/1' }, { member: 'log/stream-heads', note }, { member: 'manifest', member_count: 2, chunks: [] }].map((m) => JSON.stringify(m)).join('\n') + '\n';
    const p = await cli(['log', 'check-heads', tmp.write(`pack-${dialect}.jsonl`, pack), '--url', url, '--vkey', vkey, '--key', t.keys.auditor]);
    expect([p.code, p.out.includes(claim), p.out.includes('#log/stream-heads')]).toEqual([1, true, true]);
    const bare = await cli(['log', 'check-heads', tmp.write(`bare-${dialect}.jsonl`, pack.split('\n').filter((l) => !l.includes('stream-heads')).join('\n')), '--url', url, '--vkey', vkey]);
    expect([bare.code, bare.err]).toEqual([2, expect.stringContaining('without a log/stream-heads member')]);
    // The monitor: the honest statement of now is recorded as consistent, the forged one fails every round.
    writeFileSync(join(dir, 'honest.note'), (await t.http.get(query(streams))).text);
    const state = join(tmp.dir, `state-${dialect}`);
    const m = await cli(['log', 'monitor', '--url', url, '--vkey', vkey, '--state', state, '--check-heads', dir, '--key', t.keys.auditor]);
    expect(m.code).toBe(1);
    expect(m.out).toContain('HEADS: 1 statement(s)');
    expect(m.out).toContain(claim);
    const again = await cli(['log', 'monitor', '--url', url, '--vkey', vkey, '--state', state, '--check-heads', dir, '--key', t.keys.auditor]);
    expect([again.code, again.out.includes('HEADS: 0 statement(s)'), again.out.includes('1 so far')]).toEqual([1, true, true]);
  });

  it('a statement signed by another key is refused; format 3 leaves are public, so no key is needed to check heads', async () => {
    const honest = verifyStreamHeads((await t.http.get(query(streams))).text, [parseVerifierKey(vkey)]).statement;
    const otherNote = signStreamHeads(honest, generateSignerKey(t.app.get(LogIdentityService).current!.origin).signer);
    const c = await cli(['log', 'check-heads', tmp.write(`other-${dialect}.note`, otherNote), '--url', url, '--vkey', vkey]);
    expect(c.code).toBe(1);
    expect(c.out).toContain('REFUSED');
    expect(c.out).toContain('note_no_trusted_signature');
    // A plan of another job after the heads: a format 3 leaf holds no content, so even a plan's leaf is public (its payload is not)
    // and the check needs no key.
    expect((await t.http.post('/api/plans').set('Authorization', `Bearer ${t.keys.compliance}`).set('Content-Type', 'application/json').send(JSON.stringify(paymentPlan('job heads 2')))).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const now = (await t.http.get(query(streams))).text;
    const pub = await cli(['log', 'check-heads', tmp.write(`public-${dialect}.note`, now), '--url', url, '--vkey', vkey]);
    expect(pub.code).toBe(0);
    expect(pub.out).toContain('CONSISTENT');
    const aud = await cli(['log', 'check-heads', tmp.write(`auditor-${dialect}.note`, now), '--url', url, '--vkey', vkey, '--key', t.keys.auditor]);
    expect(aud.code).toBe(0);
  });

  it('refuses (409 stream_head_unbacked) to sign a head whose stored tree leaf does not match its event', async () => {
    const head = (await reference([`timeline:${job}`], 1e9))[`timeline:${job}`][0];
    if (dialect === 'sqlite') await db().unsafeQuery('DROP TRIGGER tree_nodes_no_update');
    else await db().unsafeQuery('ALTER TABLE tree_nodes DISABLE TRIGGER tree_nodes_no_update');
    await db().unsafeQuery(dialect === 'sqlite' ? `UPDATE tree_nodes SET hash = zeroblob(32) WHERE level = 0 AND idx = ${head - 1}` : `UPDATE tree_nodes SET hash = decode(repeat('00', 32), 'hex') WHERE level = 0 AND idx = ${head - 1}`);
    const r = await t.http.get(query([`timeline:${job}`]));
    expect([r.status, r.body.error, r.body.reason, r.body.position]).toEqual([409, 'stream_head_unbacked', 'tree_leaf_mismatch', head]);
  });
});
