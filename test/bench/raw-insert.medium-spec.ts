/**
 * The stronger raw reference of the ingestion bench (issue 17): on
 * PostgreSQL a multi-row INSERT per 1,000 receipts, measured against the
 * same rows as the per-row reference; both must leave identical tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { createDb, migrate, multiRowInsert, rawInsert, RawMode } from '../../bench/lib/db';
import { INSERT_RECEIPT, ledgerRows, receiptBodies } from '../../bench/lib/receipts';
import { PG_ADMIN_URL } from '../helpers/app';

const root = resolve(__dirname, '../..');

describe('bench raw reference', () => {
  jest.setTimeout(60_000);
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'aer1-raw-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('multiRowInsert numbers the placeholders row by row and keeps literals', () => {
    expect(multiRowInsert('INSERT INTO t (a, b, c) VALUES (?, NULL, ?)', 3)).toBe('INSERT INTO t (a, b, c) VALUES ($1, NULL, $2), ($3, NULL, $4), ($5, NULL, $6)');
    expect(multiRowInsert(INSERT_RECEIPT, 1000).match(/\$\d+/g)!.length).toBe(15_000); // under PostgreSQL's 65,535 parameters
    expect(() => multiRowInsert('SELECT 1', 2)).toThrow(/not a single-row INSERT/);
  });

  it('per-row and fastest write the same rows on PostgreSQL (2,500 receipts: two full transactions and a short one)', async () => {
    const rows = ledgerRows(receiptBodies(root, 2_500));
    const dumps: string[] = [];
    for (const mode of ['per-row', 'fastest'] as RawMode[]) {
      const db = await createDb('postgres', tmp, PG_ADMIN_URL);
      try {
        await migrate(db);
        expect(await rawInsert(db, rows, 1000, mode)).toBeGreaterThan(0);
        const c = new Client({ connectionString: db.url });
        await c.connect();
        const ev = await c.query('SELECT * FROM events ORDER BY position');
        const rc = await c.query('SELECT * FROM receipts ORDER BY position');
        await c.end();
        expect([ev.rowCount, rc.rowCount]).toEqual([2_500, 2_500]);
        dumps.push(JSON.stringify([ev.rows, rc.rows]));
      } finally {
        await db.drop();
      }
    }
    expect(dumps[1]).toBe(dumps[0]);
  });
});
