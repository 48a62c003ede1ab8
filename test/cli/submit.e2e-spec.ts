import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { GenericFormatter, Options, Params } from 'cli-progress';
import { countResults, progressBar } from '../../src/cli/commands/submit';
import { startApp, TestApp } from '../helpers/app';
import { Capture, cli, TmpDir } from './helpers';

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: Record<string, unknown> }[] };
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
    expect(r.lines[0]).toMatch(/^batch [0-9a-f-]{36}: 5 records: 4 valid, 1 invalid, 0 historical, 0 incomplete, 0 not found$/);
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

/** Honest answers issue: a batch is clean only when every record is valid. */
describe('aer1 batch submit counts every outcome', () => {
  let t: TestApp;
  let server: string;
  let receiptId: string;
  const tmp = new TmpDir();
  const example = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');
  const workflowId = (JSON.parse(example('workflow-draft-example.json')) as { workflow_id: string }).workflow_id;
  const send = (method: 'post' | 'put', path: string, body: string) => t.http[method](path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(body);
  const saved = { server: process.env.AER1_SERVER, auditor: process.env.AER1_AUDITOR_KEY, key: process.env.AER1_KEY };

  beforeAll(async () => {
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    server = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    receiptId = randomUUID();
    expect((await send('post', '/api/receipts', JSON.stringify({ ...valid, id: receiptId }))).status).toBe(201);
    const h = await send('put', '/api/jobs/job-old/timeline', example('timeline-historical-06.json'));
    expect([h.status, h.body.verdict]).toEqual([201, 'historical']);
    const w = await send('post', '/api/workflows', example('workflow-draft-example.json'));
    expect([w.status, w.body.verdict]).toEqual([201, 'incomplete']);
  });
  afterAll(async () => {
    for (const [name, value] of [['AER1_SERVER', saved.server], ['AER1_AUDITOR_KEY', saved.auditor], ['AER1_KEY', saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await t.close();
    tmp.cleanup();
  });

  it('--all over a historical timeline and an incomplete workflow exits 1 and counts them apart (was: "3 verified, 0 did not", exit 0)', async () => {
    const r = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, '--all', '--no-progress']);
    expect(r.code).toBe(1);
    expect(r.lines[0]).toMatch(/^batch [0-9a-f-]{36}: 3 records: 1 valid, 0 invalid, 1 historical, 1 incomplete, 0 not found$/);
    expect(r.lines.slice(1, 3).sort()).toEqual([`  HISTORICAL job job-old: historical_06_construction`, `  INCOMPLETE workflow ${workflowId}: step_receipts_unavailable`]);
  });

  it('a targets file of only those two: exit 1, JSON counts and both listed as failures (was: "2 verified", exit 0, "failures": [])', async () => {
    const file = tmp.write('two.json', [{ kind: 'job', id: 'job-old' }, { kind: 'workflow', id: workflowId }]);
    const r = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, file, '--json', '--no-progress']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j).toMatchObject({ status: 'completed', total: 2, done: 2, invalid: 0, counts: { valid: 0, invalid: 0, historical: 1, incomplete: 1, not_found: 0 } });
    expect(j.failures.map((f: { kind: string; id: string; verdict: string }) => [f.kind, f.id, f.verdict])).toEqual([
      ['job', 'job-old', 'historical'],
      ['workflow', workflowId, 'incomplete'],
    ]);
  });

  it('an unknown job is counted as not found, and the listing matches the counts (was: "3 verified, 1 did not", then three records listed)', async () => {
    const file = tmp.write('three.json', [{ kind: 'job', id: 'job-old' }, { kind: 'workflow', id: workflowId }, { kind: 'job', id: 'job-nobody' }, { kind: 'receipt', id: receiptId }]);
    const r = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, file, '--no-progress']);
    expect(r.code).toBe(1);
    expect(r.lines[0]).toMatch(/: 4 records: 1 valid, 0 invalid, 1 historical, 1 incomplete, 1 not found$/);
    expect(r.lines.slice(1, -1)).toEqual([`  HISTORICAL job job-old: historical_06_construction`, `  INCOMPLETE workflow ${workflowId}: step_receipts_unavailable`, '  NOT FOUND job job-nobody: not_found']);
    const valid1 = tmp.write('one.json', [{ kind: 'receipt', id: receiptId }]);
    const ok = await cli(['batch', 'submit', '--server', server, '--key', t.keys.auditor, valid1, '--json', '--no-progress']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ counts: { valid: 1, invalid: 0, historical: 0, incomplete: 0, not_found: 0 }, failures: [] });
  });

  it('takes the server from AER1_SERVER and the key from AER1_AUDITOR_KEY, not the producer key in AER1_KEY (was: --server required, AER1_KEY used: 403)', async () => {
    const file = tmp.write('one.json', [{ kind: 'receipt', id: receiptId }]);
    process.env.AER1_SERVER = server;
    process.env.AER1_KEY = t.keys.producer;
    delete process.env.AER1_AUDITOR_KEY;
    const missing = await cli(['batch', 'submit', file, '--no-progress']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/AER1_AUDITOR_KEY/);
    process.env.AER1_AUDITOR_KEY = t.keys.auditor;
    const r = await cli(['batch', 'submit', file, '--json', '--no-progress']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(JSON.parse(r.out)).toMatchObject({ total: 1, counts: { valid: 1 } });
  });
});

describe('aer1 batch submit progress line', () => {
  const params = (eta: unknown, value: number): Params => ({ progress: value / 100, eta: eta as number, startTime: Date.now() - 1000, stopTime: null, total: 100, value, maxWidth: 200 });

  it('shows no time left until cli-progress can estimate it (was: "NFs left")', () => {
    // The options of the bar the command draws (cli-progress fills in its defaults).
    const options = (progressBar(new Capture()) as unknown as { options: Options & { format: GenericFormatter } }).options;
    const line = (eta: unknown, value: number, notvalid: number): string => options.format(options, params(eta, value), { notvalid });
    for (const eta of ['INF', 'NULL']) {
      expect(line(eta, 0, 0)).not.toMatch(/NF|LL|left/);
      expect(line(eta, 0, 0)).toMatch(/ 0\/100 records \| 0 not valid$/);
      expect(line(eta, 40, 2)).toMatch(/ 40\/100 records \| 2 not valid$/);
    }
    expect(line(75, 40, 2)).toMatch(/ 40\/100 records \| 2 not valid \| 1m15s left$/);
  });
});

describe('aer1 batch submit against a server without counts', () => {
  it('counts the listed results itself, a not-found target apart from invalid ones', () => {
    const r = (verdict: string, reasons: string[] = []) => ({ kind: 'job', id: 'x', verdict, reasons });
    expect(countResults([r('valid'), r('invalid', ['not_found']), r('invalid', ['output_hash_mismatch']), r('historical', ['historical_06_construction']), r('incomplete', ['step_receipt_missing']), r('something_new')])).toEqual({
      valid: 1,
      invalid: 2,
      historical: 1,
      incomplete: 1,
      not_found: 1,
    });
  });
});
