/**
 * The signer's state file (issue 26), on SQLite (a file, the key and state
 * beside it) and PostgreSQL (a key file and LEDGER_CHECKPOINT_STATE_FILE):
 * a database restored from an older backup, or holding another history,
 * gets no checkpoint signed and takes no write, and /health shows both
 * sizes and roots; the normal restart, a state file ahead of the stored
 * checkpoints but within the database, and two processes sharing one state
 * file go on signing; an absent state file is rebuilt from the newest
 * stored checkpoint; an unusable one stops signing and is left as it is.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { checkpointNoteText, parseVerifierKey, signNote, verifyCheckpoint } from '../../src/core/tlog';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { defaultCheckpointStatePath, SIGNER_STATE_FORMAT } from '../../src/log/checkpoint-state';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { createSigningKeyFile, readSigningKeyFile } from '../../src/log/log-key';
import { LogService } from '../../src/log/log.service';
import { createPgDatabase, DIALECTS, PG_ADMIN_URL, startApp, TestApp } from '../helpers/app';
import { freshReceipt } from '../reliability/helpers';

describe.each(DIALECTS)('checkpoint state file on %s', (dialect) => {
  jest.setTimeout(120_000);
  let dir: string;
  const drops: (() => Promise<void>)[] = [];
  const apps: TestApp[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-signer-state-'));
  });
  afterAll(async () => {
    for (const a of apps) await a.app.close().catch(() => undefined);
    for (const d of drops) await d();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh log: its database URL, and the env that starts it (SQLite: key and state beside the file; PostgreSQL: a key file and a state file). */
  async function freshLog(name: string): Promise<{ url: string; env: Record<string, string>; stateFile: string; keyFile: string }> {
    if (dialect === 'sqlite') {
      const file = join(dir, `${name}.sqlite`);
      return { url: `sqlite:${file}`, env: { DATABASE_URL: `sqlite:${file}` }, stateFile: join(dir, `${name}.log-signing.checkpoint`), keyFile: join(dir, `${name}.log-signing.key`) };
    }
    const db = await createPgDatabase();
    drops.push(db.drop);
    const keyFile = join(dir, `${name}.key`);
    createSigningKeyFile(keyFile, 'ledger.test');
    const stateFile = join(dir, `${name}.checkpoint`);
    return { url: db.url, env: { DATABASE_URL: db.url, LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_CHECKPOINT_STATE_FILE: stateFile }, stateFile, keyFile };
  }

  async function start(env: Record<string, string>): Promise<TestApp> {
    const a = await startApp(dialect, env);
    apps.push(a);
    return a;
  }

  async function close(a: TestApp): Promise<void> {
    await a.app.close();
    apps.splice(apps.indexOf(a), 1);
  }

  async function record(a: TestApp, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const res = await a.http.post('/api/receipts').set('Authorization', `Bearer ${a.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
      expect(res.status).toBe(201);
    }
  }

  const head = async (a: TestApp): Promise<number> => Number((await a.http.get('/api/ledger/head')).body.position);
  const maxCheckpoint = async (a: TestApp): Promise<number> => Number((await a.app.get(DatabaseService).query<{ n: number | string | null }>('SELECT MAX(size) AS n FROM checkpoints'))[0].n ?? -1);
  const rootAt = async (a: TestApp, size: number): Promise<string> => (await a.app.get(LogService).rootAt(size)).toString('base64');
  const state = (file: string): { format: string; size: number; root_hash: string; note: string } => JSON.parse(readFileSync(file, 'utf8'));

  /** A copy of the log's database as it is now (the app on it closed): a file copy, or a PostgreSQL database made from it as a template. */
  async function snapshot(url: string, name: string): Promise<string> {
    if (dialect === 'sqlite') {
      const file = url.slice('sqlite:'.length);
      const copy = join(dir, `${name}.snapshot`);
      copyFileSync(file, copy);
      for (const ext of ['-wal', '-shm']) if (existsSync(file + ext)) copyFileSync(file + ext, copy + ext);
      return copy;
    }
    const db = `aer1_snap_${Math.random().toString(16).slice(2, 10)}`;
    const c = new Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`CREATE DATABASE ${db} TEMPLATE ${url.replace(/^.*\//, '')}`);
    await c.end();
    drops.push(async () => {
      const d = new Client({ connectionString: PG_ADMIN_URL });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await d.end();
    });
    return PG_ADMIN_URL.replace(/\/[^/]*$/, `/${db}`);
  }

  /** Put the snapshot back as the log's database (SQLite: the file replaced; PostgreSQL: the copy is the restored database). Returns the env to start on it. */
  function restore(env: Record<string, string>, snap: string): Record<string, string> {
    if (dialect === 'postgres') return { ...env, DATABASE_URL: snap };
    const file = env.DATABASE_URL.slice('sqlite:'.length);
    for (const ext of ['-wal', '-shm']) rmSync(file + ext, { force: true });
    copyFileSync(snap, file);
    for (const ext of ['-wal', '-shm']) if (existsSync(snap + ext)) copyFileSync(snap + ext, file + ext);
    return env;
  }

  it('a database restored from a copy taken at 7, after 12 were signed: nothing beyond is signed, writes are refused, /health shows both sizes and roots; then another history grown past 12 is refused too', async () => {
    const log = await freshLog('restored');
    let a = await start(log.env);
    await record(a, 7);
    await a.app.get(CheckpointSigner).tick();
    const root7 = await rootAt(a, 7);
    await close(a);
    const snap = await snapshot(log.url, 'restored-at-7');
    a = await start(log.env);
    await record(a, 5);
    await a.app.get(CheckpointSigner).tick();
    expect(await maxCheckpoint(a)).toBe(12);
    const root12 = await rootAt(a, 12);
    const signed12 = (await a.http.get('/checkpoint/latest')).text;
    expect(state(log.stateFile)).toEqual({ format: SIGNER_STATE_FORMAT, origin: 'ledger.test', size: 12, root_hash: root12, note: signed12 });
    await close(a);

    // The restored database (7 events, newest checkpoint 7), the same key and state file.
    const restoredEnv = restore(log.env, snap);
    a = await start(restoredEnv);
    expect(await head(a)).toBe(7);
    const h = await a.http.get('/health');
    expect([h.status, h.body.status, h.body.details.log.status]).toEqual([200, 'degraded', 'down']);
    expect(h.body.details.log).toMatchObject({
      signing: 'stopped',
      reason_code: 'database_behind_checkpoint_state',
      checkpoint_state: { size: 12, root: root12 },
      database: { size: 7, root: root7 },
    });
    expect(h.body.details.log.reason).toContain('the database holds 7 events but this log\'s key signed a checkpoint of size 12');
    // An anonymous answer: the checkpoint kept, never where the state file lives.
    expect(h.body.details.log.checkpoint_state).toEqual({ size: 12, root: root12 });
    expect(h.text.includes(log.stateFile)).toBe(false);
    // Writes are refused (nothing acknowledged that the restored backup would lose), and nothing is signed.
    const w = await a.http.post('/api/receipts').set('Authorization', `Bearer ${a.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
    expect([w.status, w.body.error]).toEqual([503, 'log_unavailable']);
    expect(w.body.message).toMatch(/checkpoint signing is stopped and writes are refused: the database holds 7 events/);
    await a.app.get(CheckpointSigner).tick();
    expect(await head(a)).toBe(7);
    expect(await maxCheckpoint(a)).toBe(7);
    expect(state(log.stateFile).size).toBe(12);
    await close(a);

    // Another history written into the restored database by a process that cannot sign it (a key of another origin, its own state):
    // 8 other events, past the signed 12.
    const otherKey = join(dir, `other-${dialect}.key`);
    createSigningKeyFile(otherKey, 'other.test');
    a = await start({ ...restoredEnv, LEDGER_SIGNING_KEY_FILE: otherKey, LEDGER_CHECKPOINT_STATE_FILE: join(dir, `other-${dialect}.checkpoint`) });
    expect(a.app.get(CheckpointSigner).state()).toMatchObject({ signing: 'stopped', reason_code: 'stored_checkpoint_invalid' });
    await record(a, 8);
    await close(a);
    a = await start(restoredEnv);
    expect(await head(a)).toBe(15);
    const f = (await a.http.get('/health')).body.details.log;
    expect(f).toMatchObject({
      signing: 'stopped',
      reason_code: 'database_forks_from_checkpoint_state',
      checkpoint_state: { size: 12, root: root12 },
      database: { size: 15, root: await rootAt(a, 15), root_at_state_size: await rootAt(a, 12) },
    });
    expect(f.database.root_at_state_size).not.toBe(root12);
    expect(f.checkpoint_state).toEqual({ size: 12, root: root12 });
    await a.app.get(CheckpointSigner).tick();
    expect(await maxCheckpoint(a)).toBe(7);
    expect((await a.http.post('/api/receipts').set('Authorization', `Bearer ${a.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text)).status).toBe(503);
    expect(state(log.stateFile).size).toBe(12);
    await close(a);
  });

  it('the normal restart signs on; a state file ahead of the stored checkpoints but within the database (a crash between the two) is fine', async () => {
    const log = await freshLog('normal');
    let a = await start(log.env);
    expect(a.app.get(LogIdentityService).current!.statePath).toBe(log.stateFile);
    if (dialect === 'sqlite') expect(log.stateFile).toBe(defaultCheckpointStatePath(log.keyFile));
    await record(a, 4);
    await a.app.get(CheckpointSigner).tick();
    await close(a);
    a = await start(log.env);
    expect((await a.http.get('/health')).body.status).toBe('ok');
    await record(a, 3);
    await a.app.get(CheckpointSigner).tick();
    expect(await maxCheckpoint(a)).toBe(7);
    expect(state(log.stateFile).size).toBe(7);
    // The signer wrote the state for 10 and was killed before storing the checkpoint: the state is ahead of the database's checkpoints.
    await record(a, 3);
    const root10 = await rootAt(a, 10);
    await close(a);
    const { signer } = readSigningKeyFile(log.keyFile);
    const note = signNote(checkpointNoteText({ origin: 'ledger.test', size: 10, rootHash: Buffer.from(root10, 'base64'), extensions: [] }), [signer]);
    writeFileSync(log.stateFile, JSON.stringify({ format: SIGNER_STATE_FORMAT, origin: 'ledger.test', size: 10, root_hash: root10, note }) + '\n');
    a = await start(log.env);
    expect(a.app.get(CheckpointSigner).state().signing).toBe('active');
    await a.app.get(CheckpointSigner).tick();
    expect(await maxCheckpoint(a)).toBe(10);
    expect((await a.http.get('/checkpoint/latest')).text).toBe(note); // Ed25519 is deterministic: the same checkpoint, the same note
    await record(a, 2);
    await a.app.get(CheckpointSigner).tick();
    expect(state(log.stateFile).size).toBe(12);
    expect((await a.http.get('/health')).body.status).toBe('ok');
    await close(a);
  });

  it('two processes sharing one state file (one key file, one database) never stop each other', async () => {
    const log = await freshLog('shared');
    const a = await start(log.env);
    const b = await start(log.env);
    const sa = a.app.get(CheckpointSigner);
    const sb = b.app.get(CheckpointSigner);
    for (let round = 0; round < 4; round++) {
      await record(round % 2 ? a : b, 2);
      await (round % 2 ? sb : sa).tick(); // the other one signs: each often finds the state ahead of its own view
      await record(a, 1);
      await Promise.all([sa.tick(), sb.tick()]);
    }
    for (const s of [sa, sb]) {
      expect(s.state()).toMatchObject({ signing: 'active' });
      expect(s.state().last_error).toBeUndefined();
    }
    expect(await maxCheckpoint(a)).toBe(12);
    expect(state(log.stateFile).size).toBe(12);
    expect(verifyCheckpoint(state(log.stateFile).note, [parseVerifierKey(a.app.get(LogIdentityService).current!.vkey)], 'ledger.test').checkpoint.rootHash.toString('base64')).toBe(await rootAt(a, 12));
    await close(b);
    await close(a);
  });

  it('an absent state file on an existing log is rebuilt from the newest stored checkpoint; an unusable one stops signing and is left as it is', async () => {
    const log = await freshLog('absent');
    let a = await start(log.env);
    await record(a, 5);
    await a.app.get(CheckpointSigner).tick();
    const note5 = (await a.http.get('/checkpoint/latest')).text;
    await close(a);
    rmSync(log.stateFile);
    a = await start(log.env);
    expect(state(log.stateFile)).toMatchObject({ size: 5, note: note5 });
    await record(a, 1);
    await a.app.get(CheckpointSigner).tick();
    expect(state(log.stateFile).size).toBe(6);
    await close(a);

    for (const bad of ['{"format":"aer1-log-signer-state/v1","size":', JSON.stringify({ ...state(log.stateFile), size: 7 })]) {
      writeFileSync(log.stateFile, bad);
      a = await start(log.env);
      const h = (await a.http.get('/health')).body;
      expect(h.status).toBe('degraded');
      expect(h.details.log).toMatchObject({ signing: 'stopped', reason_code: 'checkpoint_state_unusable', checkpoint_state: null });
      // Named by its role in this anonymous answer, never by its path (the server's log line has the path).
      expect(h.details.log.reason).toMatch(/^the signer's state file is unusable: /);
      expect(h.details.log.reason).not.toContain(log.stateFile);
      // Not a database fault: writes go on, nothing is signed, the file is not replaced.
      await record(a, 1);
      await a.app.get(CheckpointSigner).tick();
      expect(await maxCheckpoint(a)).toBe(6);
      expect(readFileSync(log.stateFile, 'utf8')).toBe(bad);
      await close(a);
    }
  });
});

