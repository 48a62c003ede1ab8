/**
 * Upgrade to event format 3 (issue 29), on SQLite and PostgreSQL: a database
 * of the previous release (its migrations, all but EventFormat3, with a
 * format 1 and a format 2 receipt event and their read-model rows, the tree
 * built by its own migration) is migrated, keeps verifying, and goes on
 * writing format 3. Then the format 2 receipt, recorded before the upgrade,
 * is erased: its leaf held the content, so it can no longer be recomputed,
 * and every check names it (chain `leaf_not_recomputed`, tree
 * `leaves_erased`, the leaves endpoint and the proof file `ERASED_LEAF_NOTE`,
 * `aer1 ledger verify --database` offline) while `aer1 log monitor` still
 * finds the log consistent (the tree did not change).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions } from '../../src/database/database-url';
import { DatabaseService } from '../../src/database/database.service';
import { ERASED_LEAF_NOTE, eventHash, LEDGER_GENESIS_HASH } from '../../src/core/ledger/event-hash';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { createPgDatabase, DIALECTS, startApp, TestApp, TestDialect } from '../helpers/app';
import { listen } from '../reliability/helpers';
import { cli } from '../cli/helpers';

interface Legacy {
  id: string;
  text: string;
  output_hash: string;
}

function coreReceipt(): Legacy {
  const bytes = Buffer.from(JSON.stringify({ customer: 'Grace Hopper', account: randomUUID() }), 'utf8');
  const id = randomUUID();
  const output_hash = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
  const text = JSON.stringify({
    id,
    receipt_schema_version: '0.3',
    created_at: '2026-09-01T10:00:00Z',
    tool: { name: 'lookup', version: '1.0.0', scope: 'read' },
    provenance_class: 'EXECUTED BY LEDGER',
    canonical_bytes: bytes.toString('base64'),
    output_hash,
    verification_status: 'verified',
  });
  return { id, text, output_hash };
}

/** The index of the EventFormat3 migration: the previous release ran every migration before it. */
function previousRelease(dialect: TestDialect): number {
  const i = MIGRATIONS[dialect].findIndex((m) => m.name.startsWith('EventFormat3'));
  expect(i).toBeGreaterThan(5);
  return i;
}

/**
 * A database as the previous release left it: a format 1 receipt event written before key attribution, a
 * format 2 one after it (both with their receipts rows), then the rest of that release's migrations (the
 * verifiable log's builds the tree of both events).
 */
async function previousReleaseDatabase(url: string, dialect: TestDialect, f1: Legacy, f2: Legacy): Promise<void> {
  const p = (i: number): string => (dialect === 'postgres' ? `$${i}` : '?');
  const run = async (upTo: number, fn: (ds: DataSource) => Promise<void>): Promise<void> => {
    const ds = new DataSource(dataSourceOptions(url, MIGRATIONS[dialect].slice(0, upTo)));
    await ds.initialize();
    try {
      await ds.runMigrations({ transaction: 'each' });
      await fn(ds);
    } finally {
      await ds.destroy();
    }
  };
  const data = (r: Legacy, extra: Record<string, unknown>) =>
    JSON.stringify({ id: r.id, raw: r.text, form: 'core', wrapped_in: null, verdict: 'valid', reasons: [], provenance_class: 'EXECUTED BY LEDGER', tool: 'lookup', status: null, output_hash: r.output_hash, created_at: '2026-09-01T10:00:00Z', supersedes: null, ...extra });
  const receiptRow = async (ds: DataSource, r: Legacy, position: number, recordedAt: string) =>
    ds.query(
      `INSERT INTO receipts (id, id_as_given, form, wrapped_in, raw, verdict, reasons, provenance_class, tool, status, output_hash, created_at, supersedes, superseded_by, position, recorded_at) VALUES (${Array.from({ length: 16 }, (_, i) => p(i + 1)).join(', ')})`,
      [r.id, r.id, 'core', null, r.text, 'valid', '[]', 'EXECUTED BY LEDGER', 'lookup', null, r.output_hash, '2026-09-01T10:00:00Z', null, null, position, recordedAt],
    );
  const e1 = { position: 1, stream_id: `receipt:${f1.id}`, stream_position: 1, type: 'ReceiptRecorded', data: data(f1, {}), recorded_at: '2026-09-01T10:00:01.000Z', prev_hash: LEDGER_GENESIS_HASH };
  const h1 = eventHash(e1);
  await run(3, async (ds) => {
    await ds.query(`INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(p).join(', ')})`, [
      e1.position, e1.stream_id, e1.stream_position, e1.type, e1.data, e1.recorded_at, e1.prev_hash, h1,
    ]);
    await receiptRow(ds, f1, 1, e1.recorded_at);
  });
  // Key attribution and the list indexes: the format 2 event, written by a key.
  const e2 = { position: 2, stream_id: `receipt:${f2.id}`, stream_position: 1, type: 'ReceiptRecorded', data: data(f2, { publication: 'full' }), recorded_at: '2026-10-01T10:00:01.000Z', prev_hash: h1, format: 2, key_id: randomUUID(), key_name: 'crm-agent' };
  await run(5, async (ds) => {
    await ds.query(`INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash, format, key_id, key_name) VALUES (${Array.from({ length: 11 }, (_, i) => p(i + 1)).join(', ')})`, [
      e2.position, e2.stream_id, e2.stream_position, e2.type, e2.data, e2.recorded_at, e2.prev_hash, eventHash(e2), 2, e2.key_id, e2.key_name,
    ]);
    await receiptRow(ds, f2, 2, e2.recorded_at);
  });
  await run(previousRelease(dialect), async () => undefined);
}

