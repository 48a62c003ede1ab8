/**
 * Upgrade from a database of the previous release (schema of its three
 * migrations, events hashed as format 1 with no key): the key-attribution
 * migration adds columns without rewriting a row, old events keep verifying
 * as they are, new events are format 2 with their key, and records written
 * before attribution can be acted on only by an admin.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions } from '../../src/database/database-url';
import { DatabaseService } from '../../src/database/database.service';
import { eventHash, eventHashInput, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import { parseVerifierKey, verifyCheckpoint } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { MTH, PATH } from '../reference/rfc6962';
import { createPgDatabase, DIALECTS, startApp, TestApp, TestDialect } from '../helpers/app';

function coreReceipt(): { id: string; text: string; output_hash: string } {
  const bytes = Buffer.from(JSON.stringify({ legacy: randomUUID() }), 'utf8');
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

/** Write a database as the previous release did: its migrations only, a receipt event hashed as format 1, its read-model row. */
async function previousReleaseDatabase(url: string, dialect: TestDialect, r: { id: string; text: string; output_hash: string }): Promise<void> {
  const ds = new DataSource(dataSourceOptions(url, MIGRATIONS[dialect].slice(0, 3)));
  await ds.initialize();
  try {
    await ds.runMigrations({ transaction: 'each' });
    const p = (i: number): string => (dialect === 'postgres' ? `$${i}` : '?');
    const data = JSON.stringify({ id: r.id, raw: r.text, form: 'core', wrapped_in: null, verdict: 'valid', reasons: [], provenance_class: 'EXECUTED BY LEDGER', tool: 'lookup', status: null, output_hash: r.output_hash, created_at: '2026-09-01T10:00:00Z', supersedes: null });
    const base = { position: 1, stream_id: `receipt:${r.id}`, stream_position: 1, type: 'ReceiptRecorded', data, recorded_at: '2026-09-01T10:00:01.000Z', prev_hash: LEDGER_GENESIS_HASH };
    await ds.query(`INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(p).join(', ')})`, [
      base.position, base.stream_id, base.stream_position, base.type, base.data, base.recorded_at, base.prev_hash, eventHash(base),
    ]);
    await ds.query(
      `INSERT INTO receipts (id, id_as_given, form, wrapped_in, raw, verdict, reasons, provenance_class, tool, status, output_hash, created_at, supersedes, superseded_by, position, recorded_at) VALUES (${Array.from({ length: 16 }, (_, i) => p(i + 1)).join(', ')})`,
      [r.id, r.id, 'core', null, r.text, 'valid', '[]', 'EXECUTED BY LEDGER', 'lookup', null, r.output_hash, '2026-09-01T10:00:00Z', null, null, 1, base.recorded_at],
    );
  } finally {
    await ds.destroy();
  }
}

describe.each(DIALECTS)('upgrade from the previous release on %s', (dialect) => {
  let t: TestApp;
  let cleanup: () => Promise<void>;
  const legacy = coreReceipt();

  beforeAll(async () => {
    let url: string;
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      cleanup = db.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'aer1-upgrade-'));
      url = `sqlite:${join(dir, 'ledger.sqlite')}`;
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
    await previousReleaseDatabase(url, dialect, legacy);
    t = await startApp(dialect, { DATABASE_URL: url });
  });
  afterAll(async () => {
    await t.app.close();
    await cleanup();
  });

  it('keeps the old event verifying as format 1 with no key, and appends format-2 events after it', async () => {
    expect((await t.http.get('/api/ledger/verify')).body).toMatchObject({ ok: true, checked: 1 });
    const v = await t.http.get(`/api/receipt/${legacy.id}/verify`);
    expect(v.body).toMatchObject({ verdict: 'valid', recorded_by: null, publication: 'full' });
    expect((await t.http.get(`/run/${legacy.id}`)).text).toContain('written before the ledger recorded keys');
    const fresh = coreReceipt();
    const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(fresh.text);
    expect(r.status).toBe(201);
    const rows = await t.app.get(DatabaseService).query<{ position: number | string; format: number | string; key_name: string | null }>('SELECT position, format, key_name FROM events ORDER BY position');
    expect(rows.map((x) => [Number(x.position), Number(x.format), x.key_name])).toEqual([
      [1, 1, null],
      [2, 3, 'test-producer'],
    ]);
    expect((await t.http.get('/api/ledger/verify')).body).toMatchObject({ ok: true, checked: 2 });
  });

  it('builds the verifiable log of the upgraded ledger: one leaf per event (format 1 kept), a signed checkpoint, proofs equal to the reference', async () => {
    await t.app.get(CheckpointSigner).tick();
    const v = await t.http.get('/api/ledger/verify');
    expect(v.status).toBe(200);
    expect(v.body.tree).toMatchObject({ ok: true, node_failure: null, extra_leaves: 0, checkpoint_failure: null });
    const rows = await t.app.get(DatabaseService).query<StoredEvent>('SELECT * FROM events ORDER BY position');
    const leaves = rows.map((e) => Buffer.from(eventHashInput({ ...e, position: Number(e.position), stream_position: Number(e.stream_position) }), 'utf8'));
    expect(leaves[0].toString('utf8').startsWith('["aer1-ledger-event/1",1,')).toBe(true);
    const note = (await t.http.get('/checkpoint')).text;
    const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    const { checkpoint } = verifyCheckpoint(note, [parseVerifierKey(vkey)]);
    expect([checkpoint.size, checkpoint.rootHash.toString('base64')]).toEqual([leaves.length, MTH(leaves).toString('base64')]);
    for (let i = 0; i < leaves.length; i++) {
      const p = await t.http.get(`/api/ledger/proof/inclusion?index=${i}&tree_size=${leaves.length}`);
      expect(p.body.proof).toEqual(PATH(i, leaves).map((h) => h.toString('base64')));
    }
    // The legacy receipt's verifier says where it sits, proven.
    expect((await t.http.get(`/api/receipts/${legacy.id}/verify`)).body.log).toMatchObject({ status: 'proven', leaf_index: 0, checkpoint: { size: leaves.length } });
  });

  it('lets only an admin correct a receipt written before attribution', async () => {
    const byProducer = await t.http.post(`/api/receipts/${legacy.id}/corrections`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(coreReceipt().text);
    expect([byProducer.status, byProducer.body.error]).toEqual([403, 'not_owner']);
    const byAdmin = await t.http.post(`/api/receipts/${legacy.id}/corrections`).set('Authorization', `Bearer ${t.keys.admin}`).set('Content-Type', 'application/json').send(coreReceipt().text);
    expect(byAdmin.status).toBe(201);
  });
});
