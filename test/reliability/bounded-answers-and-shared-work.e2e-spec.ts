/**
 * Integrity issue, second attack (see README.md here, "Integrity issue
 * (second attack)"): what one cheap request could make the ledger do. Each
 * test names what used to happen. Both databases.
 */
import { randomUUID } from 'node:crypto';
import { entryDigest, sha256Hex, ZERO_DIGEST } from '../../src/core/aer1';
import { MAX_COMMITMENT_BYTES, MAX_COMMITMENTS_PER_JOB } from '../../src/timelines/commitments.service';
import { TimelineVerificationService } from '../../src/timelines/timeline-verification.service';
import { TIMELINE_PAGE_BYTES } from '../../src/timelines/timelines.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

/** A valid -07 chain of `n` entries whose canonical bytes are `size` bytes each. */
function chain(job: string, n: number, size: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= n; seq++) {
    const bytes = Buffer.alloc(size, 0x61 + (seq % 26));
    const e: Record<string, unknown> = { seq, job_id: job, id: randomUUID(), tool: 'fetch_page', provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes.toString('base64'), prev_digest: prev };
    if (seq === n) e.close = true;
    out.push(e);
    prev = entryDigest(e)!;
  }
  return out;
}

describe.each(DIALECTS)('second attack: request costs on %s', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => t?.close());
  const post = (path: string, body: unknown, key = t.keys.producer) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const head = async (): Promise<unknown> => (await t.http.get('/api/ledger/head')).body;

  it('caps a commitment at MAX_COMMITMENT_BYTES and a job at MAX_COMMITMENTS_PER_JOB (was: 30 commitments of 1 MB made one cost-1 read answer 30 MB)', async () => {
    const job = `job-caps-${randomUUID()}`;
    const entries = chain(job, 3, 16);
    expect((await post(`/api/jobs/${job}/entries`, entries)).status).toBe(201);
    const base = { job_id: job, final_entry_digest: entryDigest(entries[2]), entry_count: 3, published_at: '2026-10-01T12:00:00Z' };
    const before = await head();
    const big = await post(`/api/jobs/${job}/commitments`, { ...base, note: 'A'.repeat(MAX_COMMITMENT_BYTES) });
    expect([big.status, big.body.error]).toEqual([422, 'commitment_too_large']);
    expect(await head()).toEqual(before);
    for (let i = 0; i < MAX_COMMITMENTS_PER_JOB; i++) expect((await post(`/api/jobs/${job}/commitments`, { ...base, note: `n${i}` })).status).toBe(201);
    const more = await post(`/api/jobs/${job}/commitments`, { ...base, note: 'one more' });
    expect([more.status, more.body.error]).toEqual([409, 'too_many_commitments']);
    const again = await post(`/api/jobs/${job}/commitments`, { ...base, note: 'n0' });
    expect(again.status).toBe(200); // the same text again is answered with the existing record, not refused
    const v = await t.http.get(`/api/jobs/${job}/verify`);
    // Issue 15: the ledger-issued commitment of the close comes on top of the posted ones.
    expect([v.status, v.body.assessment, v.body.commitments.length]).toEqual([200, 'clean', MAX_COMMITMENTS_PER_JOB + 1]);
  });

  it('ends a timeline page after TIMELINE_PAGE_BYTES of entry text (was: 30 entries of 700 KB in one cost-1 answer of 28 MB)', async () => {
    const job = `job-bytes-${randomUUID()}`;
    const size = 600 * 1024; // base64: 800 KiB a line
    const entries = chain(job, 7, size);
    for (const e of entries) expect((await post(`/api/jobs/${job}/entries`, e)).status).toBe(201);
    const perEntry = JSON.stringify(entries[0]).length;
    const fit = Math.ceil(TIMELINE_PAGE_BYTES / perEntry);
    const page = await t.http.get(`/api/jobs/${job}/timeline`);
    expect(page.status).toBe(200);
    expect(page.body.entries.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: fit }, (_, k) => k + 1));
    expect(page.body.next_after).toBe(fit);
    const rest = await t.http.get(`/api/jobs/${job}/timeline?after=${fit}`);
    expect(rest.body.entries.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 7 - fit }, (_, k) => fit + k + 1));
    expect(rest.body.next_after).toBeNull();
    expect(sha256Hex(Buffer.from(page.body.entries[0].canonical_bytes, 'base64'))).toBe(sha256Hex(Buffer.alloc(size, 0x62)));
  });

  it('verifies an open chain once per state, outside the write lock, for every commitment posted (was: 0.85 s under the lock per POST at 36,000 entries)', async () => {
    const job = `job-open-${randomUUID()}`;
    const entries = chain(job, 4, 16);
    delete entries[3].close;
    expect((await post(`/api/jobs/${job}/entries`, entries.slice(0, 3))).status).toBe(201);
    const svc = t.app.get(TimelineVerificationService);
    const base = { job_id: job, final_entry_digest: entryDigest(entries[2]), entry_count: 3, published_at: '2026-10-01T12:00:00Z' };
    const size0 = svc.closedChains.size;
    expect((await post(`/api/jobs/${job}/commitments`, { ...base, note: 'a' })).status).toBe(201);
    expect(svc.closedChains.size).toBe(size0 + 1);
    expect((await post(`/api/jobs/${job}/commitments`, { ...base, note: 'b' })).status).toBe(201);
    expect(svc.closedChains.size).toBe(size0 + 1); // the same state: not verified again
    expect((await post(`/api/jobs/${job}/entries`, entries[3])).status).toBe(201);
    const c = await post(`/api/jobs/${job}/commitments`, { ...base, note: 'c' });
    expect(c.status).toBe(201);
    expect(svc.closedChains.size).toBe(size0 + 2); // a new state after the append
    // Judged against the chain as it stands after the append: a 3-entry commitment on 4 entries is an earlier checkpoint.
    expect(c.body).toMatchObject({ binding: false, truncation_excluded: false, commitment_assessment: 'non_binding' });
  });
});

