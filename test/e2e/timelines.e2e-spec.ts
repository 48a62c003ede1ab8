import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCommitment, entryDigest, verifyTimeline, ZERO_DIGEST } from '../../src/core/aer1';
import { DatabaseService } from '../../src/database/database.service';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { parseVerifierKey, verifyNote } from '../../src/core/tlog';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

type Entry = Record<string, unknown>;

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as {
  vectors: { id: string; kind: string; input: unknown }[];
};
const vector = (id: string): unknown => corpus.vectors.find((v) => v.id === id)!.input;
const binding = vector('commitment-binding') as { timeline: Entry[]; commitment: Entry };
const EIGHT = binding.timeline;
const COMMITMENT = binding.commitment;
const SIX = (vector('commitment-truncation') as { timeline: Entry[] }).timeline;
const HISTORICAL = vector('chain-historical-06') as Entry[];
const FINAL_EIGHT = '214895e816d6399de5bf876e2b911e4383a9cfc89e0d3b1989e7f5c282d104fe';
const WITNESSED = { ...COMMITMENT, witness: 'witness.example', retrieved_from: 'https://witness.example/jobs/job-eight', retrieved_at: '2026-10-02T08:05:00Z' };
const NOT_EXCLUDED = 'Truncation is not excluded: no binding endpoint commitment (S7.3)';

/** A well-formed -07 entry for `job` at `seq` after `prev`. */
function makeEntry(job: string, seq: number, prev: string, close = false, nonce = ''): Entry {
  const bytes = Buffer.from(JSON.stringify({ step: seq, job, nonce }), 'utf8').toString('base64');
  const e: Entry = { seq, job_id: job, id: randomUUID(), tool: 'fetch_page', provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes, prev_digest: prev };
  if (close) e.close = true;
  return e;
}

/** A valid closed timeline of `n` entries for `job`. */
function makeTimeline(job: string, n: number): Entry[] {
  const out: Entry[] = [];
  let prev = ZERO_DIGEST;
  for (let s = 1; s <= n; s++) {
    const e = makeEntry(job, s, prev, s === n);
    out.push(e);
    prev = entryDigest(e)!;
  }
  return out;
}

