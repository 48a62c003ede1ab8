/**
 * Attacker review of session 25: the frozen tree backfill of the
 * verifiable-log migration (migrations/frozen/1764500000000-tree-backfill.ts)
 * run for real on a database of the release before the verifiable log, whose
 * events mix formats 1 and 2 and carry non-ASCII text (stream ids, data, key
 * names: accents, U+007F, U+2028, astral characters, quotes). The tree it
 * builds and the first checkpoint signed over it must equal what today's
 * leaf serialization (eventLeaf) and the RFC 6962 reference give, and the
 * signer must extend it with fresh appends. Both databases.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions } from '../../src/database/database-url';
import { DatabaseService } from '../../src/database/database.service';
import { eventHash, eventLeaf, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import { parseVerifierKey, verifyCheckpoint } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { MTH } from '../reference/rfc6962';
import { createPgDatabase, DIALECTS, startApp, TestApp, TestDialect } from '../helpers/app';
import { freshReceipt } from './helpers';

jest.setTimeout(90_000);

const N = 13;

/** A database as the release before the verifiable log wrote it (migrations up to ListIndexes), with N tricky events. */
async function preLogDatabase(url: string, dialect: TestDialect): Promise<StoredEvent[]> {
  const before = MIGRATIONS[dialect].findIndex((m) => m.name.startsWith('VerifiableLog'));
  const ds = new DataSource(dataSourceOptions(url, MIGRATIONS[dialect].slice(0, before)));
  await ds.initialize();
  const out: StoredEvent[] = [];
  try {
    await ds.runMigrations({ transaction: 'each' });
    const p = (i: number): string => (dialect === 'postgres' ? `$${i}` : '?');
    let prev = LEDGER_GENESIS_HASH;
    for (let i = 1; i <= N; i++) {
      const format = i % 3 === 1 ? 1 : 2;
      const e: Omit<StoredEvent, 'event_hash'> = {
        position: i,
        stream_id: `legacy:${i}-é\u2028ü`,
        stream_position: 1,
        type: 'LegacyNoted',
        data: JSON.stringify({ i, text: `ä\u007f\u2028😀 “q” \\ / ${i}`, nested: { ж: i } }),
        recorded_at: `2026-09-01T10:00:${String(i).padStart(2, '0')}.000Z`,
        prev_hash: prev,
        format,
        key_id: format === 2 ? `key-${i}` : null,
        key_name: format === 2 ? `naïve “key” ${i} 😀` : null,
      };
      const full = { ...e, event_hash: eventHash(e) };
      await ds.query(`INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash, format, key_id, key_name) VALUES (${Array.from({ length: 11 }, (_, k) => p(k + 1)).join(', ')})`, [
        full.position, full.stream_id, full.stream_position, full.type, full.data, full.recorded_at, full.prev_hash, full.event_hash, full.format, full.key_id, full.key_name,
      ]);
      out.push(full);
      prev = full.event_hash;
    }
  } finally {
    await ds.destroy();
  }
  return out;
}

describe.each(DIALECTS)('%s: upgrade of a pre-log ledger with mixed formats and non-ASCII events', (dialect) => {
  let t: TestApp;
  let cleanup: () => Promise<void>;
  let events: StoredEvent[];
  beforeAll(async () => {
    let url: string;
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      cleanup = db.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'aer1-attack25-upgrade-'));
      url = `sqlite:${join(dir, 'ledger.sqlite')}`;
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
    events = await preLogDatabase(url, dialect);
    t = await startApp(dialect, { DATABASE_URL: url });
  });
  afterAll(async () => {
    await t?.app.close();
    await cleanup?.();
  });

  it('the migrated tree and its first checkpoint equal the reference tree over today\'s leaves; fresh appends extend it and verify', async () => {
    const signer = t.app.get(CheckpointSigner);
    await signer.tick();
    const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    const first = verifyCheckpoint((await t.http.get('/checkpoint')).text, [parseVerifierKey(vkey)]).checkpoint;
    const leaves = events.map((e) => eventLeaf(e));
    expect([first.size, first.rootHash.toString('base64')]).toEqual([N, MTH(leaves).toString('base64')]);
    expect(t.app.get(CheckpointSigner).state()).toMatchObject({ signing: 'active', checkpoint_size: N });

    for (let i = 0; i < 3; i++) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
      expect(r.status).toBe(201);
    }
    await signer.tick();
    const rows = await t.app.get(DatabaseService).query<StoredEvent>('SELECT * FROM events ORDER BY position');
    const all = rows.map((e) => eventLeaf({ ...e, position: Number(e.position), stream_position: Number(e.stream_position), format: Number(e.format) }));
    const second = verifyCheckpoint((await t.http.get('/checkpoint')).text, [parseVerifierKey(vkey)]).checkpoint;
    expect([second.size, second.rootHash.toString('base64')]).toEqual([N + 3, MTH(all).toString('base64')]);
    const v = await t.http.get('/api/ledger/verify');
    expect([v.status, v.body.ok, v.body.tree?.ok]).toEqual([200, true, true]);
  });
});
