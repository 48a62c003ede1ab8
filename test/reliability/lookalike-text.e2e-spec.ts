/**
 * Issue 11 section 5 (and the identifier limit of section 7): text that
 * looks like other text. Each test names what used to happen; see
 * README.md here, "Integrity issue (text that looks like other text)".
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZERO_DIGEST } from '../../src/core/aer1';
import { DatabaseService } from '../../src/database/database.service';
import { cli } from '../cli/helpers';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { call, freshReceipt, listen, makeEntry } from './helpers';

/** Identifiers that render like `job-kyc-42` (or like each other), and the reason each is refused. */
const LOOKALIKES: [string, string, string][] = [
  ['RLO reversing the rest', 'job-\u202E24-cyk', 'format'],
  ['trailing space', 'job-kyc-42 ', 'space'],
  ['leading space', ' job-kyc-42', 'space'],
  ['zero-width space', 'job-kyc\u200B-42', 'format'],
  ['word joiner', 'job-kyc\u2060-42', 'format'],
  ['byte order mark', '\uFEFFjob-kyc-42', 'format'],
  ['left-to-right isolate', 'job-\u2066kyc-42', 'format'],
  ['Arabic letter mark', 'job-kyc-\u061C42', 'format'],
  ['no-break space', 'job\u00A0kyc-42', 'space'],
  ['NFD e + combining acute', 'job-cafe\u0301-42', 'not_nfc'],
  ['C1 control (CSI)', 'job-\u009B2J-42', 'control'],
  ['escape', 'job-\u001B[2J-42', 'control'],
  ['NUL', 'job-\u0000-42', 'control'],
  ['Hangul filler', 'job-kyc-\u3164-42', 'format'],
];