describe.each(DIALECTS)('second attack: workflow reads on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => t?.close());

  it('verifies a workflow once per set of recorded step receipts (was: every read re-read and re-verified 150 step receipts of 750 KB)', async () => {
    const { WorkflowsService } = await import('../../src/workflows/workflows.service');
    const svc = t.app.get(WorkflowsService) as unknown as { verified: { size: number } };
    const receipt = (n: number): { id: string; text: string } => {
      const bytes = Buffer.from(JSON.stringify({ n, at: randomUUID() }));
      const id = randomUUID();
      return { id, text: JSON.stringify({ id, receipt_schema_version: '0.3', created_at: '2026-10-01T12:00:00Z', tool: { name: 'lookup', version: '1', scope: 'read' }, provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes.toString('base64'), output_hash: `sha256:${sha256Hex(bytes)}`, verification_status: 'verified' }) };
    };
    const steps = [receipt(1), receipt(2)];
    for (const s of steps) expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(s.text)).status).toBe(201);
    const a = await t.http
      .post('/api/workflows/assemble')
      .set('Authorization', `Bearer ${t.keys.producer}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ session_id: 's', goal: 'g', status: 'completed', receipt_ids: steps.map((s) => s.id), output: 'o' }));
    expect(a.status).toBe(201);
    const size0 = svc.verified.size;
    const first = await t.http.get(`/api/workflows/${a.body.workflow_id}/verify`);
    expect([first.status, first.body.verdict]).toEqual([200, 'valid']);
    expect(svc.verified.size).toBe(size0 + 1);
    const page = await t.http.get(`/workflow/${a.body.workflow_id}`).set('Accept', 'application/json');
    expect(page.body.verification.verdict).toBe('valid');
    const again = await t.http.get(`/api/workflows/${a.body.workflow_id}/verify`);
    expect(again.body).toEqual(first.body);
    expect(svc.verified.size).toBe(size0 + 1);
  });
});

describe.each(DIALECTS)('second attack: the ledger check on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(dialect);
  });
  afterAll(async () => t?.close());

  it('shares one scan of the ledger among requests that arrive while it runs (was: each of 6 clients scanned 418 MB, stalling every other read)', async () => {
    const { LedgerService } = await import('../../src/ledger/ledger.service');
    const ledger = t.app.get(LedgerService);
    const realReadAll = ledger.readAll.bind(ledger);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The first scan waits at the gate, so the other requests arrive while it runs.
    const scans = jest.spyOn(ledger, 'readAll').mockImplementation(async function* (o) {
      await gate;
      yield* realReadAll(o);
    });
    // Every request's handler asks for the chain check (passed through); the gate opens once all four have asked.
    const asked = jest.spyOn(ledger, 'verifyChain');
    const pending = Promise.all([1, 2, 3, 4].map(() => t.http.get('/api/ledger/verify').then((r) => r)));
    for (let i = 0; i < 500 && asked.mock.calls.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    expect(asked).toHaveBeenCalledTimes(4);
    release();
    const answers = await pending;
    expect(answers.map((a) => [a.status, a.body.verdict])).toEqual([1, 2, 3, 4].map(() => [200, 'valid']));
    expect(scans).toHaveBeenCalledTimes(1);
    await t.http.get('/api/ledger/verify');
    expect(scans).toHaveBeenCalledTimes(2); // a later request scans again: an edited row is caught by the next check
    scans.mockRestore();
    asked.mockRestore();
  });
});