describe.each(DIALECTS)('timelines and endpoint commitments on %s', (dialect) => {
  describe('appending', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp(dialect);
    });
    afterAll(async () => {
      await t.close();
    });
    const send = (method: 'post' | 'put', path: string, body: string, key = t.keys.producer) =>
      t.http[method](path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(body);
    const head = async () => (await t.http.get('/api/ledger/head')).body as { position: number };

    it('needs a producer key', async () => {
      expect((await t.http.post('/api/jobs/job-eight/entries').set('Content-Type', 'application/json').send(JSON.stringify(EIGHT[0]))).status).toBe(401);
      expect((await send('post', '/api/jobs/job-eight/entries', JSON.stringify(EIGHT[0]), t.keys.auditor)).status).toBe(403);
    });

    it('appends the first three corpus entries one by one, stored byte for byte', async () => {
      for (let k = 0; k < 3; k++) {
        const text = JSON.stringify(EIGHT[k], null, 2);
        const r = await send('post', '/api/jobs/job-eight/entries', text);
        expect(r.status).toBe(201);
        expect(r.body.appended).toHaveLength(1);
        expect(r.body.appended[0]).toMatchObject({ seq: k + 1, entry_digest: entryDigest(EIGHT[k]) });
        expect(r.body.head).toEqual({ seq: k + 1, entry_digest: entryDigest(EIGHT[k]), closed: false });
        expect(r.body.url).toBe('https://ledger.test/jobs/job-eight');
        expect(r.body.verify_url).toBe('https://ledger.test/api/jobs/job-eight/verify');
        const rows = await t.app.get(DatabaseService).query<{ raw: string }>('SELECT raw FROM timeline_entries WHERE job_id = ? AND seq = ?', ['job-eight', k + 1]);
        expect(rows[0].raw).toBe(text);
      }
      const events = await t.app.get(DatabaseService).query<{ type: string; data: string }>("SELECT type, data FROM events WHERE stream_id = 'timeline:job-eight' ORDER BY stream_position");
      expect(events.map((e) => e.type)).toEqual(['TimelineEntryAppended', 'TimelineEntryAppended', 'TimelineEntryAppended']);
      expect(JSON.parse(events[0].data)).toMatchObject({ job_id: 'job-eight', seq: 1, receipt_id: EIGHT[0].id, tool: 'fetch_page', provenance_class: 'EXECUTED BY LEDGER', close: false });
    });

    it('answers 409 for a wrong seq or prev_digest and leaves the ledger unchanged', async () => {
      const before = await head();
      const gap = await send('post', '/api/jobs/job-eight/entries', JSON.stringify(EIGHT[4]));
      expect(gap.status).toBe(409);
      expect(gap.body.error).toBe('seq_not_contiguous');
      expect(gap.body.expected_seq).toBe(4);
      const dup = await send('post', '/api/jobs/job-eight/entries', JSON.stringify(EIGHT[2]));
      expect(dup.status).toBe(409);
      expect(dup.body.error).toBe('seq_not_contiguous');
      const badLink = await send('post', '/api/jobs/job-eight/entries', JSON.stringify({ ...EIGHT[3], prev_digest: 'a'.repeat(64) }));
      expect(badLink.status).toBe(409);
      expect(badLink.body.error).toBe('link_mismatch');
      expect(badLink.body.expected_prev_digest).toBe(entryDigest(EIGHT[2]));
      // a relabelled predecessor: the entry links to a digest the ledger never recorded
      const relabel = await send('post', '/api/jobs/job-eight/entries', JSON.stringify({ ...EIGHT[3], prev_digest: entryDigest({ ...EIGHT[2], tool: 'other' }) }));
      expect(relabel.body.error).toBe('link_mismatch');
      const genesis = await send('post', '/api/jobs/job-new/entries', JSON.stringify(makeEntry('job-new', 1, 'b'.repeat(64))));
      expect(genesis.status).toBe(409);
      expect(genesis.body.error).toBe('genesis_prev_digest');
      // a batch whose second entry fails records nothing, not even the first
      const batch = await send('post', '/api/jobs/job-eight/entries', JSON.stringify([EIGHT[3], EIGHT[5]]));
      expect(batch.status).toBe(409);
      expect(batch.body.error).toBe('seq_not_contiguous');
      expect(await head()).toEqual(before);
      expect((await t.http.get('/api/jobs/job-eight/timeline')).body.entry_count).toBe(3);
      expect((await t.http.get('/api/jobs/job-new/timeline')).status).toBe(404);
    });

    it('answers 422 for a malformed entry or another job, recording nothing', async () => {
      const before = await head();
      const b64 = await send('post', '/api/jobs/job-eight/entries', JSON.stringify({ ...EIGHT[3], canonical_bytes: 'eyJzdGVwIjo0LCJqb2IiOiJqb2ItZWlnaHQifQ' }));
      expect(b64.status).toBe(422);
      expect(b64.body.error).toBe('verification_failed');
      expect(b64.body.reasons).toEqual(['invalid_base64']);
      const seq = await send('post', '/api/jobs/job-eight/entries', JSON.stringify({ ...EIGHT[3], seq: 4.5 }));
      expect(seq.status).toBe(422);
      expect(seq.body.reasons).toEqual(['invalid_seq']);
      const { tool: _tool, ...noTool } = EIGHT[3];
      const missing = await send('post', '/api/jobs/job-eight/entries', JSON.stringify(noTool));
      expect(missing.status).toBe(422);
      expect(missing.body.reasons).toEqual(['missing_field:tool']);
      const other = await send('post', '/api/jobs/job-other/entries', JSON.stringify(EIGHT[3]));
      expect(other.status).toBe(422);
      expect(other.body.error).toBe('job_id_mismatch');
      const notJson = await send('post', '/api/jobs/job-eight/entries', '{"seq": ');
      expect(notJson.status).toBe(400);
      expect(await head()).toEqual(before);
    });

    it('appends the rest as one array request and closes the job', async () => {
      const r = await send('post', '/api/jobs/job-eight/entries', `[\n  ${EIGHT.slice(3).map((e) => JSON.stringify(e)).join(',\n  ')}\n]`);
      expect(r.status).toBe(201);
      expect(r.body.appended.map((a: { seq: number }) => a.seq)).toEqual([4, 5, 6, 7, 8]);
      expect(r.body.head).toEqual({ seq: 8, entry_digest: FINAL_EIGHT, closed: true });
      const positions = r.body.appended.map((a: { position: number }) => a.position);
      expect(positions).toEqual([positions[0], positions[0] + 1, positions[0] + 2, positions[0] + 3, positions[0] + 4]);
    });

    it('refuses anything after the closing entry', async () => {
      const before = await head();
      const after = await send('post', '/api/jobs/job-eight/entries', JSON.stringify(makeEntry('job-eight', 9, FINAL_EIGHT)));
      expect(after.status).toBe(409);
      expect(after.body.error).toBe('timeline_closed');
      expect(await head()).toEqual(before);
    });

    it('serves the timeline: entries in order from the stored texts, digests recomputed', async () => {
      const r = await t.http.get('/api/jobs/job-eight/timeline');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ job_id: 'job-eight', source: 'append', entry_count: 8, head: { seq: 8, entry_digest: FINAL_EIGHT, closed: true } });
      expect(r.body.entries).toHaveLength(8);
      r.body.entries.forEach((e: Entry, k: number) => {
        expect(e).toEqual({ ...EIGHT[k], entry_digest: entryDigest(EIGHT[k]) });
      });
      const page = await t.http.get('/api/jobs/job-eight/timeline?after=2&limit=3');
      expect(page.body.entries.map((e: Entry) => e.seq)).toEqual([3, 4, 5]);
      expect(page.body.next_after).toBe(5);
      // After any seq there can be (the head alone, as the MCP gateway reads it): no entries, not a 500 on PostgreSQL (seq is an INTEGER column).
      const past = await t.http.get(`/api/jobs/job-eight/timeline?after=${Number.MAX_SAFE_INTEGER}`);
      expect([past.status, past.body.entries, past.body.head.seq]).toEqual([200, [], 8]);
    });

    // Issue 15 changed this: the close makes the ledger issue its own commitment, so a closed appended
    // timeline with no posted commitment is bound by the ledger's (before: truncation_not_excluded, 422).
    it('verifies right after the close: the ledger-issued commitment binds it', async () => {
      const r = await t.http.get('/api/jobs/job-eight/verify');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ assessment: 'clean', job_id: 'job-eight', verdict: 'valid', reasons: [], construction: '-07', entry_count: 8, final_entry_digest: FINAL_EIGHT, closed: true, provenance: { 'EXECUTED BY LEDGER': 8 }, truncation_excluded: true, binding_attestation: 'ledger_issued' });
      expect(Object.keys(r.body)[0]).toBe('assessment');
      expect(r.body.commitment).toMatchObject({ status: 'binding', recorded: 1, attestation: { kind: 'ledger_issued', by: [t.app.get(LogIdentityService).current!.origin], problem: null } });
      expect(r.body.statement).toMatch(/issued by this ledger when the timeline closed, signed with its log key/);
    });

    it('publishes the endpoint of the closed job: what checkCommitment binds', async () => {
      const r = await t.http.get('/api/jobs/job-eight/endpoint');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ job_id: 'job-eight', final_entry_digest: FINAL_EIGHT, entry_count: 8 });
      const closing = await t.app.get(DatabaseService).query<{ recorded_at: string }>("SELECT recorded_at FROM events WHERE stream_id = 'timeline:job-eight' AND stream_position = 8");
      expect(r.body.published_at).toBe(closing[0].recorded_at);
      expect(checkCommitment(verifyTimeline(EIGHT), r.body).binding).toBe(true);
      // The ledger-issued commitment: the same endpoint, a note signed by the log key, an event of the log.
      const lc = r.body.ledger_commitment;
      const vkey = t.app.get(LogIdentityService).current!.vkey;
      expect(lc).toMatchObject({ commitment: { job_id: 'job-eight', final_entry_digest: FINAL_EIGHT, entry_count: 8, published_at: closing[0].recorded_at }, log_vkey: vkey, signature_verifies: true });
      expect(lc.text).toBe(`{"entry_count":8,"final_entry_digest":"${FINAL_EIGHT}","job_id":"job-eight","published_at":"${closing[0].recorded_at}"}`);
      expect(verifyNote(lc.note, [parseVerifierKey(vkey)]).text).toBe(`${lc.text}\n`);
      const ev = await t.app.get(DatabaseService).query<{ position: number | string; type: string; data: string; event_hash: string }>("SELECT position, type, data, event_hash FROM events WHERE stream_id = 'timeline:job-eight' AND stream_position = 9");
      expect(Number(ev[0].position)).toBe(lc.position);
      expect(ev[0].type).toBe('EndpointCommitmentRecorded');
      expect(JSON.parse(ev[0].data)).toMatchObject({ id: lc.id, raw: lc.text, issued_by: 'ledger', attestation: { issued_by: 'ledger', note: lc.note } });
      expect(lc.event_hash).toBe(ev[0].event_hash);
      const found = await t.http.get(`/api/ledger/search?event_hash=${lc.event_hash}`);
      expect(found.body.events).toEqual([{ position: lc.position, leaf_index: lc.position - 1, stream_id: 'timeline:job-eight', type: 'EndpointCommitmentRecorded' }]);
    });

    it('records the witness commitment: binding, and verify says truncation is excluded', async () => {
      const text = JSON.stringify(WITNESSED, null, 2);
      const r = await send('post', '/api/jobs/job-eight/commitments', text);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ job_id: 'job-eight', binding: true, reasons: [], witness: { witness: 'witness.example', retrieved_from: 'https://witness.example/jobs/job-eight', retrieved_at: '2026-10-02T08:05:00Z' } });
      expect(typeof r.body.id).toBe('string');
      const rows = await t.app.get(DatabaseService).query<{ raw: string; binding: number | boolean }>('SELECT raw, binding FROM commitments WHERE id = ?', [r.body.id]);
      expect(rows[0].raw).toBe(text);
      const again = await send('post', '/api/jobs/job-eight/commitments', text);
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(r.body.id);
      // Posted by the producer's key with no trusted signature: self-asserted, the named witness a claim.
      expect(r.body.attestation).toMatchObject({ kind: 'self_asserted', by: [], posted_by: 'test-producer', note: null });
      const v = await t.http.get('/api/jobs/job-eight/verify');
      expect(v.status).toBe(200);
      expect(v.body.truncation_excluded).toBe(true);
      // Issue 15: the ledger-issued commitment decides (the strongest attestation); the posted one is listed beside it.
      expect(v.body.commitment).toMatchObject({ status: 'binding', reasons: [], attestation: { kind: 'ledger_issued' } });
      expect(v.body.commitments[1]).toMatchObject({ id: r.body.id, outcome: 'binding', commitment: WITNESSED, witness: { witness: 'witness.example' }, attestation: { kind: 'self_asserted', posted_by: 'test-producer' } });
      expect(v.body.commitments[1].detail).toMatch(/it names witness "witness.example": the poster's claim, not checked/);
      expect(v.body.statement).not.toContain(NOT_EXCLUDED);
    });

    it('records a non-binding commitment as evidence, yet still reports the binding one', async () => {
      // A commitment naming another job says nothing about this timeline. (One counting more
      // entries than are visible proves truncation and is never hidden: test/reliability/commitments.)
      const r = await send('post', '/api/jobs/job-eight/commitments', JSON.stringify({ ...COMMITMENT, job_id: 'job-elsewhere' }));
      expect(r.status).toBe(201);
      expect(r.body.binding).toBe(false);
      expect(r.body.reasons).toEqual(['commitment_job_id_mismatch']);
      const v = await t.http.get('/api/jobs/job-eight/verify');
      expect(v.body.commitment.status).toBe('binding');
      expect(v.body.commitment.recorded).toBe(3); // the ledger-issued one (issue 15), the witness one, this one
      expect(v.body.commitments.map((c: { outcome: string }) => c.outcome)).toEqual(['binding', 'binding', 'other_job']);
      expect(v.body.findings).toEqual([]);
    });

    it('rejects a malformed commitment with 422 invalid_commitment', async () => {
      const before = await head();
      for (const bad of [{ ...COMMITMENT, entry_count: '8' }, { ...COMMITMENT, final_entry_digest: FINAL_EIGHT.toUpperCase() }, { ...COMMITMENT, published_at: '2026-02-30T08:00:00Z' }, [COMMITMENT]]) {
        const r = await send('post', '/api/jobs/job-eight/commitments', JSON.stringify(bad));
        expect(r.status).toBe(422);
        expect(r.body.error).toBe('invalid_commitment');
      }
      expect(await head()).toEqual(before);
    });

    it('refuses to import over an appended timeline', async () => {
      const r = await send('put', '/api/jobs/job-eight/timeline', JSON.stringify(EIGHT));
      expect(r.status).toBe(409);
      expect(r.body.error).toBe('timeline_exists');
    });

    it('lets exactly one of 20 concurrent competing appends win; the timeline verifies afterwards', async () => {
      const job = 'job-race';
      const first = makeEntry(job, 1, ZERO_DIGEST);
      const second = makeEntry(job, 2, entryDigest(first)!);
      expect((await send('post', `/api/jobs/${job}/entries`, JSON.stringify([first, second]))).status).toBe(201);
      const prev = entryDigest(second)!;
      const competitors = Array.from({ length: 20 }, (_, k) => makeEntry(job, 3, prev, true, `competitor-${k}`));
      const answers = await Promise.all(competitors.map((e) => send('post', `/api/jobs/${job}/entries`, JSON.stringify(e))));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      for (const a of answers.filter((x) => x.status === 409)) expect(['timeline_closed', 'seq_not_contiguous', 'expected_version_conflict']).toContain(a.body.error);
      const v = await t.http.get(`/api/jobs/${job}/verify`);
      // Issue 15: the winning close issued the ledger's commitment in its transaction (before: truncation_not_excluded).
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ assessment: 'clean', verdict: 'valid', entry_count: 3, closed: true, binding_attestation: 'ledger_issued' });
      expect(v.body.commitments).toHaveLength(1);
      const winner = competitors[statuses.indexOf(201)];
      expect(v.body.final_entry_digest).toBe(entryDigest(winner));
    });

    it('answers 409 timeline_not_closed for the endpoint of an open job', async () => {
      const e = makeEntry('job-open', 1, ZERO_DIGEST);
      expect((await send('post', '/api/jobs/job-open/entries', JSON.stringify(e))).status).toBe(201);
      const r = await t.http.get('/api/jobs/job-open/endpoint');
      expect(r.status).toBe(409);
      expect(r.body.error).toBe('timeline_not_closed');
      const v = await t.http.get('/api/jobs/job-open/verify');
      expect(v.status).toBe(422);
      expect(v.body.reasons).toEqual(['not_closed']);
    });

    it('imports a valid timeline, the -06 one labeled historical, and refuses an invalid one', async () => {
      const made = makeTimeline('job-imported', 5);
      const text = JSON.stringify(made, null, 2);
      const r = await send('put', '/api/jobs/job-imported/timeline', text);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ job_id: 'job-imported', verdict: 'valid', historical: false, construction: '-07', entry_count: 5, final_entry_digest: entryDigest(made[4]), closed: true });
      expect((await send('put', '/api/jobs/job-imported/timeline', text)).status).toBe(200);
      const changed = await send('put', '/api/jobs/job-imported/timeline', JSON.stringify(made));
      expect(changed.status).toBe(409);
      expect(changed.body.error).toBe('timeline_exists');
      const extend = await send('post', '/api/jobs/job-imported/entries', JSON.stringify(makeEntry('job-imported', 6, entryDigest(made[4])!)));
      expect(extend.status).toBe(409);
      expect(extend.body.error).toBe('timeline_imported');
      const rows = await t.app.get(DatabaseService).query<{ raw: string }>('SELECT raw FROM timeline_entries WHERE job_id = ? ORDER BY seq', ['job-imported']);
      expect(rows.map((x) => x.raw)).toEqual(made.map((e) => JSON.stringify(e, null, 2).replace(/\n/g, '\n  ')));

      const h = await send('put', '/api/jobs/job-old/timeline', JSON.stringify(HISTORICAL));
      expect(h.status).toBe(201);
      expect(h.body).toMatchObject({ verdict: 'historical', historical: true, construction: '-06', reasons: ['historical_06_construction'] });
      expect(h.body.label).toMatch(/HISTORICAL/);
      const hv = await t.http.get('/api/jobs/job-old/verify');
      expect(hv.status).toBe(422);
      expect(hv.body).toMatchObject({ verdict: 'historical', historical: true, truncation_excluded: false });
      expect((await t.http.get('/api/jobs/job-old/timeline')).body.historical).toBe(true);
      const hep = await t.http.get('/api/jobs/job-old/endpoint');
      expect(hep.status).toBe(409);

      const before = await head();
      const bad = await send('put', '/api/jobs/job-gamma/timeline', JSON.stringify(vector('chain-seq-gap')));
      expect(bad.status).toBe(422);
      expect(bad.body.error).toBe('verification_failed');
      expect(bad.body.reasons).toEqual(['seq_not_contiguous']);
      const foreign = await send('put', '/api/jobs/job-x/timeline', JSON.stringify(vector('chain-valid-4')));
      expect(foreign.status).toBe(422);
      expect(foreign.body.error).toBe('job_id_mismatch');
      expect(await head()).toEqual(before);
      expect((await t.http.get('/api/jobs/job-gamma/timeline')).status).toBe(404);
    });

    it('answers 404 for an unknown job', async () => {
      for (const p of ['timeline', 'verify', 'endpoint']) expect((await t.http.get(`/api/jobs/job-unknown/${p}`)).status).toBe(404);
      const c = await send('post', '/api/jobs/job-unknown/commitments', JSON.stringify({ ...COMMITMENT, job_id: 'job-unknown' }));
      expect(c.status).toBe(404);
    });

    it('keeps the ledger chain verifiable and the projections rebuildable', async () => {
      const before = (await t.http.get('/api/jobs/job-eight/timeline')).body;
      const v = await t.http.get('/api/ledger/verify');
      expect(v.body.ok).toBe(true);
      const { LedgerService } = await import('../../src/ledger/ledger.service');
      await t.app.get(LedgerService).rebuildProjections();
      expect((await t.http.get('/api/jobs/job-eight/timeline')).body).toEqual(before);
      expect((await t.http.get('/api/jobs/job-eight/verify')).body.commitment.status).toBe('binding');
    });
  });

  describe('the eight-entry timeline imported, with its witness commitment', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp(dialect);
    });
    afterAll(async () => {
      await t.close();
    });

    it('imports as valid and the commitment binds', async () => {
      const auth = { Authorization: `Bearer ${t.keys.producer}`, 'Content-Type': 'application/json' };
      const r = await t.http.put('/api/jobs/job-eight/timeline').set(auth).send(JSON.stringify(EIGHT, null, 2));
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ verdict: 'valid', entry_count: 8, final_entry_digest: FINAL_EIGHT, closed: true });
      const c = await t.http.post('/api/jobs/job-eight/commitments').set(auth).send(JSON.stringify(WITNESSED));
      expect(c.status).toBe(201);
      expect(c.body.binding).toBe(true);
      const v = await t.http.get('/api/jobs/job-eight/verify');
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ verdict: 'valid', truncation_excluded: true, commitment: { status: 'binding' } });
      const ep = await t.http.get('/api/jobs/job-eight/endpoint');
      expect(ep.body).toMatchObject({ job_id: 'job-eight', entry_count: 8, final_entry_digest: FINAL_EIGHT });
    });
  });

  describe('the rebuilt six-entry truncation of job-eight', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp(dialect);
    });
    afterAll(async () => {
      await t.close();
    });

    it('verifies as a chain, and the witness commitment catches the truncation', async () => {
      const auth = { Authorization: `Bearer ${t.keys.producer}`, 'Content-Type': 'application/json' };
      const r = await t.http.put('/api/jobs/job-eight/timeline').set(auth).send(JSON.stringify(SIX));
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ verdict: 'valid', entry_count: 6, closed: true });
      const c = await t.http.post('/api/jobs/job-eight/commitments').set(auth).send(JSON.stringify(WITNESSED));
      expect(c.status).toBe(201);
      expect(c.body.binding).toBe(false);
      expect(c.body.reasons).toEqual(['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch']);
      const v = await t.http.get('/api/jobs/job-eight/verify');
      expect(v.status).toBe(422);
      expect(v.body).toMatchObject({ assessment: 'truncation_detected', verdict: 'valid', truncation_excluded: false, commitment: { status: 'non_binding', reasons: ['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch'] } });
      // Issue 15: the import (closed, valid) made the ledger commit to the six it saw; that binds the six, and hides nothing.
      expect(v.body.commitments.map((x: { outcome: string; attestation: { kind: string } }) => [x.outcome, x.attestation.kind])).toEqual([
        ['binding', 'ledger_issued'],
        ['truncation_detected', 'self_asserted'],
      ]);
      expect(v.body.statement).toMatch(/Truncation is not excluded \(S7.3\): a recorded commitment contradicts the visible timeline.*1 other commitment binds the visible timeline; that does not hide the contradiction/);
    });
  });
});

describe.each(DIALECTS)('witness metadata on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['witness', null],
    ['witness', 42],
    ['witness', 'x'.repeat(501)],
    ['retrieved_from', 'javascript:alert(1)'],
    ['retrieved_from', ['https://witness.example']],
    ['retrieved_at', '2026-02-30T00:00:00Z'],
  ])('refuses %s = %j with 422 invalid_commitment and records nothing', async (field, value) => {
    const head = (await t.http.get('/api/ledger/head')).body;
    const body = { job_id: 'job-w', final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z', [field]: value };
    const r = await t.http.post('/api/jobs/job-w/commitments').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('invalid_commitment');
    expect(JSON.stringify(r.body.problems)).toContain(field);
    expect((await t.http.get('/api/ledger/head')).body).toEqual(head);
  });
});
