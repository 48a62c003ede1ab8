/**
 * Regression tests for the faults the reliability suite found in service
 * code (see README.md here). Each test names what used to happen.
 */
import { randomUUID } from 'node:crypto';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { call, freshReceipt, listen, makeEntry, waitUntil } from './helpers';

/** CJK text: three UTF-8 bytes a character, incompressible; 1200 characters are over PostgreSQL's 2704-byte index entry limit. */
function longCjk(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(0x4e00 + ((i * 7919 + 13) % 0x51ff));
  return s;
}

/** `depth` nested arrays around a 1. */
const nested = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

describe.each(DIALECTS)('regressions on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let base: string;
  const head = async () => (await call(base, 'GET', '/api/ledger/head')).body;
  const post = (path: string, body: string, key = t.keys.producer, contentType = 'application/json') => call(base, 'POST', path, { key, body, contentType });

  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses JSON nested deeper than 128 levels with 400 too_deep, recording nothing (was: a commitment recorded, then answered 500)', async () => {
    const job = 'job-deep';
    expect((await post(`/api/jobs/${job}/entries`, JSON.stringify(makeEntry(job, 1, ZERO_DIGEST)))).status).toBe(201);
    const before = await head();
    const commitment = JSON.stringify({ job_id: job, final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z', note: '__DEEP__' });
    const deep = await post(`/api/jobs/${job}/commitments`, commitment.replace('"__DEEP__"', nested(40_000)));
    expect(deep.status).toBe(400);
    expect(deep.body.error).toBe('too_deep');
    expect(await head()).toEqual(before);
    // The limit is exact: a receipt with an extra member reaching depth 128 is fine, 129 is not.
    const r = freshReceipt();
    const at = (depth: number): string => r.text.replace(/}$/, `,"extra":${nested(depth - 1)}}`);
    const over = await post('/api/receipts', at(129));
    expect([over.status, over.body.error]).toEqual([400, 'too_deep']);
    expect((await post('/api/receipts', at(128))).status).toBe(201);
    // In NDJSON the line is refused, the others are recorded.
    const a = freshReceipt();
    const b = freshReceipt();
    const batch = await post('/api/receipts/batch', [a.text, b.text.replace(/}$/, `,"extra":${nested(500)}}`)].join('\n'), t.keys.producer, 'application/x-ndjson');
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((x: { status: number; error?: string }) => [x.status, x.error ?? null])).toEqual([
      [201, null],
      [400, 'too_deep'],
    ]);
  });

  it('completes a verification batch naming jobs (was: on PostgreSQL the seq bound was out of INTEGER range and the batch never completed)', async () => {
    const job = 'job-batch';
    const e1 = makeEntry(job, 1, ZERO_DIGEST);
    expect((await post(`/api/jobs/${job}/entries`, JSON.stringify([e1, makeEntry(job, 2, entryDigest(e1)!, { close: true })]))).status).toBe(201);
    const r = freshReceipt();
    expect((await post('/api/receipts', r.text)).status).toBe(201);
    const submitted = await post('/api/verification-batches', JSON.stringify({ targets: [{ kind: 'job', id: job }, { kind: 'job', id: 'job-unknown' }, { kind: 'receipt', id: r.id }] }), t.keys.auditor);
    expect(submitted.status).toBe(202);
    const id = submitted.body.batch_id as string;
    await waitUntil('the batch to complete', 20_000, async () => (await call(base, 'GET', `/api/verification-batches/${id}`)).body.status === 'completed');
    const s = (await call(base, 'GET', `/api/verification-batches/${id}`)).body;
    expect(s).toMatchObject({ total: 3, done: 3, invalid: 1 });
    expect(s.results.map((x: { kind: string; id: string; verdict: string; reasons: string[] }) => [x.kind, x.id, x.verdict, x.reasons])).toEqual([
      ['job', job, 'valid', []], // issue 15: the close issued the ledger's commitment (was: truncation_not_excluded)
      ['job', 'job-unknown', 'invalid', ['not_found']],
      ['receipt', r.id, 'valid', []],
    ]);
  });

  it('refuses a verification target id containing U+0000 (was: accepted, and on PostgreSQL the batch never completed)', async () => {
    const before = await head();
    const r = await post('/api/verification-batches', JSON.stringify({ targets: [{ kind: 'job', id: 'job\u0000x' }] }), t.keys.auditor);
    expect([r.status, r.body.error]).toEqual([400, 'invalid_targets']);
    expect(await head()).toEqual(before);
  });

  it('U+0000 in an identifier or recorded field: 400 unsupported_character on both dialects (was: 500 on PostgreSQL, recorded on SQLite)', async () => {
    const job = 'job\u0000nul';
    const before = await head();
    const base_ = JSON.parse(freshReceipt().text) as { tool: Record<string, unknown> };
    const receipt = JSON.stringify({ ...base_, tool: { ...base_.tool, name: 'live\u0000price' } });
    const attempts = [
      await post(`/api/jobs/${encodeURIComponent(job)}/entries`, JSON.stringify(makeEntry(job, 1, ZERO_DIGEST))),
      await post('/api/jobs/job-nul-tool/entries', JSON.stringify({ ...makeEntry('job-nul-tool', 1, ZERO_DIGEST), tool: 'to\u0000ol' })),
      await post('/api/receipts', receipt),
      await post('/api/plans', JSON.stringify({ job_id: `job-plan-${randomUUID()}`, title: 'ti\u0000tle', expected_actions: [{ action_id: 'a', tool: 'x' }] }), t.keys.compliance),
    ];
    // An NDJSON batch with such a line (was on PostgreSQL: the line's event was written, then a 500 from a reused position).
    const lines = [freshReceipt().text, JSON.stringify({ ...base_, id: randomUUID(), tool: { ...base_.tool, name: 'live\u0000price' } }), freshReceipt().text];
    const batch = await post('/api/receipts/batch', lines.join('\n'), t.keys.producer, 'application/x-ndjson');
    const verify = await call(base, 'GET', `/api/jobs/${encodeURIComponent(job)}/verify`);
    // Both dialects alike since issue 11 section 5 (SQLite used to record all of these, and found the job).
    for (const r of [...attempts, batch]) expect([r.status, r.body.error]).toEqual([400, 'unsupported_character']);
    expect([verify.status, verify.body.error]).toEqual([400, 'unsupported_character']);
    expect(await head()).toEqual(before);
    expect((await call(base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
    const { DatabaseService } = await import('../../src/database/database.service');
    const n = async (sql: string): Promise<number> => Number((await t.app.get(DatabaseService).query<{ n: number | string }>(sql))[0].n);
    expect(await n("SELECT COUNT(*) AS n FROM events WHERE type = 'ReceiptRecorded'")).toBe(await n('SELECT COUNT(*) AS n FROM receipts'));
  });

  it('an identifier too long to index: 400 value_too_large on both dialects (was: 500 on PostgreSQL, recorded on SQLite)', async () => {
    const before = await head();
    const job = `job-${longCjk(1200)}`;
    const longJob = await post(`/api/jobs/${encodeURIComponent(job)}/entries`, JSON.stringify(makeEntry(job, 1, ZERO_DIGEST)));
    const longEntryId = await post('/api/jobs/job-long-entry-id/entries', JSON.stringify({ ...makeEntry('job-long-entry-id', 1, ZERO_DIGEST), id: longCjk(1200) }));
    // Both dialects alike: the one identifier limit (200 code points) is under PostgreSQL's index entry limit.
    for (const r of [longJob, longEntryId]) expect([r.status, r.body.error]).toEqual([400, 'value_too_large']);
    expect(await head()).toEqual(before);
    expect((await call(base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
  });
});