describe.each(DIALECTS)('text that looks like other text on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let base: string;
  const head = async () => (await call(base, 'GET', '/api/ledger/head')).body;
  const post = (path: string, body: unknown, key = t.keys.producer, contentType = 'application/json') =>
    call(base, 'POST', path, { key, body: typeof body === 'string' ? body : JSON.stringify(body), contentType });
  const put = (path: string, body: unknown, key = t.keys.producer) => call(base, 'PUT', path, { key, body: JSON.stringify(body) });
  const plan = (jobId: string, actionId = 'a') => ({ job_id: jobId, title: 'KYC', expected_actions: [{ action_id: actionId, tool: 'x' }] });

  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses look-alike job ids wherever a job id enters, 400 unsupported_character, nothing written (was: distinct jobs whose pages looked identical)', async () => {
    const before = await head();
    for (const [what, job, reason] of LOOKALIKES) {
      const path = `/api/jobs/${encodeURIComponent(job)}`;
      const answers = [
        await post(`${path}/entries`, makeEntry(job, 1, ZERO_DIGEST)),
        await put(`${path}/timeline`, [makeEntry(job, 1, ZERO_DIGEST, { close: true })]),
        await post(`${path}/commitments`, { job_id: job, final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z' }),
        await post('/api/plans', plan(job), t.keys.compliance),
      ];
      for (const r of answers) {
        expect([what, r.status, r.body?.error]).toEqual([what, 400, 'unsupported_character']);
      }
      // The reason is named where the identifier is checked directly.
      expect([what, answers[0].body.reason, answers[0].body.field]).toEqual([what, reason, 'job_id']);
      const target = await post('/api/verification-batches', { targets: [{ kind: 'job', id: job }] }, t.keys.auditor);
      expect([what, target.status, target.body.error]).toEqual([what, 400, 'invalid_targets']);
      const report = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
      expect([what, report.status, report.body.error]).toEqual([what, 400, 'invalid_request']);
    }
    expect(await head()).toEqual(before);
    // The plain spellings are accepted: NFC é, an inner U+0020.
    for (const job of ['job-kyc-42', 'job-caf\u00E9-42', 'job kyc 42']) {
      expect((await post(`/api/jobs/${encodeURIComponent(job)}/entries`, makeEntry(job, 1, ZERO_DIGEST))).status).toBe(201);
    }
  });

  it('refuses look-alike entry ids, plan action ids, commitment job ids and key names (was: recorded)', async () => {
    const before = await head();
    const job = `job-${randomUUID()}`;
    const entry = await post(`/api/jobs/${job}/entries`, { ...makeEntry(job, 1, ZERO_DIGEST), id: 'receipt-\u202Egpj.exe' });
    expect([entry.status, entry.body.error, entry.body.reason]).toEqual([400, 'unsupported_character', 'format']);
    const imported = await put(`/api/jobs/${job}/timeline`, [{ ...makeEntry(job, 1, ZERO_DIGEST, { close: true }), id: 'r1\u200B' }]);
    expect([imported.status, imported.body.error]).toEqual([400, 'unsupported_character']);
    const action = await post('/api/plans', plan(`job-${randomUUID()}`, 'check\u202E'), t.keys.compliance);
    expect([action.status, action.body.error]).toEqual([400, 'unsupported_character']);
    expect(action.body.problems).toEqual([expect.objectContaining({ path: 'expected_actions[0].action_id', code: 'unsupported_character' })]);
    const key = await post('/api/keys', { name: 'ops\u202E', role: 'producer' }, t.keys.admin);
    expect([key.status, key.body.error]).toEqual([400, 'unsupported_character']);
    expect(await head()).toEqual(before);
    // A commitment naming a look-alike job (the path's job exists) is refused too.
    expect((await post(`/api/jobs/${job}/entries`, makeEntry(job, 1, ZERO_DIGEST))).status).toBe(201);
    const after = await head();
    const c = await post(`/api/jobs/${job}/commitments`, { job_id: `${job}\u200B`, final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z' });
    expect([c.status, c.body.error]).toEqual([400, 'unsupported_character']);
    expect(await head()).toEqual(after);
  });

  it('job ids differing only in lone surrogates are both refused, not collided (was on PostgreSQL: a plan for ...\\ud800 blocked one for ...\\udfff)', async () => {
    const before = await head();
    const stem = `job-${randomUUID()}-`;
    for (const job of [`${stem}\uD800`, `${stem}\uDFFF`]) {
      const r = await post('/api/plans', plan(job), t.keys.compliance);
      expect([r.status, r.body.error]).toEqual([400, 'unsupported_character']);
      const e = await post(`/api/jobs/${stem}x/entries`, { ...makeEntry(`${stem}x`, 1, ZERO_DIGEST), id: `id-\uDC00` });
      expect([e.status, e.body.error]).toEqual([400, 'unsupported_character']);
      // A read by such an id (a verification target) is refused the same way.
      const b = await post('/api/verification-batches', { targets: [{ kind: 'job', id: job }] }, t.keys.auditor);
      expect([b.status, b.body.error]).toEqual([400, 'invalid_targets']);
    }
    // The storage layer refuses a lone surrogate in any text on both dialects (a tool name is not an identifier).
    const tool = await post(`/api/jobs/${stem}y/entries`, { ...makeEntry(`${stem}y`, 1, ZERO_DIGEST), tool: 'fetch\uD800' });
    expect([tool.status, tool.body.error]).toEqual([400, 'unsupported_character']);
    expect(await head()).toEqual(before);
  });

  it('one identifier limit, 200 characters, for plan and timeline job ids alike (was: plans capped at 200, timelines not)', async () => {
    const at = `job-${'x'.repeat(196)}`;
    const over = `${at}y`;
    expect([at.length, over.length]).toEqual([200, 201]);
    expect((await post(`/api/jobs/${at}/entries`, makeEntry(at, 1, ZERO_DIGEST))).status).toBe(201);
    expect((await post('/api/plans', plan(at), t.keys.compliance)).status).toBe(201);
    const before = await head();
    const answers = [await post(`/api/jobs/${over}/entries`, makeEntry(over, 1, ZERO_DIGEST)), await post('/api/plans', plan(over), t.keys.compliance)];
    for (const r of answers) expect([r.status, r.body.error]).toEqual([400, 'value_too_large']);
    // Code points, not UTF-16 units: 200 astral characters are accepted.
    const astral = '\u{1D4B3}'.repeat(200);
    expect((await post('/api/plans', plan(astral), t.keys.compliance)).status).toBe(201);
    expect([(await post('/api/plans', plan(`${astral}x`), t.keys.compliance)).body.error]).toEqual(['value_too_large']);
    expect((await head()).position).toBe(before.position + 1);
  });

  it('reads by look-alike or unstorable ids answer 404 or 400, never 500', async () => {
    for (const [, job] of LOOKALIKES) {
      const path = encodeURIComponent(job);
      for (const p of [`/api/jobs/${path}/verify`, `/api/jobs/${path}/timeline`, `/api/jobs/${path}/endpoint`, `/jobs/${path}`]) {
        const r = await call(base, 'GET', p);
        const expected = job.includes('\u0000') ? [400, 'unsupported_character'] : [404, 'not_found'];
        expect([p, r.status, r.headers.get('content-type')?.includes('json') ? r.body.error : 'not_found']).toEqual([p, ...expected]);
      }
    }
  });

  it('refuses URLs with userinfo (was: recorded, and a verify_url of http://127.0.0.1:4711@evil.example/ was rendered as a link)', async () => {
    const job = `job-${randomUUID()}`;
    expect((await post(`/api/jobs/${job}/entries`, makeEntry(job, 1, ZERO_DIGEST))).status).toBe(201);
    const before = await head();
    const c = await post(`/api/jobs/${job}/commitments`, {
      commitment: { job_id: job, final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z' },
      witness: 'witness.example',
      retrieved_from: 'http://127.0.0.1:4711@evil.example/jobs/x',
    });
    const flat = await post(`/api/jobs/${job}/commitments`, { job_id: job, final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z', retrieved_from: 'https://user:pw@witness.example/' });
    for (const r of [c, flat]) {
      expect([r.status, r.body.error]).toEqual([422, 'invalid_commitment']);
      expect(JSON.stringify(r.body.problems)).toContain('userinfo');
    }
    // A workflow receipt whose verify_url has userinfo.
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = freshReceipt();
      expect((await post('/api/receipts', r.text)).status).toBe(201);
      ids.push(r.id);
    }
    const assembled = await post('/api/workflows/assemble', { session_id: 's', goal: 'g', status: 'completed', receipt_ids: ids, output: 'o' });
    expect(assembled.status).toBe(201);
    const afterAssemble = await head();
    const workflow = { ...assembled.body.workflow, workflow_id: randomUUID(), verify_url: 'http://127.0.0.1:4711@evil.example/workflow/x' };
    const w = await post('/api/workflows', workflow);
    expect([w.status, w.body.error]).toEqual([422, 'url_has_userinfo']);
    expect(await head()).toEqual(afterAssemble);
    expect(before.position).toBeLessThan(afterAssemble.position);
  });

  it('pages mark invisible and bidi characters and isolate user text; an unterminated RLO in a goal reorders nothing after it (was: the RLO reversed the page text after it)', async () => {
    const job = `job-${randomUUID()}`;
    // Tool names and goals are content, not identifiers: recorded exactly, shown visibly.
    expect((await post(`/api/jobs/${job}/entries`, { ...makeEntry(job, 1, ZERO_DIGEST), tool: 'fetch\u202Eexe.txt\u200B' })).status).toBe(201);
    const page = await call(base, 'GET', `/jobs/${job}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/[\u202E\u200B]/);
    expect(page.text).toContain('<bdi>fetch<span class="cp" title="invisible or control character U+202E">&lt;U+202E&gt;</span>exe.txt<span class="cp" title="invisible or control character U+200B">&lt;U+200B&gt;</span></bdi>');
    // The JSON keeps the exact text.
    const json = await call(base, 'GET', `/api/jobs/${job}/timeline`);
    expect(json.body.entries[0].tool).toBe('fetch\u202Eexe.txt\u200B');

    const r = freshReceipt();
    expect((await post('/api/receipts', r.text)).status).toBe(201);
    const w = await post('/api/workflows/assemble', { session_id: 'sess\u2067', goal: 'Approve \u202Eloan', status: 'completed', receipt_ids: [r.id], output: 'o' });
    expect(w.status).toBe(201);
    const run = await call(base, 'GET', `/run/${r.id}`);
    const wf = await call(base, 'GET', `/workflow/${w.body.workflow_id}`);
    for (const p of [run, wf]) {
      expect(p.status).toBe(200);
      expect(p.text).not.toMatch(/[\u202E\u2067]/);
      expect(p.text).toContain('Approve <span class="cp" title="invisible or control character U+202E">&lt;U+202E&gt;</span>loan');
    }
    expect(wf.text).toContain('<bdi>sess<span class="cp"');

    // The coverage report page: a plan title and tool names are content, shown the same way.
    const cjob = `job-${randomUUID()}`;
    expect((await post('/api/plans', { job_id: cjob, title: 'KYC \u202Eevil', expected_actions: [{ action_id: 'fetch', tool: 'fetch\u202Eexe' }] }, t.keys.compliance)).status).toBe(201);
    expect((await post(`/api/jobs/${cjob}/entries`, { ...makeEntry(cjob, 1, ZERO_DIGEST), tool: 'fetch\u202Eexe' })).status).toBe(201);
    const rep = await post('/api/coverage-reports', { job_id: cjob }, t.keys.auditor);
    expect(rep.status).toBe(201);
    const cov = await call(base, 'GET', `/coverage/${rep.body.report_id}`);
    expect(cov.status).toBe(200);
    expect(cov.text).not.toMatch(/\u202E/);
    expect(cov.text).toContain('<bdi>KYC <span class="cp"');
    expect(cov.text).toContain('<code class="id"><bdi>fetch<span class="cp" title="invisible or control character U+202E">&lt;U+202E&gt;</span>exe</bdi></code>');
  });
});

describe('aer1 ledger verify escapes what it prints from the database', () => {
  let t: TestApp;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-lookalike-'));
    file = join(dir, 'ledger.sqlite');
    t = await startApp('sqlite', { DATABASE_URL: `sqlite:${file}` });
    for (let i = 0; i < 2; i++) {
      expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).send(freshReceipt().text)).status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an event_hash holding terminal escape sequences reaches the terminal escaped, text and JSON (was: printed raw)', async () => {
    const db = t.app.get(DatabaseService);
    await db.unsafeQuery('DROP TRIGGER events_no_update');
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202Eevil';
    await db.unsafeQuery('UPDATE events SET event_hash = ? WHERE position = 2', [hostile]);
    const text = await cli(['ledger', 'verify', '--database', file]);
    expect(text.code).toBe(1);
    expect(text.out).toContain('first failure: position 2 (event_hash_mismatch)');
    expect(text.out).toContain('stored event_hash \\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil, recomputed');
    const json = await cli(['ledger', 'verify', '--database', file, '--json']);
    expect(json.code).toBe(1);
    // Matching control characters is the point here.
    // eslint-disable-next-line no-control-regex
    for (const out of [text.out, json.out]) expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    // Still the same JSON document.
    expect(JSON.parse(json.out).first_failure.detail).toContain(hostile);
  });
});
