/**
 * The checkpoint signer recomputes new leaves in a worker thread with its own
 * read connection (SQLite file, PostgreSQL), and on the event loop for an
 * in-memory SQLite database. Both give the same tree as the reference
 * (test/reference/rfc6962.ts) over the events' hash inputs, and both stop the
 * signer, naming the event, when an event was altered behind the triggers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { LeafRecomputer } from '../../src/log/leaf-recomputer';
import { eventHashInput, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import { TreeIntegrator } from '../../src/core/tlog';
import { MTH } from '../reference/rfc6962';
import { createPgDatabase, DIALECTS, startApp, TestApp, testSigningKeyFile } from '../helpers/app';
import { freshReceipt } from '../reliability/helpers';

type Where = 'file' | 'memory' | 'server';
const CASES: [string, Where][] = DIALECTS.flatMap((d): [string, Where][] => (d === 'sqlite' ? [['sqlite', 'file'], ['sqlite', 'memory']] : [['postgres', 'server']]));

describe.each(CASES)('checkpoint signer leaf recomputation on %s (%s)', (dialect, where) => {
  jest.setTimeout(60_000);
  let dir: string;
  let t: TestApp;
  let drop: (() => Promise<void>) | undefined;
  const expectedMode = where === 'memory' ? 'event-loop' : 'worker';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-leaf-worker-'));
    let url = where === 'memory' ? 'sqlite::memory:' : `sqlite:${join(dir, 'ledger.sqlite')}`;
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      drop = db.drop;
    }
    t = await startApp(dialect as 'sqlite' | 'postgres', { DATABASE_URL: url, ...(dialect === 'postgres' ? { LEDGER_SIGNING_KEY_FILE: testSigningKeyFile() } : {}) });
  });
  afterAll(async () => {
    await t?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  async function record(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const res = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
      expect(res.status).toBe(201);
    }
  }

  async function events(): Promise<StoredEvent[]> {
    const rows = await t.app.get(DatabaseService).query<StoredEvent>('SELECT * FROM events ORDER BY position');
    return rows.map((r) => ({ ...r, position: Number(r.position), stream_position: Number(r.stream_position), format: Number(r.format ?? 1) as 1 | 2 }));
  }

  it(`runs in the ${expectedMode === 'worker' ? 'worker thread' : 'event loop'} and signs the reference root, in two steps`, async () => {
    const signer = t.app.get(CheckpointSigner);
    const leaves = (signer as unknown as { leaves: LeafRecomputer }).leaves;
    expect(leaves.mode).toBe(expectedMode);
    await record(5);
    await signer.tick();
    await record(6);
    await signer.tick();
    const evs = await events();
    const cp = (await t.http.get('/checkpoint/latest')).text.split('\n');
    expect(Number(cp[1])).toBe(evs.length);
    expect(cp[2]).toBe(MTH(evs.map((e) => Buffer.from(eventHashInput(e), 'latin1'))).toString('base64'));
    expect(signer.state().signing).toBe('active');
  });

  it('answers like the in-thread recomputation for any range (edge, root, head hash)', async () => {
    const evs = await events();
    const db = t.app.get(DatabaseService);
    const here = new LeafRecomputer(null, db);
    const there = new LeafRecomputer(db.connectionTarget, db);
    try {
      for (const from of [0, 1, 4, evs.length - 1]) {
        const before = TreeIntegrator.empty();
        before.appendLeaves(evs.slice(0, from).map((e) => Buffer.from(eventHashInput(e), 'latin1')));
        const req = { from, to: evs.length, edge: before.edgeHashes(), prevHash: from === 0 ? LEDGER_GENESIS_HASH : evs[from - 1].event_hash };
        const a = await here.recompute(req);
        const b = await there.recompute(req);
        expect(b).toEqual(a);
        expect(a).toMatchObject({ ok: true, size: evs.length, headHash: evs[evs.length - 1].event_hash });
        if (a.ok) expect(a.root.equals(MTH(evs.map((e) => Buffer.from(eventHashInput(e), 'latin1'))))).toBe(true);
      }
      // A wrong head hash is a broken link, named.
      const bad = await there.recompute({ from: 0, to: evs.length, edge: [], prevHash: 'f'.repeat(64) });
      expect(bad).toEqual({ ok: false, reason: 'event 1 does not link to event 0 (prev_hash differs)' });
    } finally {
      await there.close();
    }
  });

  it('stops the signer, naming the event, when an event was altered behind the triggers', async () => {
    const db = t.app.get(DatabaseService);
    await record(2);
    const last = (await events()).at(-1)!;
    if (dialect === 'sqlite') await db.unsafeQuery('DROP TRIGGER events_no_update');
    else await db.unsafeQuery('ALTER TABLE events DISABLE TRIGGER events_no_update');
    await db.unsafeQuery(`UPDATE events SET recorded_at = '2001-01-01T00:00:00.000Z' WHERE position = ${last.position}`);
    const signer = t.app.get(CheckpointSigner);
    const before = (await t.http.get('/checkpoint/latest')).text;
    await signer.tick();
    expect((await t.http.get('/checkpoint/latest')).text).toBe(before);
    expect(signer.state()).toMatchObject({ signing: 'stopped', reason: `event ${last.position} does not match its stored event_hash: it was altered` });
  });
});

/** Found by an attacker's review: a worker whose database was unreachable, or never answers. */
(DIALECTS.includes('postgres') ? describe : describe.skip)('leaf worker faults on postgres', () => {
  jest.setTimeout(60_000);

  it('recovers once the database answers, after its first connection was refused; /health says why meanwhile', async () => {
    const t = await startApp('postgres', { LEDGER_SIGNING_KEY_FILE: testSigningKeyFile() });
    const piped: net.Socket[] = [];
    const proxy = net.createServer((s) => {
      const u = net.connect(5432, '127.0.0.1');
      piped.push(s, u);
      s.pipe(u).pipe(s);
      s.on('error', () => u.destroy());
      u.on('error', () => s.destroy());
    });
    // A port nobody listens on yet; later a plain TCP proxy to the database on it.
    const free = net.createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', () => r()));
    const port = (free.address() as net.AddressInfo).port;
    await new Promise<void>((r) => free.close(() => r()));
    const signer = t.app.get(CheckpointSigner);
    const own = signer as unknown as { leaves: LeafRecomputer };
    await signer.tick(); // the boot run ends first
    const signed = signer.state().checkpoint_size;
    const before = own.leaves;
    await before.close(); // the app's own (its worker may have started at boot): the app closes only the one it holds
    own.leaves = new LeafRecomputer({ dialect: 'postgres', url: t.databaseUrl.replace('127.0.0.1:5432', `127.0.0.1:${port}`) }, t.app.get(DatabaseService));
    try {
      const res = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
      expect(res.status).toBe(201);
      await signer.tick();
      expect(signer.state()).toMatchObject({ signing: 'active', checkpoint_size: signed, last_error: { message: expect.stringMatching(/ECONNREFUSED/) } });
      const h = (await t.http.get('/health')).body;
      expect([h.status, h.details.log.status, h.details.log.last_error.message]).toEqual(['degraded', 'down', expect.stringMatching(/ECONNREFUSED/)]);
      await new Promise<void>((r) => proxy.listen(port, '127.0.0.1', () => r()));
      await signer.tick();
      const st = signer.state();
      expect([st.signing, st.checkpoint_size, st.last_error]).toEqual(['active', Number((await t.http.get('/checkpoint/latest')).text.split('\n')[1]), undefined]);
      expect(st.checkpoint_size).toBeGreaterThan(0);
      expect((await t.http.get('/health')).body.details.log.status).toBe('up');
    } finally {
      for (const x of piped) x.destroy();
      await new Promise<void>((r) => proxy.close(() => r()));
      await t.close();
    }
  });

  it('shuts down while its worker waits on a database that never answers', async () => {
    const socks: net.Socket[] = [];
    const hole = net.createServer((s) => void socks.push(s)); // accepts, never answers
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', () => r()));
    const port = (hole.address() as net.AddressInfo).port;
    const t = await startApp('postgres', { LEDGER_SIGNING_KEY_FILE: testSigningKeyFile() });
    const signer = t.app.get(CheckpointSigner);
    const own = signer as unknown as { leaves: LeafRecomputer };
    await signer.tick(); // the boot run ends first
    const signed = signer.state().checkpoint_size;
    await own.leaves.close(); // the app's own (its worker may have started at boot); the app closes only the one it holds
    own.leaves = new LeafRecomputer({ dialect: 'postgres', url: `postgres://postgres@127.0.0.1:${port}/x` }, t.app.get(DatabaseService));
    const res = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(freshReceipt().text);
    expect(res.status).toBe(201);
    const run = signer.tick();
    await new Promise((r) => setTimeout(r, 300));
    try {
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([t.close().then(() => 'closed'), new Promise((r) => (timer = setTimeout(() => r('hung'), 8000)))]);
      clearTimeout(timer);
      expect(closed).toBe('closed');
      await run; // the run waiting on the worker ended with it (logged, nothing signed)
      expect(signer.state()).toMatchObject({ checkpoint_size: signed, last_error: { message: expect.stringMatching(/leaf worker exited/) } });
    } finally {
      for (const s of socks) s.destroy();
      await new Promise<void>((r) => hole.close(() => r()));
    }
  });
});
