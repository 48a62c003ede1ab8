import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { startApp, TestApp } from '../helpers/app';
import { cli, TmpDir } from './helpers';

const corpus = JSON.parse(readFileSync(join(__dirname, '../../vectors/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: Record<string, unknown> }[] };
const valid = corpus.vectors.find((v) => v.id === 'receipt-core-valid')!.input;

describe('aer1 batch submit', () => {
  let t: TestApp;
  let server: string;
  const ids: string[] = [];
  const tmp = new TmpDir();
  beforeAll(async () => {
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    server = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    for (let i = 0; i < 12; i++) {
      const id = randomUUID();
      ids.push(id);
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify({ ...valid, id }));
      expect(r.status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('verifies everything with --all and exits 0', async () => {
    const r = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, '--all', '--json', '--no-progress']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'completed', total: 12, done: 12, invalid: 0, failures: [] });
  });

  it('reports a record tampered in the database and exits 1', async () => {
    const victim = ids[3];
    const raw = JSON.stringify({ ...valid, id: victim, canonical_bytes: 'dGFtcGVyZWQ=' });
    await t.app.get(DatabaseService).write((tx) => tx.query('UPDATE receipts SET raw = ? WHERE id = ?', [raw, victim]));
    const file = tmp.write('targets.json', ids.slice(0, 5).map((id) => ({ kind: 'receipt', id })));
    const r = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, file, '--no-progress']);
    expect(r.code).toBe(1);
    expect(r.lines[0]).toMatch(/^batch [0-9a-f-]{36}: 5 records, 4 verified, 1 did not$/);
    expect(r.lines[1]).toBe(`  INVALID receipt ${victim}: output_hash_mismatch`);
  });

  it('exits 2 with one line when the key has the wrong role, the scope is ambiguous, or the server is unreachable', async () => {
    const wrongRole = await cli(['batch', 'submit', '--server', server, '--key', t.keys.producer, '--all', '--no-progress']);
    expect(wrongRole.code).toBe(2);
    expect(wrongRole.err).toMatch(/^aer1: the server refused the batch \(403 forbidden_role\)/);
    const both = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, '--all', '--since', '3']);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/exactly one of --all, --since N, or a targets file/);
    const down = await cli(['batch', 'submit', '--server', 'http://127.0.0.1:9', '--key', 'k', '--all', '--no-progress']);
    expect(down.code).toBe(2);
    expect(down.err).toMatch(/^aer1: cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(down.err.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
