import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { makeEntry } from '../reliability/helpers';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';

type Vector = { id: string; kind: string; input: unknown };
const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: Vector[] };
const vector = <T = Record<string, unknown>>(id: string): T => corpus.vectors.find((v) => v.id === id)!.input as T;
const valid3 = vector<{ workflow: Record<string, unknown> & { workflow_id: string }; step_receipts: { id: string }[] }>('workflow-valid-3');
const core = vector('receipt-core-valid');
/** A corpus receipt with another id: id and tool name are outside the output commitment, so it stays valid. */
const withId = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ...core, id, ...extra });

describe.each(DIALECTS)('public pages on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
    const post = (path: string, body: string) => t.http.post(path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(body);
    for (const r of valid3.step_receipts) expect((await post('/api/receipts', JSON.stringify(r))).status).toBe(201);
    expect((await post('/api/workflows', JSON.stringify(valid3.workflow))).status).toBe(201);
    expect((await post('/api/receipts', JSON.stringify(core))).status).toBe(201);
    expect((await post('/api/receipts/38b2097d-75ca-5ae7-8135-da763ecf0256/corrections', withId('5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11'))).status).toBe(201);
    expect((await post('/api/receipts', withId('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', { tool: { name: '<script>alert(1)</script>', version: '1', scope: 'public' } }))).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it('shows a step receipt with its provenance class and a "Part of workflow" link', async () => {
    const id = valid3.step_receipts[1].id;
    const r = await t.http.get(`/run/${id.toUpperCase()}`).set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    expect(r.headers['content-security-policy']).toContain("default-src 'none'");
    expect(r.text).toContain('EXECUTED BY LEDGER');
    expect(r.text).toContain('The recording system ran the tool and recorded the returned result.');
    expect(r.text).toContain('Verification never upgrades provenance');
    expect(r.text).toContain('Part of workflow');
    expect(r.text).toContain(`href="/workflow/${valid3.workflow.workflow_id}"`);
    expect(r.text).toContain('sha256:3f8dfebc3bdf8445321ba564aa800a906b41852559493ea4b8af557b5ec85581');
    expect(r.text).toContain('What this does not prove');
  });

  it('shows no workflow reference for a receipt in no workflow', async () => {
    const r = await t.http.get('/run/38b2097d-75ca-5ae7-8135-da763ecf0256');
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('Part of workflow');
    expect(r.text).not.toContain('/workflow/');
  });

  it('gives JSON to JSON clients', async () => {
    const id = valid3.step_receipts[0].id;
    const r = await t.http.get(`/run/${id}`).set('Accept', 'application/json');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    expect(r.body).toMatchObject({
      receipt: { id },
      provenance: { class: 'EXECUTED BY LEDGER', kind: 'executed' },
      verification: { verdict: 'valid', verification_status: 'verified', computed_output_hash: 'sha256:3f8dfebc3bdf8445321ba564aa800a906b41852559493ea4b8af557b5ec85581' },
      workflows: [{ workflow_id: valid3.workflow.workflow_id, seq: 1, url: `https://ledger.test/workflow/${valid3.workflow.workflow_id}` }],
      superseded_by: null,
      supersedes: null,
      url: `https://ledger.test/run/${id}`,
      verify_url: `https://ledger.test/api/receipts/${id}/verify`,
    });
    expect(r.body.raw).toBe(JSON.stringify(valid3.step_receipts[0]));
    const w = await t.http.get(`/workflow/${valid3.workflow.workflow_id}`).set('Accept', 'application/json');
    expect(w.status).toBe(200);
    expect(w.body.verification).toMatchObject({ verification_status: 'verified', merkle_root: { confirmed: true } });
  });

  it('shows the superseded-by notice on a corrected receipt and "supersedes" on the correction', async () => {
    const r = await t.http.get('/run/38b2097d-75ca-5ae7-8135-da763ecf0256');
    expect(r.text).toContain('id="superseded-by"');
    expect(r.text).toContain('href="/run/5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11"');
    const c = await t.http.get('/run/5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11');
    expect(c.text).toContain('id="supersedes"');
    expect(c.text).toContain('href="/run/38b2097d-75ca-5ae7-8135-da763ecf0256"');
    expect(c.text).not.toContain('id="superseded-by"');
  });

  it('escapes what the receipt carries', async () => {
    const r = await t.http.get('/run/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee');
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('<script>');
    expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('shows a job timeline, its chain position on the receipt page, and whether truncation is excluded', async () => {
    const { timeline, commitment } = vector<{ timeline: Record<string, unknown>[]; commitment: Record<string, unknown> }>('commitment-binding');
    // Recorded through the timelines API (rows seeded without events are refused: projection_mismatch).
    const send = (method: 'put' | 'post', path: string, body: unknown) => t.http[method](path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await send('put', '/api/jobs/job-eight/timeline', timeline)).status).toBe(201);
    const tagged = { ...makeEntry('job-<b>', 1, ZERO_DIGEST, { close: true }), id: valid3.step_receipts[2].id, tool: 'live_price' };
    expect((await send('put', `/api/jobs/${encodeURIComponent('job-<b>')}/timeline`, [tagged])).status).toBe(201);
    let r = await t.http.get('/jobs/job-eight');
    expect(r.status).toBe(200);
    // Issue 15: the import (closed, valid) made the ledger issue its own endpoint commitment, which binds.
    expect(r.text).not.toContain('Truncation is not excluded');
    expect((await t.http.get('/jobs/job-eight').set('Accept', 'application/json')).body).toMatchObject({ truncation_excluded: true, binding_attestation: 'ledger_issued' });
    expect(r.text).toContain('214895e816d6399de5bf876e2b911e4383a9cfc89e0d3b1989e7f5c282d104fe');
    // Issue 12: these entries' receipts are not recorded in this ledger: shown and said so, never linked to "Not found".
    expect(r.text).not.toContain(`href="/run/${String(timeline[0].id)}"`);
    expect(r.text).toContain(String(timeline[0].id));
    expect(r.text).toContain('receipt not recorded in this ledger');
    // A recorded entry receipt is linked.
    expect((await t.http.get('/jobs/job-%3Cb%3E')).text).toContain(`href="/run/${valid3.step_receipts[2].id}"`);

    expect((await send('post', '/api/jobs/job-eight/commitments', { ...commitment, witness: 'notary.example', retrieved_at: '2026-10-02T09:00:00Z' })).status).toBe(201);
    r = await t.http.get('/jobs/job-eight').set('Accept', 'application/json');
    expect(r.body).toMatchObject({ job_id: 'job-eight', verdict: 'valid', entry_count: 8, truncation_excluded: true });
    expect(r.body.commitments.find((c: { witness?: unknown }) => c.witness)).toMatchObject({ binding: true, witness: { witness: 'notary.example' } });
    r = await t.http.get('/jobs/job-eight');
    expect(r.text).not.toContain('Truncation is not excluded');
    expect(r.text).toContain('notary.example');

    const run = await t.http.get(`/run/${valid3.step_receipts[2].id}`);
    expect(run.text).toContain('href="/jobs/job-%3Cb%3E"');
    expect(run.text).toContain('job-&lt;b&gt;');
  });

  it('renders timelines recorded through the timelines API: -06 labeled historical, commitment witness shown', async () => {
    const put = (path: string, body: unknown) => t.http.put(path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await put('/api/jobs/job-old/timeline', vector('chain-historical-06'))).status).toBe(201);
    const old = await t.http.get('/jobs/job-old');
    expect(old.status).toBe(200);
    expect(old.text).toContain('historical');
    expect(old.text).toContain('Truncation is not excluded');

    expect((await put('/api/jobs/job-alpha/timeline', vector('chain-valid-4'))).status).toBe(201);
    const j = await t.http.get('/jobs/job-alpha').set('Accept', 'application/json');
    // Issue 15: the import (closed, valid) made the ledger issue its commitment (before: truncation_excluded false).
    expect(j.body).toMatchObject({ verdict: 'valid', construction: '-07', entry_count: 4, closed: true, truncation_excluded: true, binding_attestation: 'ledger_issued' });
    const c = await t.http
      .post('/api/jobs/job-alpha/commitments')
      .set('Authorization', `Bearer ${t.keys.producer}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ job_id: 'job-alpha', final_entry_digest: j.body.final_entry_digest, entry_count: 4, published_at: '2026-10-02T08:00:00Z', witness: 'witness.example', retrieved_at: '2026-10-02T08:05:00Z' }));
    expect(c.status).toBe(201);
    const page = await t.http.get('/jobs/job-alpha');
    expect(page.text).not.toContain('Truncation is not excluded');
    expect(page.text).toContain('witness.example');
  });

  it('answers 404 as HTML for browsers and as JSON for JSON clients', async () => {
    const coverage = ['/coverage/00000000-0000-4000-8000-000000000000', '/coverage/%3Cscript%3Ealert(1)%3C%2Fscript%3E'];
    for (const path of ['/run/00000000-0000-0000-0000-000000000000', '/run/not-a-uuid', '/workflow/00000000-0000-0000-0000-000000000000', '/jobs/nope', ...coverage]) {
      const h = await t.http.get(path).set('Accept', 'text/html');
      expect(h.status).toBe(404);
      expect(h.headers['content-type']).toMatch(/^text\/html/);
      expect(h.text).toContain('Not found');
      expect(h.text).not.toContain('<script>');
      const j = await t.http.get(path).set('Accept', 'application/json');
      expect(j.status).toBe(404);
      expect(j.body.error).toBe('not_found');
    }
  });

  it('serves an index page', async () => {
    const r = await t.http.get('/');
    expect(r.status).toBe(200);
    expect(r.text).toContain('href="/docs"');
  });
});

/** The page's headline: the verdict block's tone and its first line as text. */
function headline(page: string): { tone: string; text: string; lines: string[] } {
  const block = /<section class="verdict (ok|bad|warn|na)" id="verdict">([\s\S]*?)<\/section>/.exec(page);
  if (!block) throw new Error('no verdict block');
  const strip = (s: string) => s.replace(/<[^>]*>/g, '').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim();
  const lines = [...block[2].matchAll(/<div class="line [^"]*" id="[^"]*">([\s\S]*?)<\/div>/g)].map((m) => strip(m[1]));
  return { tone: block[1], text: lines[0], lines };
}

const example = (name: string) => readFileSync(join(__dirname, '../../examples', name), 'utf8');

describe.each(DIALECTS)('page headlines lead with the verdict on %s (issue 12)', (dialect) => {
  let t: TestApp;
  const put = (path: string, body: string) => t.http.put(path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(body);
  const post = (path: string, body: string) => t.http.post(path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(body);
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  it('a transport receipt with provider_unavailable leads with "Execution outcome: FAILED" beside the commitment result, never a green valid alone', async () => {
    expect((await post('/api/receipts', example('receipt-transport-provider-failure.json'))).status).toBe(201);
    const r = await t.http.get('/run/4e5e4a26-3286-5ef9-b758-8aefd9f610a5');
    const h = headline(r.text);
    // Issue 27: the failure leads (the largest line), the commitment's validity second.
    expect(h.lines[0]).toBe('✗ Execution outcome: FAILED (provider_unavailable)');
    expect(h.lines[1]).toBe('✓ Commitment: VALID: the stored bytes match the output commitment');
    expect(r.text).toContain('<div class="line bad" id="execution-outcome">');
    expect(r.text).toContain('<div class="line ok sub" id="verdict-line">');
    expect(h.lines[2]).toBe("⚠ Producer's verification_status: not_verified (as sent; this ledger does not change it)");
    expect(h.tone).toBe('bad');
    // The headline comes before everything else on the page.
    expect(r.text.indexOf('id="verdict"')).toBeLessThan(r.text.indexOf('id="provenance"'));
    expect((await t.http.get('/run/4e5e4a26-3286-5ef9-b758-8aefd9f610a5').set('Accept', 'application/json')).body.verification.verdict).toBe('valid');

    expect((await post('/api/receipts', example('receipt-transport.json'))).status).toBe(201);
    const ok = headline((await t.http.get('/run/c90ac30c-bf8d-5452-a36f-8b58a3a40241')).text);
    expect(ok.lines.slice(0, 2)).toEqual(['✓ Commitment: VALID: the stored bytes match the output commitment', '✓ Execution outcome: OK (status "ok", as the receipt states)']);
    // verification_status "execution_observed" is not "verified": the frame is not green.
    expect(ok.tone).toBe('warn');
  });

  it('passed checks are collapsed below the failures; LOGGED BY AGENT looks different from EXECUTED BY', async () => {
    const r = await t.http.get('/run/4e5e4a26-3286-5ef9-b758-8aefd9f610a5');
    expect(r.text).toMatch(/<details class="passed" id="passed-checks"><summary>\d+ check\(s\) passed \(show\)<\/summary>/);
    expect(r.text).toContain('<span class="prov prov-executed"><bdi>EXECUTED BY ZAMBO</bdi></span>');
    const logged = JSON.parse(example('receipt-core.json')) as Record<string, unknown>;
    expect((await post('/api/receipts', JSON.stringify({ ...logged, id: '0d5c2f1e-3b4a-4c8d-9e6f-7a8b9c0d1e2f', provenance_class: 'LOGGED BY AGENT' }))).status).toBe(201);
    const l = await t.http.get('/run/0d5c2f1e-3b4a-4c8d-9e6f-7a8b9c0d1e2f');
    expect(l.text).toContain('<span class="prov prov-logged"><bdi>LOGGED BY AGENT</bdi></span> <span class="muted">(self-reported)</span>');
    expect(l.text).toContain('class="box provenance logged"');
  });

  it('job pages: valid without commitment is amber, with a binding one green; truncation detected red; historical and invalid never green', async () => {
    const vec = (id: string) => JSON.stringify(corpus.vectors.find((v) => v.id === id)!.input);
    expect((await put('/api/jobs/job-alpha/timeline', vec('chain-valid-4'))).status).toBe(201);
    // Issue 15: the import (closed, valid) made the ledger issue its commitment: green from the start (was amber).
    let h = headline((await t.http.get('/jobs/job-alpha')).text);
    expect(h).toMatchObject({ tone: 'ok', text: '✓ Chain valid — truncation excluded by a binding ledger-issued endpoint commitment' });
    const j = await t.http.get('/jobs/job-alpha').set('Accept', 'application/json');
    const c = await post('/api/jobs/job-alpha/commitments', JSON.stringify({ job_id: 'job-alpha', final_entry_digest: j.body.final_entry_digest, entry_count: 4, published_at: '2026-10-02T08:00:00Z', witness: 'witness.example', retrieved_at: '2026-10-02T08:05:00Z' }));
    expect(c.status).toBe(201);
    const alpha = (await t.http.get('/jobs/job-alpha')).text;
    h = headline(alpha);
    expect(h).toMatchObject({ tone: 'ok', text: '✓ Chain valid — truncation excluded by a binding ledger-issued endpoint commitment' });
    // The witness hostname is one unbroken token.
    expect(alpha).toContain('<code class="id"><bdi>witness.example</bdi></code>');

    // The six-entry rebuilt truncation, then the eight-entry commitment (not binding).
    expect((await put('/api/jobs/job-eight/timeline', example('timeline-truncated-six.json'))).status).toBe(201);
    expect((await post('/api/jobs/job-eight/commitments', example('commitment-eight.json'))).body.binding).toBe(false);
    const eight = (await t.http.get('/jobs/job-eight')).text;
    h = headline(eight);
    // Issue 27: the red headline opens with the contradiction, not with "valid".
    expect(h).toMatchObject({ tone: 'bad', text: '✗ TRUNCATION DETECTED: a recorded endpoint commitment contradicts this timeline (the chain itself is valid)' });
    expect((await t.http.get('/jobs/job-eight').set('Accept', 'application/json')).body).toMatchObject({ verdict: 'valid', commitment_status: 'truncation_detected' });
    // Its entries' receipts are not recorded here: no link to "Not found".
    expect(eight).not.toMatch(/href="\/run\//);
    expect(eight.match(/receipt not recorded in this ledger/g)).toHaveLength(6);

    expect((await put('/api/jobs/job-old/timeline', vec('chain-historical-06'))).status).toBe(201);
    h = headline((await t.http.get('/jobs/job-old')).text);
    expect(h.tone).toBe('warn');
    expect(h.text).toBe('⚠ Historical (-06) timeline: never reported valid (S7.4)');

    const db = t.app.get(DatabaseService);
    const bad = corpus.vectors.find((v) => v.id === 'chain-seq-gap')!.input as Record<string, unknown>[];
    await db.write(async (tx) => {
      for (const [k, e] of bad.entries()) {
        await tx.query('INSERT INTO timeline_entries (job_id, seq, raw, entry_digest, receipt_id, tool, provenance_class, close, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
          'job-gap', k + 1, JSON.stringify(e), null, e.id, e.tool, e.provenance_class, e.close ? 1 : 0, 5000 + k,
        ]);
      }
    });
    // A chain that does not verify cannot be recorded; rows written behind the service are refused, in red.
    const gap = await t.http.get('/jobs/job-gap');
    expect(gap.status).toBe(409);
    h = headline(gap.text);
    expect(h.tone).toBe('bad');
    expect(h.text).toBe('✗ This record does not match the ledger: it is not shown, and nothing about it is verified here.');
  });

  it('a failed call (status present and not ok) is marked on the job page and counted in the headline and the verify answer; the chain stays valid', async () => {
    // Five entries: ok, error, a status with markup, none, and a non-string status on the closing entry.
    const timeline = (job: string, statuses: unknown[]): string => {
      const entries: Record<string, unknown>[] = [];
      let prev = ZERO_DIGEST;
      for (const [k, status] of statuses.entries()) {
        const e = makeEntry(job, k + 1, prev, { close: k === statuses.length - 1 });
        if (status !== undefined) e.status = status;
        entries.push(e);
        prev = entryDigest(e)!;
      }
      return JSON.stringify(entries);
    };
    expect((await put('/api/jobs/job-failing/timeline', timeline('job-failing', ['ok', 'error', '<b>boom</b>', undefined, 500]))).status).toBe(201);
    expect((await put('/api/jobs/job-succeeding/timeline', timeline('job-succeeding', ['ok', undefined, 'ok']))).status).toBe(201);
    const page = (await t.http.get('/jobs/job-failing')).text;
    const h = headline(page);
    // The failures lead, red; the chain's own (true) verdict follows them.
    expect(h.tone).toBe('bad');
    expect(h.lines).toEqual([
      '✗ 3 of 5 calls failed (recorded status not ok): a valid chain proves only that the record is intact',
      '✓ Chain valid — truncation excluded by a binding ledger-issued endpoint commitment',
    ]);
    const row = (seq: number) => new RegExp(`<tr id="entry-${seq}"[^>]*>[\\s\\S]*?</tr>`).exec(page)![0];
    expect(row(1)).not.toContain('call failed');
    expect(row(1)).not.toContain('failed-call');
    expect(row(2)).toContain('class="failed-call"');
    expect(row(2)).toContain('<span class="badge bad call-failed">call failed: <bdi>error</bdi></span>');
    expect(row(3)).toContain('<span class="badge bad call-failed">call failed: <bdi>&lt;b&gt;boom&lt;/b&gt;</bdi></span>');
    expect(page).not.toContain('<b>boom</b>');
    expect(row(4)).not.toContain('call failed');
    expect(row(5)).toContain('<span class="badge bad call-failed">call failed: <bdi>500</bdi></span>');
    expect(page).toContain('<tr><th>Entries</th><td>5 <span class="bad">(3 failed calls)</span></td></tr>');

    const v = await t.http.get('/api/jobs/job-failing/verify');
    expect(v.body).toMatchObject({ verdict: 'valid', entry_count: 5, failed_calls: 3 });
    // The headline says so too (a new user read "CLEAN" on a job with a failed call): never the chain's word alone.
    expect(v.body.headline).toMatch(/; 3 of 5 recorded calls failed$/);
    const ok = (await t.http.get('/api/jobs/job-succeeding/verify')).body;
    expect(ok).toMatchObject({ verdict: 'valid', entry_count: 3, failed_calls: 0 });
    expect(ok.headline).not.toContain('failed');
    const fine = (await t.http.get('/jobs/job-succeeding')).text;
    expect(fine).not.toContain('call failed');
    expect(fine).not.toContain('class="failed-call"');
    expect(headline(fine).lines).toEqual(['✓ Chain valid — truncation excluded by a binding ledger-issued endpoint commitment']);
  });

  it('a workflow whose step receipts are not recorded leads with INCOMPLETE once, and links none of them', async () => {
    const w = await post('/api/workflows', example('workflow-draft-example.json'));
    expect(w.status).toBe(201);
    const page = (await t.http.get(`/workflow/${w.body.workflow_id}`)).text;
    const h = headline(page);
    expect(h).toMatchObject({ tone: 'warn', text: '⚠ Workflow INCOMPLETE: 5 step receipt(s) not recorded' });
    expect(page).not.toMatch(/href="\/run\//);
    expect(page.match(/receipt not recorded in this ledger/g)).toHaveLength(5);
    // No duplicated pill ("Verdict: incomplete incomplete").
    expect(page).not.toMatch(/incomplete<\/bdi><\/span> <span class="badge[^"]*"><bdi>incomplete/);
  });
});

