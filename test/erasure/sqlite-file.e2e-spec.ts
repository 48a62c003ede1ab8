/**
 * Erased means gone from the SQLite file (issue 29): with `secure_delete` on
 * and `PRAGMA wal_checkpoint(TRUNCATE)` after an erasure, the database file
 * and its `-wal` file, read from disk, hold no byte sequence of the erased
 * content (the customer string (inside the tool outputs, so only as base64 on disk), its base64 at every alignment, the canonical
 * bytes, the output hashes) while the app is still running and after it
 * closed. Before the erasure the same bytes are there, so the scan can fail.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { DatabaseService } from '../../src/database/database.service';
import { startApp, TestApp } from '../helpers/app';
import { base64Cores, forbiddenStrings, leaksIn, PersonalJob, personOf, post, recordPersonalJob } from './fixtures';

/** The database file and its WAL as they are on disk now (latin1, so every byte sequence is searchable as text). */
function onDisk(file: string): string {
  return [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString('latin1')).join('\n');
}

describe('erased content is gone from the SQLite file and its WAL', () => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-erase-file-'));
  const file = join(dir, 'ledger.sqlite');
  let t: TestApp | null = null;
  let jobs: PersonalJob[] = [];

  beforeAll(async () => {
    t = await startApp('sqlite', { DATABASE_URL: `sqlite:${file}` });
    const payments = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
    jobs = [await recordPersonalJob(t, 'file-job-one', payments), await recordPersonalJob(t, 'file-job-two', payments)];
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the content before, and none of it after the erasure, running and closed', async () => {
    const app = t!;
    // Before: every forbidden sequence of the customer string and its bytes is on disk (db or WAL).
    const before = onDisk(file);
    expect(leaksIn(before, [jobs[0].entries[0].canonical_bytes, jobs[0].outcome.canonical_bytes, jobs[0].outcome.output_hash]).length).toBe(3);
    expect(leaksIn(before, base64Cores(personOf(jobs[0].job))).length).toBeGreaterThanOrEqual(1);
    // The pages: secure_delete is on.
    const rows = await app.app.get(DatabaseService).unsafeQuery('PRAGMA secure_delete');
    expect(Number((rows as { secure_delete: number }[])[0].secure_delete)).toBe(1);
    const one = await post(app, '/api/erasures', { job_ids: [jobs[0].job], reason: 'customer request 1', legal_basis: 'GDPR Art. 17(1)(a)' }, app.keys.privacy);
    expect(one.status).toBe(201);
    const two = await post(app, '/api/erasures', { receipt_ids: jobs[1].entries.map((e) => e.id), reason: 'customer request 2', legal_basis: 'GDPR Art. 17(1)(a)' }, app.keys.privacy);
    expect(two.status).toBe(201);
    // Job one is erased whole: nothing of it on disk while the app runs.
    expect(leaksIn(onDisk(file), forbiddenStrings([jobs[0]]))).toEqual([]);
    // Job two: only its receipts are erased, its entries (same bytes) and outcome are held, so the bytes stay (the control).
    expect(leaksIn(onDisk(file), [jobs[1].entries[0].canonical_bytes]).length).toBe(1);
    await app.close();
    t = null;
    expect(leaksIn(onDisk(file), forbiddenStrings([jobs[0]]))).toEqual([]);
  });
});
