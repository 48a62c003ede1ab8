import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { SYSTEM } from '../../src/core/ledger/event-hash';
import { verifyLedgerDatabase } from '../../src/ledger/offline-verify';
import { main as ledgerCli } from '../../src/ledger-cli';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; kind: string; input: unknown }[] };
const receipts = corpus.vectors.filter((v) => v.kind === 'receipt' && !/invalid|tampered|bad|mismatch|missing|unknown|feb-30|no-timezone|unpadded|uppercase|schema|not-object|nfc-bytes/.test(v.id));

/** Every projection table (read models, rebuildable from the events). */
const PROJECTION_TABLE_NAMES = ['receipts', 'timelines', 'timeline_entries', 'commitments', 'workflows', 'workflow_steps', 'plans', 'plan_versions', 'coverage_reports'];

/** Every row of every projection table, in a stable order, for comparing live and rebuilt read models. */
async function snapshot(db: DatabaseService): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of PROJECTION_TABLE_NAMES) {
    const rows = await db.query(`SELECT * FROM ${t}`);
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])))).sort();
  }
  return out;
}

describe.each(DIALECTS)('ledger on %s', (dialect) => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-ledger-'));
    t = await startApp(dialect, dialect === 'sqlite' ? { DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}` } : {});
    for (const v of receipts) {
      const r = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).send(JSON.stringify(v.input));
      expect([201, 200]).toContain(r.status);
    }
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records one event per receipt with a gapless position and a verifiable chain', async () => {
    const head = (await t.http.get('/api/ledger/head')).body as { position: number; event_hash: string };
    expect(head.position).toBe(receipts.length);
    expect(head.event_hash).toMatch(/^[0-9a-f]{64}$/);
    const v = (await t.http.get('/api/ledger/verify')).body;
    expect(v).toEqual({
      verdict: 'valid',
      ok: true,
      checked: receipts.length,
      head,
      first_failure: null,
      erased: { payload_erased: { count: 0, positions: [] }, leaf_not_recomputed: { count: 0, positions: [] } },
      tree: expect.objectContaining({ ok: true, leaves_checked: receipts.length, node_failure: null, extra_leaves: 0, checkpoint_failure: null }),
      projections: expect.objectContaining({ ok: true, as_of_position: head.position, events_replayed: head.position }),
    });
    expect(v.projections.tables.find((x: { table: string }) => x.table === 'receipts')).toEqual({ table: 'receipts', ok: true, rows_checked: receipts.length, failures: 0, first_failure: null });
    expect((await t.http.get(`/api/ledger/verify?head_position=${head.position}&head_hash=${head.event_hash}`)).body.expected_head.ok).toBe(true);
  });

  it('`npm run ledger -- verify` is the check of `aer1 ledger verify`, on the configured DATABASE_URL', async () => {
    const url = dialect === 'sqlite' ? `sqlite:${join(dir, 'ledger.sqlite')}` : t.databaseUrl;
    const written: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = url;
    let code: number;
    try {
      code = await ledgerCli(['verify']);
    } finally {
      spy.mockRestore();
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
    expect(code).toBe(0);
    const head = (await t.http.get('/api/ledger/head')).body;
    expect(JSON.parse(written.join(''))).toMatchObject({ ok: true, chain_ok: true, checked: head.position, head, first_failure: null, projections: { ok: true, as_of_position: head.position } });
    expect(JSON.parse(written.join(''))).toEqual(await verifyLedgerDatabase(url));
  });

  it('rejects UPDATE and DELETE on events in the database itself', async () => {
    const db = t.app.get(DatabaseService);
    await expect(db.unsafeQuery("UPDATE events SET type = 'X' WHERE position = 1")).rejects.toThrow(/append-only/);
    await expect(db.unsafeQuery('DELETE FROM events WHERE position = 1')).rejects.toThrow(/append-only/);
    if (dialect === 'postgres') await expect(db.query('TRUNCATE events')).rejects.toThrow(/append-only/);
  });

  it('never shows a reader an event whose transaction has not committed (and rolls it back whole)', async () => {
    const db = t.app.get(DatabaseService);
    const ledger = t.app.get(LedgerService);
    const before = (await t.http.get('/api/ledger/head')).body;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inside!: () => void;
    const entered = new Promise<void>((r) => (inside = r));
    const failing = db.write(async (tx) => {
      await ledger.append(tx, 'test:uncommitted', 0, [{ type: 'ProbeRecorded', data: { n: 1 } }], SYSTEM);
      inside();
      await gate;
      throw new Error('roll back');
    });
    await entered;
    expect((await t.http.get('/api/ledger/head')).body).toEqual(before);
    release();
    await expect(failing).rejects.toThrow('roll back');
    expect((await t.http.get('/api/ledger/head')).body).toEqual(before);
    expect((await t.http.get('/api/ledger/verify')).body.ok).toBe(true);
  });

  it('rebuilds projections to exactly the live state', async () => {
    const db = t.app.get(DatabaseService);
    const live = await snapshot(db);
    expect(live.receipts).toHaveLength(receipts.length);
    const r = await t.app.get(LedgerService).rebuildProjections();
    expect(r.events).toBe(receipts.length);
    expect(await snapshot(db)).toEqual(live);
  });

  it('detects an event edited directly in the database (triggers dropped), online and offline', async () => {
    const db = t.app.get(DatabaseService);
    const head = (await t.http.get('/api/ledger/head')).body as { position: number; event_hash: string };
    if (dialect === 'sqlite') await db.unsafeQuery('DROP TRIGGER events_no_update');
    else await db.unsafeQuery('ALTER TABLE events DISABLE TRIGGER events_no_update');
    const row = (await db.query<{ data: string; payload_salt: string }>('SELECT data, payload_salt FROM events WHERE position = 3'))[0];
    await db.unsafeQuery('UPDATE events SET data = ? WHERE position = 3', [row.data.replace('"verdict":"valid"', '"verdict":"valid" ')]);
    const online = (await t.http.get('/api/ledger/verify')).body;
    expect(online.ok).toBe(false);
    // Format 3 (issue 29): the data is a payload committed to by the leaf, so an edit breaks the commitment, not the leaf.
    expect(online.first_failure).toMatchObject({ position: 3, reason: 'payload_commitment_mismatch' });
    expect(online.tree.node_failure).toBeNull();
    const offline = await verifyLedgerDatabase(dialect === 'sqlite' ? join(dir, 'ledger.sqlite') : t.databaseUrl);
    expect(offline.ok).toBe(false);
    expect(offline.first_failure).toMatchObject({ position: 3, reason: 'payload_commitment_mismatch' });
    // A payload deleted behind the ledger (no PayloadsErased event names it) is named too.
    await db.unsafeQuery("UPDATE events SET data = '', payload_salt = NULL WHERE position = 3");
    const gone = (await t.http.get('/api/ledger/verify')).body;
    expect(gone.first_failure).toMatchObject({ position: 3, reason: 'payload_missing' });
    await db.unsafeQuery('UPDATE events SET payload_salt = ? WHERE position = 3', [row.payload_salt]);
    // A deleted newest event is invisible to the chain alone, but not to the tree (it still holds its leaf), to
    // the projection audit (its receipt row is made by no event), nor to a head published earlier.
    await db.unsafeQuery('UPDATE events SET data = ? WHERE position = 3', [row.data]);
    if (dialect === 'sqlite') await db.unsafeQuery('DROP TRIGGER events_no_delete');
    await db.unsafeQuery('DELETE FROM events WHERE position = ?', [head.position]);
    const alone = await t.http.get('/api/ledger/verify');
    expect(alone.status).toBe(409);
    expect(alone.body).toMatchObject({ verdict: 'invalid', ok: false, first_failure: null, tree: { extra_leaves: 1 }, projections: { ok: false } });
    expect(alone.body.projections.tables.find((x: { table: string }) => x.table === 'receipts').first_failure).toMatchObject({ kind: 'unexpected', position: head.position });
    const witnessed = (await t.http.get(`/api/ledger/verify?head_position=${head.position}&head_hash=${head.event_hash}`)).body;
    expect(witnessed.ok).toBe(false);
    expect(witnessed.expected_head.ok).toBe(false);
  });
});

describe('npm run ledger -- create-key, as the README pipes it', () => {
  it('prints only the key JSON on stdout, with no PUBLIC_BASE_URL and no NODE_ENV (the server PUBLIC_BASE_URL warning is not printed)', async () => {
    const { spawnSync } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'aer1-ledger-cli-'));
    try {
      const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'l.sqlite')}` } as Record<string, string>;
      delete env.NODE_ENV;
      delete env.PUBLIC_BASE_URL;
      delete env.LOG_LEVEL;
      const r = spawnSync(process.execPath, [join(__dirname, '../../dist/src/ledger-cli.js'), 'create-key', '--role', 'producer', '--name', 'my-agent-platform'], { env, encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0])).toMatchObject({ name: 'my-agent-platform', role: 'producer', key: expect.stringMatching(/^aer1_/) });
      // The server's PUBLIC_BASE_URL warning is not the CLI's (it writes no record URL): a fresh user read it as a fault of create-key.
      expect(r.stderr).not.toContain('PUBLIC_BASE_URL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
