/**
 * Honest answers (issue 12): what the server serves is read as is by the
 * offline `aer1` CLI, on SQLite and PostgreSQL. Each export is fetched from
 * the real server and handed to `run` (src/cli/main.ts) in process: as
 * served it verifies (exit 0); one byte changed, it does not (exit 1).
 * Withheld canonical bytes (a `metadata` publication) are exported to
 * auditor and admin keys only (403 `canonical_bytes_withheld`).
 */
import type { Test } from 'supertest';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { buildTimeline, commitmentFor, eightStepPlan, EIGHT_STEPS } from '../coverage/fixtures';
import { cli, TmpDir } from '../cli/helpers';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';

/** The body as raw text, whatever its media type. */
const raw = (req: Test): Test =>
  req.buffer(true).parse((res, cb) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => cb(null, text));
  });

/** `text` with the character at `at` replaced by a different one of the same class (base64 / hex stay well-formed). */
function flip(text: string, at: number): string {
  const c = text[at];
  const to = c === 'A' ? 'B' : c === 'a' ? 'b' : c === '0' ? '1' : /[0-9]/.test(c) ? '0' : /[a-z]/.test(c) ? 'a' : 'A';
  return text.slice(0, at) + to + text.slice(at + 1);
}

describe.each(DIALECTS)('exports read by the aer1 CLI on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let tmp: TmpDir;
  beforeAll(async () => {
    t = await startApp(dialect);
    tmp = new TmpDir();
  });
  afterAll(async () => {
    tmp.cleanup();
    await t.close();
  });
  const post = (path: string, body: string, key: string, type = 'application/json') => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', type).send(body);

  it('GET /api/receipts/{id}/raw answers the stored bytes exactly; aer1 verify accepts them, and refuses one byte changed', async () => {
    const text = JSON.stringify(vector('transport-provider-failure'), null, 2);
    expect((await post('/api/receipts', text, t.keys.producer)).status).toBe(201);
    const r = await raw(t.http.get('/api/receipts/4e5e4a26-3286-5ef9-b758-8aefd9f610a5/raw'));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.body).toBe(text);
    const ok = await cli(['verify', tmp.write('receipt.json', r.body as string)]);
    expect([ok.code, ok.err]).toEqual([0, '']);
    const at = (r.body as string).indexOf('"output_hash": "sha256:') + '"output_hash": "sha256:'.length + 5;
    const bad = await cli(['verify', '--json', tmp.write('receipt-tampered.json', flip(r.body as string, at))]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ verdict: 'invalid', reasons: ['output_hash_mismatch'] });
    expect((await t.http.get('/api/receipts/00000000-0000-4000-8000-000000000000/raw')).body.error).toBe('not_found');
  });

  it('GET /api/jobs/{id}/export answers the entries as recorded, NDJSON: aer1 verify --kind chain and aer1 coverage read it as is', async () => {
    const job = 'job-export';
    const entries = buildTimeline(job, EIGHT_STEPS);
    // Sent pretty-printed: an entry recorded over several lines is still exported on one.
    expect((await post(`/api/jobs/${job}/entries`, JSON.stringify(entries, null, 2), t.keys.producer)).status).toBe(201);
    const commitment = commitmentFor(entries);
    expect((await post(`/api/jobs/${job}/commitments`, JSON.stringify(commitment), t.keys.producer)).status).toBe(201);

    const r = await raw(t.http.get(`/api/jobs/${job}/export`));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = (r.body as string).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(8);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(entries);

    const file = tmp.write('timeline.ndjson', r.body as string);
    const cFile = tmp.write('commitment.json', commitment);
    const ok = await cli(['verify', '--kind', 'chain', '--commitment', cFile, '--json', file]);
    expect([ok.code, ok.err]).toEqual([0, '']);
    expect(JSON.parse(ok.out)).toMatchObject({ verdict: 'valid', assessment: 'clean' });
    // Without a commitment the chain itself verifies (the assessment says truncation is not excluded).
    expect(JSON.parse((await cli(['verify', '--kind', 'chain', '--json', file])).out)).toMatchObject({ verdict: 'valid' });

    const tampered = lines.map((l, i) => (i === 3 ? flip(l, l.indexOf('"canonical_bytes":"') + '"canonical_bytes":"'.length + 2) : l)).join('\n') + '\n';
    expect(tampered).not.toBe(r.body);
    const bad = await cli(['verify', '--kind', 'chain', '--commitment', cFile, '--json', tmp.write('timeline-tampered.ndjson', tampered)]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).verdict).toBe('invalid');

    // aer1 coverage reads the same export as its --timeline.
    const plan = tmp.write('plan.json', eightStepPlan(job));
    const cov = await cli(['coverage', '--plan', plan, '--timeline', file, '--commitment', cFile, '--json']);
    expect(cov.err).toBe('');
    expect(JSON.parse(cov.out).report.integrity).toMatchObject({ verdict: 'valid', entry_count: 8 });

    expect((await t.http.get('/api/jobs/job-none/export')).body.error).toBe('not_found');

    // The wrapped JSON answers are not AER-1 documents: aer1 verify says which export to use (exit 2), never a verdict.
    const wrapped: [string, string][] = [
      [`/api/jobs/${job}/timeline`, `/api/jobs/{id}/export`],
      [`/api/jobs/${job}/verify`, `/api/jobs/{id}/export`],
      ['/api/receipts/4e5e4a26-3286-5ef9-b758-8aefd9f610a5', '/api/receipts/{id}/raw'],
    ];
    for (const [path, hint] of wrapped) {
      const served = await raw(t.http.get(path));
      const run = await cli(['verify', tmp.write('wrapped.json', served.body as string)]);
      expect([path, run.code, run.out]).toEqual([path, 2, '']);
      expect(run.err).toContain(hint);
    }
  });

  it('aer1 coverage --check-report recomputes a served coverage report\'s digest: 0 as served, 1 with one byte changed', async () => {
    const job = 'job-export-report';
    const entries = buildTimeline(job, EIGHT_STEPS);
    expect((await post(`/api/jobs/${job}/entries`, JSON.stringify(entries), t.keys.producer)).status).toBe(201);
    expect((await post('/api/plans', JSON.stringify(eightStepPlan(job)), t.keys.compliance)).status).toBe(201);
    const issued = await post('/api/coverage-reports', JSON.stringify({ job_id: job }), t.keys.auditor);
    expect(issued.status).toBe(201);
    const served = await raw(t.http.get(`/api/coverage-reports/${issued.body.report_id}`).set('Accept', 'application/json'));
    expect(served.status).toBe(200);
    const doc = JSON.parse(served.body as string) as { digest: string; report: { coverage: { ratio: string } } };
    expect(doc.digest).toBe(issued.body.digest);

    const ok = await cli(['coverage', '--check-report', tmp.write('report.json', served.body as string)]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('digest MATCHES');
    expect(ok.out).toContain(`declared: ${doc.digest}`);
    expect(ok.out).toContain(`computed: ${doc.digest}`);

    const text = served.body as string;
    const at = text.indexOf('"ratio":"') + '"ratio":"'.length;
    const bad = await cli(['coverage', '--json', '--check-report', tmp.write('report-tampered.json', flip(text, at))]);
    expect([bad.code, bad.err]).toEqual([1, '']);
    const answer = JSON.parse(bad.out) as { matches: boolean; declared: string; computed: string };
    expect(answer).toMatchObject({ matches: false, declared: doc.digest });
    expect(answer.computed).toMatch(/^[0-9a-f]{64}$/);
    expect(answer.computed).not.toBe(doc.digest);

    const asDocument = await cli(['verify', tmp.path('report.json')]);
    expect([asDocument.code, asDocument.out]).toEqual([2, '']);
    expect(asDocument.err).toContain('aer1 coverage --check-report');

    // Not a report: a usage error, and nothing else may be given with it.
    expect((await cli(['coverage', '--check-report', tmp.write('not-report.json', { digest: 'x' })])).code).toBe(2);
    expect((await cli(['coverage', '--check-report', tmp.path('report.json'), '--plan', tmp.path('report.json')])).code).toBe(2);
  });

  it('exports withheld canonical bytes (metadata publication) to auditor and admin keys only: 403 canonical_bytes_withheld', async () => {
    const k = await t.app.get(ApiKeysService).create('private-exporter', 'producer', { publication: 'metadata' });
    const receipt = vector('receipt-core-logged') as { id: string };
    expect((await post('/api/receipts', JSON.stringify(receipt), k.key)).status).toBe(201);
    const job = 'job-export-private';
    expect((await post(`/api/jobs/${job}/entries`, JSON.stringify(buildTimeline(job, EIGHT_STEPS.slice(0, 3))), k.key)).status).toBe(201);

    for (const path of [`/api/receipts/${receipt.id}/raw`, `/api/jobs/${job}/export`]) {
      const anonymous = await t.http.get(path);
      expect([path, anonymous.status, anonymous.body.error]).toEqual([path, 403, 'canonical_bytes_withheld']);
      const producer = await t.http.get(path).set('Authorization', `Bearer ${t.keys.producer}`);
      expect([path, producer.status, producer.body.error]).toEqual([path, 403, 'canonical_bytes_withheld']);
      for (const role of ['auditor', 'admin'] as const) {
        const allowed = await raw(t.http.get(path).set('Authorization', `Bearer ${t.keys[role]}`));
        expect([path, role, allowed.status]).toEqual([path, role, 200]);
        expect(allowed.body as string).toContain('canonical_bytes');
      }
    }
    const auditorCopy = await raw(t.http.get(`/api/jobs/${job}/export`).set('Authorization', `Bearer ${t.keys.auditor}`));
    const v = await cli(['verify', '--kind', 'chain', '--json', tmp.write('private.ndjson', auditorCopy.body as string)]);
    expect(JSON.parse(v.out)).toMatchObject({ verdict: 'valid' });
  });
});
