import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { startApp, TestApp } from '../helpers/app';
import { cli } from './helpers';

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: unknown }[] };

describe('aer1 ledger verify --database', () => {
  let t: TestApp;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-cli-ledger-'));
    file = join(dir, 'ledger.sqlite');
    t = await startApp('sqlite', { DATABASE_URL: `sqlite:${file}` });
    for (const id of ['receipt-core-valid', 'receipt-core-logged', 'transport-valid']) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).send(JSON.stringify(corpus.vectors.find((v) => v.id === id)!.input));
      expect(r.status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies an untouched SQLite ledger and a PostgreSQL URL that cannot be reached fails with exit 2', async () => {
    const ok = await cli(['ledger', 'verify', '--database', file, '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ ok: true, checked: 3, first_failure: null });
    const bad = await cli(['ledger', 'verify', '--database', 'postgres://nobody@127.0.0.1:1/none']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^aer1: cannot read the ledger/);
    expect(bad.err).not.toMatch(/\n\s+at /);
  });

  it('names the position of a row edited directly in the database', async () => {
    const db = t.app.get(DatabaseService);
    await db.unsafeQuery('DROP TRIGGER events_no_update');
    await db.unsafeQuery("UPDATE events SET type = 'ReceiptRecorded ' WHERE position = 2");
    const r = await cli(['ledger', 'verify', '--database', file]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('DOES NOT VERIFY');
    expect(r.out).toContain('first failure: position 2 (event_hash_mismatch)');
  });
});
