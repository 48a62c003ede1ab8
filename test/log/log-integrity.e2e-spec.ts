/**
 * The verifiable log against tampering, on SQLite (a file) and PostgreSQL:
 * records' verifiers and pages show where they sit (proven only when the
 * inclusion proof checks); a tree node edited behind the triggers is caught
 * by /api/ledger/verify, turns the records' proofs to "failed" and stops the
 * signer (said in /health); a history rebuilt with recomputed hashes is
 * caught by `aer1 log monitor` against the checkpoint it saved.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { cli } from '../cli/helpers';
import { createPgDatabase, DIALECTS, startApp, TestApp, testSigningKeyFile, testStateFile } from '../helpers/app';
import { freshReceipt, listen } from '../reliability/helpers';

describe.each(DIALECTS)('verifiable log integrity on %s', (dialect) => {
  jest.setTimeout(120_000);
  let dir: string;
  let url: string;
  let drop: (() => Promise<void>) | undefined;
  let t: TestApp | undefined;
  const env = (): Record<string, string> => ({ DATABASE_URL: url, CHECKPOINT_INTERVAL_MS: '3600000', ...(dialect === 'postgres' ? { LEDGER_SIGNING_KEY_FILE: testSigningKeyFile() } : {}) });

  async function record(app: TestApp): Promise<string> {
    const r = freshReceipt();
    const res = await app.http.post('/api/receipts').set('Authorization', `Bearer ${app.keys.producer}`).set('Content-Type', 'application/json').send(r.text);
    expect(res.status).toBe(201);
    return r.id;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-log-integrity-'));
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      drop = db.drop;
    } else url = `sqlite:${join(dir, 'ledger.sqlite')}`;
  });
  afterAll(async () => {
    await t?.app.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows each record where it sits: pending before a checkpoint, proven after, on the verifier and the page', async () => {
    t = await startApp(dialect, env());
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await record(t));
    const before = (await t.http.get(`/api/receipts/${ids[8]}/verify`)).body.log;
    expect(before).toMatchObject({ status: 'pending', checkpoint: null, inclusion_proof: null });
    await t.app.get(CheckpointSigner).tick();
    const v = (await t.http.get(`/api/receipts/${ids[8]}/verify`)).body;
    const pos = Number((await t.app.get(DatabaseService).query<{ position: number | string }>('SELECT position FROM receipts WHERE id = ?', [ids[8]]))[0].position);
    expect(v.log).toMatchObject({ status: 'proven', leaf_index: pos - 1, position: pos, checkpoint: { size: pos, origin: 'ledger.test' }, proof_url: `https://ledger.test/api/receipts/${ids[8]}/proof` });
    expect(v.log.inclusion_proof.length).toBeGreaterThan(0);
    const page = await t.http.get(`/run/${ids[8]}`);
    expect(page.text).toContain(`In the log: leaf ${pos - 1}, proven in signed checkpoint ${pos} (inclusion proof checked)`);
    expect(page.text).toContain('id="inclusion-proof"');
  });

  it('catches a tree node edited behind the triggers: the verify endpoint names it, proofs fail, the signer stops and /health says so', async () => {
    const app = t!;
    const db = app.app.get(DatabaseService);
    if (dialect === 'sqlite') await db.unsafeQuery('DROP TRIGGER tree_nodes_no_update');
    else await db.unsafeQuery('ALTER TABLE tree_nodes DISABLE TRIGGER tree_nodes_no_update');
    // Node (3, 0) is the root of leaves 0..7: on the path of leaf 8 and in the root of every later tree.
    await db.unsafeQuery(dialect === 'sqlite' ? 'UPDATE tree_nodes SET hash = zeroblob(32) WHERE level = 3 AND idx = 0' : "UPDATE tree_nodes SET hash = decode(repeat('00', 32), 'hex') WHERE level = 3 AND idx = 0");
    const v = (await app.http.get('/api/ledger/verify')).body;
    expect(v.verdict).toBe('invalid');
    expect(v.first_failure).toBeNull(); // the chain itself is intact
    expect(v.tree.node_failure).toMatchObject({ level: 3, index: 0, reason: 'node_mismatch' });
    // A record whose proof uses that node is now "failed", never "proven".
    const first = (await db.query<{ id: string }>('SELECT id FROM receipts WHERE position = 9'))[0].id; // leaf 8: its path is node (3, 0)
    const loc = (await app.http.get(`/api/receipts/${first}/verify`)).body.log;
    expect(loc.status).toBe('failed');
    expect((await app.http.get(`/run/${first}`)).text).toContain('is NOT proven by the newest checkpoint');
    // The next checkpoint is refused: the stored tree disagrees with the leaves recomputed from the events.
    const signedBefore = (await app.http.get('/checkpoint')).text;
    await record(app);
    await app.app.get(CheckpointSigner).tick();
    expect((await app.http.get('/checkpoint')).text).toBe(signedBefore);
    const h = await app.http.get('/health');
    expect([h.status, h.body.status, h.body.details.log.status, h.body.details.log.signing]).toEqual([200, 'degraded', 'down', 'stopped']);
    // The signer's state file (the checkpoint of size 9 its key signed) catches it first: the stored tree's root at 9 is not the signed one.
    expect(h.body.details.log.reason_code).toBe('database_forks_from_checkpoint_state');
    expect(h.body.details.log.reason).toMatch(/the database's tree at size 9 has root \S+, but this log's key signed root \S+ at that size/);
    expect(h.body.details.log.checkpoint_state).toMatchObject({ size: 9 });
    expect(h.body.details.log.database.root_at_state_size).not.toBe(h.body.details.log.checkpoint_state.root);
    // Put the node back (the rest of this suite rewrites history instead).
    await db.unsafeQuery('DELETE FROM tree_nodes WHERE level = 3 AND idx = 0').catch(() => undefined);
  });

  it('a tree that lacks a node of its events refuses every write with 503 log_unavailable, and nothing is appended', async () => {
    const db3 = dialect === 'postgres' ? await createPgDatabase() : null;
    const e = { ...env(), DATABASE_URL: db3 ? db3.url : `sqlite:${join(dir, 'third.sqlite')}` };
    let a = await startApp(dialect, e);
    try {
      for (let i = 0; i < 3; i++) await record(a);
      const db = a.app.get(DatabaseService);
      if (dialect === 'sqlite') await db.unsafeQuery('DROP TRIGGER tree_nodes_no_delete');
      else await db.unsafeQuery('ALTER TABLE tree_nodes DISABLE TRIGGER tree_nodes_no_update'); // one trigger for UPDATE and DELETE on PostgreSQL
      // Leaf 2 is on the right edge of the 3-leaf tree: the next append must extend it.
      await db.unsafeQuery('DELETE FROM tree_nodes WHERE level = 0 AND idx = 2');
      // A restarted process (no tree kept in memory) reads the right edge from the database.
      await a.app.close();
      a = await startApp(dialect, e);
      const head = (await a.http.get('/api/ledger/head')).body.position as number;
      const r = freshReceipt();
      const res = await a.http.post('/api/receipts').set('Authorization', `Bearer ${a.keys.producer}`).set('Content-Type', 'application/json').send(r.text);
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('log_unavailable');
      expect(res.body.message).toContain("lacks tree node (0, 2) of the ledger's first 3 events");
      expect((await a.http.get('/api/ledger/head')).body.position).toBe(head);
      expect((await a.http.get(`/api/receipts/${r.id}`)).status).toBe(404);
    } finally {
      await a.app.close();
      await db3?.drop();
    }
  });

  it('a history rebuilt with recomputed hashes is caught by aer1 log monitor against its saved checkpoint', async () => {
    // A fresh start: a clean ledger of 6 events, a checkpoint, the monitor's first run (trust on first use).
    await t!.app.close();
    t = undefined;
    const db2 = dialect === 'postgres' ? await createPgDatabase() : null;
    const dbUrl = db2 ? db2.url : `sqlite:${join(dir, 'second.sqlite')}`;
    const e = { ...env(), DATABASE_URL: dbUrl };
    let a = await startApp(dialect, e);
    for (let i = 0; i < 6; i++) await record(a);
    await a.app.get(CheckpointSigner).tick();
    let base = await listen(a.app);
    const vkey = (await a.http.get('/.well-known/aer1')).body.log_vkey as string;
    const state = join(dir, `monitor-${dialect}.txt`);
    const first = await cli(['log', 'monitor', '--url', base, '--vkey', vkey, '--state', state]);
    expect(first.code).toBe(0);
    expect(first.out + first.err).toMatch(/on first use/i);
    const size = Number((await a.http.get('/checkpoint')).text.split('\n')[1]);
    await a.app.close();
    // The operator rewrites history behind the triggers: events after position 3 replaced by others, hashes recomputed.
    const raw = await startApp(dialect, e);
    const db = raw.app.get(DatabaseService);
    if (dialect === 'sqlite') {
      for (const tr of ['events_no_delete', 'tree_nodes_no_delete', 'checkpoints_no_delete']) await db.unsafeQuery(`DROP TRIGGER ${tr}`);
    } else {
      await db.unsafeQuery('ALTER TABLE events DISABLE TRIGGER events_no_update');
      await db.unsafeQuery('ALTER TABLE tree_nodes DISABLE TRIGGER tree_nodes_no_update');
      await db.unsafeQuery('ALTER TABLE checkpoints DISABLE TRIGGER checkpoints_no_update');
    }
    const keep = 3;
    await db.unsafeQuery('DELETE FROM checkpoints WHERE size > ?', [keep]);
    await db.unsafeQuery('DELETE FROM tree_nodes WHERE (idx + 1) * (1 << level) > ?', [keep]);
    await db.unsafeQuery('DELETE FROM receipts WHERE position > ?', [keep]);
    await db.unsafeQuery('DELETE FROM events WHERE position > ?', [keep]);
    await raw.app.close();
    // With the signer's state file in place the rebuilt ledger signs nothing and takes no write (issue 26).
    a = await startApp(dialect, e);
    const refused = await a.http.post('/api/receipts').set('Authorization', `Bearer ${a.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
    expect([refused.status, refused.body.error]).toEqual([503, 'log_unavailable']);
    expect((await a.http.get('/health')).body.details.log).toMatchObject({ signing: 'stopped', reason_code: 'database_behind_checkpoint_state', checkpoint_state: { size }, database: { size: keep } });
    await a.app.close();
    // The operator also removes the state file: the rebuilt ledger grows again to the same size with other events; its signer signs them (same key, same origin).
    const stateFile = dialect === 'sqlite' ? join(dir, 'second.log-signing.checkpoint') : testStateFile(dbUrl);
    expect(existsSync(stateFile)).toBe(true);
    rmSync(stateFile);
    a = await startApp(dialect, e);
    while (Number((await a.http.get('/api/ledger/head')).body.position) < size) await record(a);
    await a.app.get(CheckpointSigner).tick();
    expect(Number((await a.http.get('/checkpoint')).text.split('\n')[1])).toBe(size);
    base = await listen(a.app);
    const second = await cli(['log', 'monitor', '--url', base, '--vkey', vkey, '--state', state]);
    expect(second.code).toBe(1);
    expect(second.out).toMatch(/fork/i);
    await a.app.close();
    await db2?.drop();
  });
});
