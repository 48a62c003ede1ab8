/**
 * Endpoint commitments that say who stands behind them (issue 15): the
 * self-asserted "independent notary" attack replayed, an attested commitment
 * (TRUSTED_COMMITMENT_KEYS), refusals that write nothing, the ledger-issued
 * commitment on close (an event in the tree), and no key: none issued.
 */
import { checkCommitment, entryDigest, verifyTimeline } from '../../src/core/aer1';
import { commitmentNoteText } from '../../src/core/aer1/attestation';
import { generateSignerKey, parseVerifierKey, signNote, verifyNote } from '../../src/core/tlog';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { recordedBy } from '../../src/auth/permissions';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { streams } from '../../src/ledger/streams';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { buildTimeline, commitmentFor, EIGHT_STEPS, Entry, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const SIX = EIGHT_STEPS.slice(0, 6);
const NOTARY = 'Totally Independent Notary Inc.';
const notary = generateSignerKey('notary.example');
const stranger = generateSignerKey('stranger.example');

function sixToolPlan(job: string): Record<string, unknown> {
  return { job_id: job, title: 'six tools', unplanned: 'flag', expected_actions: SIX.map((s) => ({ action_id: s.tool, tool: s.tool })) };
}

describe.each(DIALECTS)('endpoint commitment attestation on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect, { TRUSTED_COMMITMENT_KEYS: `${notary.verifierKey}\n` });
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const head = async () => (await t.http.get('/api/ledger/head')).body;
  async function report(job: string) {
    const r = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    return (await t.http.get(`/api/coverage-reports/${r.body.report_id}`)).body.report;
  }

  /** A plan, receipts, and a closed six-entry timeline recorded as events the way a ledger did before it issued commitments. */
  async function closedBeforeIssuing(job: string): Promise<Entry[]> {
    expect((await post('/api/plans', sixToolPlan(job), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, SIX);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    const db = t.app.get(DatabaseService);
    const ledger = t.app.get(LedgerService);
    // Written by the producer's key (it owns the timeline), straight to the ledger as before issue 15.
    const by = recordedBy((await t.app.get(ApiKeysService).fromHeader(`Bearer ${t.keys.producer}`))!);
    await db.write(async (tx) => {
      const stream = streams.timeline(job);
      for (const e of tl) {
        await ledger.append(tx, stream, await ledger.streamVersion(tx, stream), [
          { type: 'TimelineEntryAppended', data: { job_id: job, seq: e.seq, raw: JSON.stringify(e), entry_digest: entryDigest(e)!, receipt_id: e.id, tool: e.tool, provenance_class: e.provenance_class, close: e.close === true } },
        ], by);
      }
    });
    return tl;
  }

  it('the attack replayed: a producer posts a commitment naming an "independent notary": self-asserted, the name a claim, coverage not full', async () => {
    const job = 'job-notary';
    const tl = await closedBeforeIssuing(job);
    const claim = { ...commitmentFor(tl, '2026-10-01T12:30:00Z'), witness: NOTARY };
    const r = await post(`/api/jobs/${job}/commitments`, claim, t.keys.producer);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ binding: true, binding_attestation: 'self_asserted', attestation: { kind: 'self_asserted', by: [], posted_by: 'test-producer', note: null } });

    const v = await t.http.get(`/api/jobs/${job}/verify`);
    expect(v.body).toMatchObject({ verdict: 'valid', truncation_excluded: true, binding_attestation: 'self_asserted', commitment: { status: 'binding', attestation: { kind: 'self_asserted', posted_by: 'test-producer' } } });
    // The notary's name appears only as the poster's claim (was: "... published by Totally Independent Notary Inc.").
    expect(v.body.statement).not.toMatch(/published by/);
    expect(v.body.statement).toMatch(/self-asserted: posted by key "test-producer".*it names witness "Totally Independent Notary Inc\.": the poster's claim, not checked/);
    expect(v.body.statement).toMatch(/the producer's own word/);
    expect(v.body.commitments[0]).toMatchObject({ witness: { witness: NOTARY }, attestation: { kind: 'self_asserted' } });

    const c = await report(job);
    expect(c.result).toBe('findings');
    expect(c.findings.map((f: { code: string }) => f.code)).toEqual(['commitment_self_asserted']);
    expect(c.findings[0].message).toContain(`It names witness "${NOTARY}": the poster's claim, not checked.`);
    expect(c.integrity.commitment).toMatchObject({ state: 'binding', truncation: 'excluded', attestation: 'self_asserted' });
    expect(c.integrity.commitments[0]).toMatchObject({ attestation: 'self_asserted', attested_by: [], witness: { witness: NOTARY } });
    expect(c.actions.every((a: { status: string }) => a.status === 'covered')).toBe(true);

    const page = await t.http.get(`/jobs/${job}`);
    expect(page.text).toContain('<span class="badge warn">self-asserted</span>');
    expect(page.text).toContain('Witness metadata (the poster&#39;s claim)');
    expect(page.text).toContain('Chain valid — bound only by a self-asserted endpoint commitment');
    expect(page.text).not.toContain('class="badge ok"><bdi>binding</bdi>');

    // The job closed before the ledger issued commitments: the endpoint says none is issued.
    const ep = await t.http.get(`/api/jobs/${job}/endpoint`);
    expect(ep.body).toMatchObject({ job_id: job, entry_count: 6, ledger_commitment: null });
    expect(ep.body.statement).toMatch(/^No ledger-issued endpoint commitment: the timeline closed before this ledger issued endpoint commitments/);
  });

  it('the same commitment signed by a trusted key is attested; coverage is full', async () => {
    const job = 'job-attested';
    const tl = await closedBeforeIssuing(job);
    const text = JSON.stringify({ ...commitmentFor(tl, '2026-10-01T12:30:00Z'), witness: 'notary.example' });
    const note = signNote(commitmentNoteText(text), [notary.signer]);
    const r = await post(`/api/jobs/${job}/commitments`, { attestation: note }, t.keys.producer);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ binding: true, binding_attestation: 'attested_by', attestation: { kind: 'attested_by', by: ['notary.example'], posted_by: 'test-producer', note } });
    const row = await t.app.get(DatabaseService).query<{ raw: string; attestation: string }>('SELECT raw, attestation FROM commitments WHERE id = ?', [r.body.id]);
    expect(row[0].raw).toBe(text);
    expect(JSON.parse(row[0].attestation)).toEqual({ issued_by: 'witness', note, keys: [{ name: 'notary.example', vkey: notary.verifierKey }] });
    // The same note again: the same record.
    const again = await post(`/api/jobs/${job}/commitments`, { attestation: note }, t.keys.producer);
    expect([again.status, again.body.id]).toEqual([200, r.body.id]);

    const v = await t.http.get(`/api/jobs/${job}/verify`);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ assessment: 'clean', binding_attestation: 'attested_by', commitment: { attestation: { kind: 'attested_by', by: ['notary.example'] } } });
    expect(v.body.statement).toMatch(/attested by "notary.example": a signature by a key trusted for commitments verifies/);
    const c = await report(job);
    expect(c.result).toBe('full_coverage');
    expect(c.integrity.commitment.attestation).toBe('attested_by');
    const page = await t.http.get(`/jobs/${job}`);
    expect(page.text).toContain('<span class="badge ok">attested by <bdi>notary.example</bdi></span>');
  });

  it('refuses a bad signature, an untrusted key, a malformed attestation: a clear 422 and nothing written', async () => {
    const job = 'job-refused';
    const tl = await closedBeforeIssuing(job);
    const text = JSON.stringify(commitmentFor(tl));
    const good = signNote(commitmentNoteText(text), [notary.signer]);
    const before = await head();
    const cases: [unknown, string][] = [
      [{ attestation: good.replace('"entry_count":6', '"entry_count":7') }, 'attestation_signature_invalid'],
      [{ attestation: signNote(commitmentNoteText(text), [stranger.signer]) }, 'attestation_key_untrusted'],
      [{ attestation: text }, 'invalid_attestation'],
      [{ attestation: good, witness: NOTARY }, 'invalid_attestation'],
      [{ attestation: 42 }, 'invalid_attestation'],
      [{ attestation: signNote(commitmentNoteText('not json'), [notary.signer]) }, 'invalid_attestation'],
      [{ attestation: signNote(commitmentNoteText(` ${text}`), [notary.signer]) }, 'invalid_attestation'],
    ];
    for (const [body, code] of cases) {
      const r = await post(`/api/jobs/${job}/commitments`, body, t.keys.producer);
      expect([r.status, r.body.error]).toEqual([422, code]);
      expect(r.body.reasons).toEqual([code]);
      expect(r.body.message).toMatch(/nothing was recorded/);
    }
    // A note over a malformed commitment is signed, but still not a commitment.
    const bad = await post(`/api/jobs/${job}/commitments`, { attestation: signNote(commitmentNoteText(JSON.stringify({ ...commitmentFor(tl), entry_count: '6' })), [notary.signer]) }, t.keys.producer);
    expect([bad.status, bad.body.error]).toEqual([422, 'invalid_commitment']);
    expect(await head()).toEqual(before);
    expect((await t.app.get(DatabaseService).query('SELECT id FROM commitments WHERE job_id = ?', [job])).length).toBe(0);
  });

  it('the ledger issues its own commitment on close: signed by the log key, an event in the tree, and coverage is full when all is covered', async () => {
    const job = 'job-ledger-issued';
    expect((await post('/api/plans', sixToolPlan(job), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, SIX);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    const open = await post(`/api/jobs/${job}/entries`, tl.slice(0, 5), t.keys.producer);
    expect(open.status).toBe(201);
    expect(open.body.ledger_commitment).toBeUndefined(); // not closed yet: nothing issued
    const close = await post(`/api/jobs/${job}/entries`, tl[5], t.keys.producer);
    expect(close.status).toBe(201);
    const issued = close.body.ledger_commitment;
    expect(issued).toMatchObject({ id: expect.any(String), position: close.body.appended[0].position + 1 });

    const id = t.app.get(LogIdentityService).current!;
    const ep = await t.http.get(`/api/jobs/${job}/endpoint`);
    expect(ep.status).toBe(200);
    const lc = ep.body.ledger_commitment;
    expect(lc).toMatchObject({ id: issued.id, note: issued.note, position: issued.position, log_vkey: id.vkey, signature_verifies: true });
    expect(verifyNote(lc.note, [parseVerifierKey(id.vkey)]).text).toBe(`${lc.text}\n`);
    expect(checkCommitment(verifyTimeline(tl), JSON.parse(lc.text)).binding).toBe(true);
    expect(JSON.parse(lc.text)).toEqual({ entry_count: 6, final_entry_digest: entryDigest(tl[5]), job_id: job, published_at: ep.body.published_at });

    // In the tree: the event's leaf is found by its hash.
    const ev = await t.app.get(DatabaseService).query<{ position: number | string; event_hash: string; type: string }>('SELECT position, event_hash, type FROM events WHERE position = ?', [issued.position]);
    expect(ev[0].type).toBe('EndpointCommitmentRecorded');
    const found = await t.http.get(`/api/ledger/search?event_hash=${ev[0].event_hash}`);
    expect(found.body.events).toEqual([{ position: issued.position, leaf_index: issued.position - 1, stream_id: `timeline:${job}`, type: 'EndpointCommitmentRecorded' }]);

    const v = await t.http.get(`/api/jobs/${job}/verify`);
    expect(v.body).toMatchObject({ assessment: 'clean', binding_attestation: 'ledger_issued', commitments: [{ id: issued.id, attestation: { kind: 'ledger_issued', by: [id.origin], posted_by: 'test-producer' } }] });
    const c = await report(job);
    expect(c.result).toBe('full_coverage');
    expect(c.findings).toEqual([]);
    expect(c.integrity.commitments).toEqual([expect.objectContaining({ commitment: issued.id, attestation: 'ledger_issued', attested_by: [id.origin], binding: true })]);
    const page = await t.http.get(`/jobs/${job}`);
    expect(page.text).toContain('<span class="badge ok">ledger-issued</span>');
    expect(page.text).toContain('issued by this ledger when the timeline closed');
  });

  it('a closed timeline imported valid gets the ledger-issued commitment too; a historical one does not', async () => {
    const job = 'job-imported';
    const tl = buildTimeline(job, SIX);
    const r = await t.http.put(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(tl));
    expect(r.status).toBe(201);
    expect(r.body.ledger_commitment).toMatchObject({ id: expect.any(String) });
    const v = await t.http.get(`/api/jobs/${job}/verify`);
    expect(v.body).toMatchObject({ assessment: 'clean', binding_attestation: 'ledger_issued' });
  });
});

describe('no log key (PostgreSQL without LEDGER_SIGNING_KEY_FILE)', () => {
  jest.setTimeout(60_000);
  const run = DIALECTS.includes('postgres') ? it : it.skip;
  run('issues no commitment on close and says so', async () => {
    const t = await startApp('postgres', { LEDGER_SIGNING_KEY_FILE: '' });
    try {
      expect(t.app.get(LogIdentityService).current).toBeNull();
      const tl = buildTimeline('job-nokey', SIX);
      const r = await t.http.post('/api/jobs/job-nokey/entries').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(tl));
      expect(r.status).toBe(201);
      expect(r.body.ledger_commitment).toBeNull();
      const ep = await t.http.get('/api/jobs/job-nokey/endpoint');
      expect(ep.body).toMatchObject({ entry_count: 6, ledger_commitment: null });
      expect(ep.body.statement).toMatch(/^No ledger-issued endpoint commitment: this deployment has no log signing key/);
      const v = await t.http.get('/api/jobs/job-nokey/verify');
      expect(v.body).toMatchObject({ assessment: 'truncation_not_excluded', commitment_assessment: 'absent', binding_attestation: null });
    } finally {
      await t.close();
    }
  });
});