describe.each(DIALECTS)('upgrade to event format 3, then a format 2 event erased, on %s', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let url: string;
  let base: string;
  let vkey: string;
  let cleanup: () => Promise<void>;
  let dir: string;
  const f1 = coreReceipt();
  const f2 = coreReceipt();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-upgrade-f3-'));
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      cleanup = db.drop;
    } else {
      url = `sqlite:${join(dir, 'ledger.sqlite')}`;
      cleanup = async () => undefined;
    }
    await previousReleaseDatabase(url, dialect, f1, f2);
    t = await startApp(dialect, { DATABASE_URL: url });
    base = await listen(t.app);
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
  });
  afterAll(async () => {
    await t?.app.close();
    await cleanup?.();
    rmSync(dir, { recursive: true, force: true });
  });

  const db = () => t.app.get(DatabaseService);
  const verify = () => t.http.get('/api/ledger/verify');
  const monitor = (...extra: string[]) => cli(['log', 'monitor', '--url', base, '--vkey', vkey, '--state', join(dir, 'monitor-state'), ...extra]);

  it('migrates without rewriting a row, keeps format 1 and 2 verifying, and writes format 3 after them', async () => {
    const v0 = await verify();
    expect([v0.status, v0.body.ok, v0.body.checked, v0.body.tree.ok]).toEqual([200, true, 2, true]);
    const fresh = coreReceipt();
    const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(fresh.text);
    expect(r.status).toBe(201);
    const rows = await db().query<{ position: number | string; format: number | string; stream_prev: number | string | null; payload_salt: string | null }>('SELECT position, format, stream_prev, payload_salt FROM events ORDER BY position');
    expect(rows.map((x) => [Number(x.position), Number(x.format), x.stream_prev === null ? null : Number(x.stream_prev), x.payload_salt === null ? null : x.payload_salt.length])).toEqual([
      [1, 1, null, null],
      [2, 2, null, null],
      [3, 3, 0, 64],
    ]);
    await t.app.get(CheckpointSigner).tick();
    const v = await verify();
    expect([v.status, v.body.ok, v.body.checked, v.body.tree.ok, v.body.erased]).toEqual([200, true, 3, true, { payload_erased: { count: 0, positions: [] }, leaf_not_recomputed: { count: 0, positions: [] } }]);
    // aer1 log inclusion --receipt finds each receipt's leaf: format 2 by its data, format 3 by its public receipt_id.
    for (const id of [f2.id, fresh.id]) {
      const inc = await cli(['log', 'inclusion', '--url', base, '--vkey', vkey, '--receipt', id]);
      expect([inc.code, inc.out]).toEqual([0, expect.stringContaining('Result: VERIFIED')]);
    }
    const other = await cli(['log', 'inclusion', '--url', base, '--vkey', vkey, '--index', '2', '--receipt', f2.id]);
    expect(other.code).toBe(2); // exactly one of --receipt and --index
    const first = await monitor();
    expect([first.code, first.out]).toEqual([0, expect.stringContaining('FIRST RUN')]);
  });

  it('erases the format 2 receipt recorded before the upgrade: every check names it, none fails or passes it silently', async () => {
    const before = await t.http.get('/api/ledger/leaves/1');
    expect(Buffer.from(before.body.leaf as string, 'base64').toString('utf8')).toContain(f2.output_hash);
    const e = await t.http
      .post('/api/erasures')
      .set('Authorization', `Bearer ${t.keys.privacy}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ receipt_ids: [f2.id], reason: 'customer request 2026-118', legal_basis: 'GDPR Art. 17(1)(a)' }));
    expect([e.status, e.body.positions]).toEqual([201, [2]]);
    const stored = await db().query<{ data: string; event_hash: string }>('SELECT data, event_hash FROM events WHERE position = 2');
    expect(stored[0].data).toBe('');
    const raw = await db().query<{ data: string }>('SELECT data FROM events');
    expect(raw.some((x) => x.data.includes(f2.output_hash.slice(7)) || x.data.includes(Buffer.from(JSON.parse(f2.text).canonical_bytes, 'base64').toString('utf8')))).toBe(false);
    await t.app.get(CheckpointSigner).tick();

    // The chain: position 2 named as not recomputed; the tree: its stored leaf hash stands in, counted.
    const v = await verify();
    expect(v.status).toBe(200);
    expect([v.body.ok, v.body.checked, v.body.first_failure]).toEqual([true, 4, null]);
    expect(v.body.erased).toEqual({ payload_erased: { count: 0, positions: [] }, leaf_not_recomputed: { count: 1, positions: [2] } });
    expect([v.body.tree.ok, v.body.tree.leaves_erased]).toEqual([true, 1]);
    expect(v.body.projections.ok).toBe(true);

    // The leaves endpoint and the proof file: no leaf, the note, the same leaf hash as before.
    const leaf = await t.http.get('/api/ledger/leaves/1');
    expect([leaf.status, leaf.body.leaf, leaf.body.withheld, leaf.body.leaf_hash]).toEqual([200, null, ERASED_LEAF_NOTE, before.body.leaf_hash]);
    const page = await t.http.get('/api/ledger/leaves?start=0&count=10');
    expect((page.body.leaves as { index: number; withheld?: string }[]).map((l) => [l.index, l.withheld ?? null])).toEqual([
      [0, null],
      [1, ERASED_LEAF_NOTE],
      [2, null],
      [3, null],
    ]);
    const proof = await t.http.get('/api/ledger/events/2/proof');
    expect(proof.status).toBe(200);
    const pf = JSON.parse(proof.text) as { leaf: string | null; withheld?: string; leaf_hash: string; tree_size: number };
    expect([pf.leaf, pf.withheld, pf.leaf_hash, pf.tree_size]).toEqual([null, ERASED_LEAF_NOTE, before.body.leaf_hash, 4]);

    // Offline, straight from the database: verifies, and names position 2.
    const off = await cli(['ledger', 'verify', '--database', url]);
    expect(off.code).toBe(0);
    expect(off.out).toContain('leaves not recomputed (format 1/2, content erased');
    expect(off.out).toMatch(/: 1, at positions 2\n/);
    expect(off.out).toContain('Verdict: valid');
    const offJson = await cli(['ledger', 'verify', '--database', url, '--json']);
    expect([offJson.code, JSON.parse(offJson.out).erased.leaf_not_recomputed]).toEqual([0, { count: 1, positions: [2] }]);

    // aer1 log inclusion of that leaf: not served, so not checked, and it says why.
    const inc = await cli(['log', 'inclusion', '--url', base, '--vkey', vkey, '--index', '1', '--json']);
    expect([inc.code, JSON.parse(inc.out)]).toEqual([1, { verified: false, failed: ['leaf_withheld'], leaf_index: 1, withheld: ERASED_LEAF_NOTE }]);

    // The monitor: the log grew from the size it saved, consistently (erasure changed no leaf hash).
    const m = await monitor('--json');
    expect(m.code).toBe(0);
    expect(JSON.parse(m.out)).toMatchObject({ result: 'consistent' });
  });

  it('erases the format 1 receipt too, and a format 3 one: each named in its own list', async () => {
    const r3 = (await db().query<{ stream_id: string }>('SELECT stream_id FROM events WHERE position = 3'))[0].stream_id.slice('receipt:'.length);
    const e = await t.http
      .post('/api/erasures')
      .set('Authorization', `Bearer ${t.keys.admin}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ receipt_ids: [f1.id, r3], reason: 'storage limitation', legal_basis: 'GDPR Art. 5(1)(e)' }));
    expect([e.status, e.body.positions]).toEqual([201, [1, 3]]);
    const v = await verify();
    expect([v.status, v.body.ok, v.body.tree.leaves_erased]).toEqual([200, true, 2]);
    expect(v.body.erased).toEqual({ payload_erased: { count: 1, positions: [3] }, leaf_not_recomputed: { count: 2, positions: [1, 2] } });
    const off = await cli(['ledger', 'verify', '--database', url]);
    expect(off.code).toBe(0);
    expect(off.out).toMatch(/payloads erased \(format 3: [^\n]*: 1, at positions 3\n/);
    expect(off.out).toMatch(/leaves not recomputed [^\n]*: 2, at positions 1, 2\n/);
    await t.app.get(CheckpointSigner).tick();
    expect((await monitor('--json')).code).toBe(0);
  });
});
