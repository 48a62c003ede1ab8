/**
 * Tampering: rows of `events` changed directly in the database (append-only
 * triggers dropped or disabled first), on SQLite and PostgreSQL. Each change
 * must be caught by GET /api/ledger/verify and by `aer1 ledger verify
 * --database` (in process, and once as the real `bin/aer1` on PostgreSQL),
 * naming its position. A forger who recomputes every hash after an insertion
 * passes the chain check alone; the projection audit (the read models no
 * longer match the events) and a head published earlier catch it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ZERO_DIGEST } from '../../src/core/aer1';
import { run } from '../../src/cli/main';
import { eventHash, StoredEvent } from '../../src/core/ledger/event-hash';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { call, DirectDb, freshReceipt, listen, makeEntry, openDirect, requireBuild, withTimeout } from './helpers';

const EVENTS = 8;

/** `aer1 ledger verify --database <db> [--json]` in process. */
async function cli(database: string, json: boolean): Promise<{ code: number; out: string; err: string }> {
  const sink = (): Writable & { text: string } => {
    const w = new Writable({
      write(chunk: Buffer, _e, cb) {
        (w as unknown as { text: string }).text += chunk.toString();
        cb();
      },
    }) as Writable & { text: string };
    w.text = '';
    return w;
  };
  const stdout = sink();
  const stderr = sink();
  const code = await run(['ledger', 'verify', '--database', database, ...(json ? ['--json'] : [])], { stdout, stderr, stdin: Readable.from([]) });
  return { code, out: stdout.text, err: stderr.text };
}

/** The real binary, as an operator runs it. */
async function bin(database: string): Promise<{ code: number; out: string }> {
  requireBuild(join(__dirname, '../../dist/src/cli/main.js'));
  const child = spawn(process.execPath, [join(__dirname, '../../bin/aer1'), 'ledger', 'verify', '--database', database], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await withTimeout(new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? -1))), 30_000, 'aer1 ledger verify').finally(() => child.kill('SIGKILL'));
  return { code, out };
}

describe.each(DIALECTS)('tampering on %s', (dialect) => {
  jest.setTimeout(60_000);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-tamper-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh ledger of EVENTS events (receipts and timeline entries), its head, and a direct connection with the append-only triggers off. */
  async function ledger(name: string): Promise<{ t: TestApp; base: string; db: DirectDb; target: string; head: { position: number; event_hash: string }; close: () => Promise<void> }> {
    const file = join(dir, `${name}.sqlite`);
    const t = await startApp(dialect, dialect === 'sqlite' ? { DATABASE_URL: `sqlite:${file}` } : {});
    const base = await listen(t.app);
    for (let i = 0; i < EVENTS - 2; i++) expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text })).status).toBe(201);
    const e1 = makeEntry('job-t', 1, ZERO_DIGEST);
    expect((await call(base, 'POST', '/api/jobs/job-t/entries', { key: t.keys.producer, body: JSON.stringify(e1) })).status).toBe(201);
    expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text })).status).toBe(201);
    const head = (await call(base, 'GET', '/api/ledger/head')).body as { position: number; event_hash: string };
    expect(head.position).toBe(EVENTS);
    expect((await call(base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
    const target = dialect === 'sqlite' ? file : t.databaseUrl;
    const db = await openDirect(dialect === 'sqlite' ? `sqlite:${file}` : t.databaseUrl);
    if (dialect === 'sqlite') {
      await db.query('DROP TRIGGER events_no_update');
      await db.query('DROP TRIGGER events_no_delete');
    } else await db.query('ALTER TABLE events DISABLE TRIGGER events_no_update');
    return { t, base, db, target, head, close: async () => (await db.close(), await t.close()) };
  }

  const row = async (db: DirectDb, position: number): Promise<StoredEvent> => {
    const r = (await db.query<StoredEvent>('SELECT * FROM events WHERE position = ?', [position]))[0];
    return { ...r, position: Number(r.position), stream_position: Number(r.stream_position) };
  };

  /** Online and offline verification both fail at `position` for `reason`. */
  async function expectCaught(l: { base: string; target: string }, position: number, reason: string): Promise<void> {
    const online = (await call(l.base, 'GET', '/api/ledger/verify')).body;
    expect(online.ok).toBe(false);
    expect(online.first_failure).toMatchObject({ position, reason });
    const json = await cli(l.target, true);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, first_failure: { position, reason } });
    const text = await cli(l.target, false);
    expect(text.code).toBe(1);
    expect(text.out).toContain('DOES NOT VERIFY');
    expect(text.out).toContain(`first failure: position ${position} (${reason})`);
  }

  /** Move events at `from` and after by `by` positions (two steps, so the primary key never collides). */
  async function shift(db: DirectDb, from: number, by: number): Promise<void> {
    await db.query('UPDATE events SET position = position + 100000 WHERE position >= ?', [from]);
    await db.query('UPDATE events SET position = position - 100000 + ? WHERE position >= ?', [by, 100000 + from]);
  }

  it('an edited event (data, recorded_at, type or stream) is named by its position', async () => {
    const l = await ledger('edit');
    try {
      const e = await row(l.db, 4);
      await l.db.query('UPDATE events SET recorded_at = ? WHERE position = 4', [e.recorded_at.replace(/\.\d{3}Z$/, '.999Z')]);
      await expectCaught(l, 4, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET recorded_at = ? WHERE position = 4', [e.recorded_at]);
      await l.db.query('UPDATE events SET stream_id = ? WHERE position = 4', [`${e.stream_id}x`]);
      await expectCaught(l, 4, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET stream_id = ? WHERE position = 4', [e.stream_id]);
      const seven = await row(l.db, 7);
      expect(seven.type).toBe('TimelineEntryAppended');
      await l.db.query('UPDATE events SET type = ? WHERE position = 7', ['TimelineImported']);
      await expectCaught(l, 7, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET type = ? WHERE position = 7', [seven.type]);
      expect((await call(l.base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
      const d = await row(l.db, 2);
      await l.db.query('UPDATE events SET data = ? WHERE position = 2', [d.data.replace('"verdict":"valid"', '"verdict":"invalid"')]);
      // Format 3 (issue 29): the data is the payload the leaf commits to.
      await expectCaught(l, 2, 'payload_commitment_mismatch');
      await l.db.query('UPDATE events SET data = ?, payload_salt = ? WHERE position = 2', [d.data, 'ab'.repeat(32)]);
      await expectCaught(l, 2, 'payload_commitment_mismatch');
      await l.db.query("UPDATE events SET data = '', payload_salt = NULL WHERE position = 2");
      await expectCaught(l, 2, 'payload_missing');
      await l.db.query('UPDATE events SET payload_salt = ? WHERE position = 2', [d.payload_salt]);
      await l.db.query('UPDATE events SET data = ? WHERE position = 2', [d.data]);
      expect((await call(l.base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
      // A relinked event: its prev_hash no longer names its predecessor.
      await l.db.query('UPDATE events SET prev_hash = ? WHERE position = 6', ['f'.repeat(64)]);
      await expectCaught(l, 6, 'prev_hash_mismatch');
      if (dialect === 'postgres') {
        // The real binary on a PostgreSQL URL.
        const b = await bin(l.target);
        expect(b.code).toBe(1);
        expect(b.out).toContain('first failure: position 6 (prev_hash_mismatch)');
        expect(b.out).not.toMatch(/\n\s+at /);
      }
    } finally {
      await l.close();
    }
  });

  it('an event attributed to another key, or downgraded to the unattributed format, is named by its position', async () => {
    const l = await ledger('attribution');
    try {
      const e = await row(l.db, 3);
      expect([Number(e.format), e.key_name]).toEqual([3, 'test-producer']);
      await l.db.query('UPDATE events SET key_name = ? WHERE position = 3', ['test-admin']);
      await expectCaught(l, 3, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET key_name = ?, key_id = ? WHERE position = 3', [e.key_name, 'someone-else']);
      await expectCaught(l, 3, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET key_id = ?, format = 1 WHERE position = 3', [e.key_id]);
      await expectCaught(l, 3, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET format = 7 WHERE position = 3');
      await expectCaught(l, 3, 'bad_format');
      await l.db.query('UPDATE events SET format = 2, key_id = NULL WHERE position = 3');
      await expectCaught(l, 3, 'bad_format');
      await l.db.query('UPDATE events SET key_id = ?, format = 3 WHERE position = 3', [e.key_id]);
      expect((await call(l.base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
      // Format 3 (issue 29): the public ids and the stream's previous position are hashed too.
      await l.db.query('UPDATE events SET public_ids = ? WHERE position = 3', ['{}']);
      await expectCaught(l, 3, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET public_ids = ?, stream_prev = ? WHERE position = 3', [e.public_ids, Number(e.stream_prev) + 1]);
      await expectCaught(l, 3, 'event_hash_mismatch');
      await l.db.query('UPDATE events SET stream_prev = ? WHERE position = 3', [e.stream_prev]);
      expect((await call(l.base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
    } finally {
      await l.close();
    }
  });

  it('a deleted middle event is named as a position gap', async () => {
    const l = await ledger('delete');
    try {
      await l.db.query('DELETE FROM events WHERE position = 4');
      await expectCaught(l, 5, 'position_gap');
      const online = (await call(l.base, 'GET', '/api/ledger/verify')).body;
      expect(online.first_failure.detail).toBe('expected position 4, found 5');
      expect(online.checked).toBe(4);
    } finally {
      await l.close();
    }
  });

  it('a deleted middle event with the later ones renumbered is named by the broken link', async () => {
    const l = await ledger('delete-renumber');
    try {
      await l.db.query('DELETE FROM events WHERE position = 4');
      await shift(l.db, 5, -1);
      // Position 4 is now the old 5: its prev_hash names the deleted event.
      await expectCaught(l, 4, 'prev_hash_mismatch');
    } finally {
      await l.close();
    }
  });

  it('an inserted forged event is named at its position or the next', async () => {
    const l = await ledger('insert');
    try {
      const prev = await row(l.db, 3);
      await shift(l.db, 4, 1);
      // A forged receipt at position 4 with a well-formed, correctly hashed row linked to position 3.
      const forged = { position: 4, stream_id: `receipt:${freshReceipt().id}`, stream_position: 1, type: 'ReceiptRecorded', data: JSON.stringify({ forged: true }), recorded_at: prev.recorded_at, prev_hash: prev.event_hash };
      await l.db.query('INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
        ...Object.values(forged),
        eventHash(forged),
      ]);
      // It hashes correctly, so the break shows at the next event, which still links to the old position 3 (and moved).
      await expectCaught(l, 5, 'prev_hash_mismatch');
      // The same forgery with a made-up hash is named at its own position.
      await l.db.query('UPDATE events SET event_hash = ? WHERE position = 4', ['0'.repeat(64)]);
      await expectCaught(l, 4, 'event_hash_mismatch');
    } finally {
      await l.close();
    }
  });

  it('a forged event appended with a made-up hash is caught; a fully rehashed insertion passes the chain alone, not the projection audit nor a witnessed head', async () => {
    const l = await ledger('append');
    try {
      const last = await row(l.db, EVENTS);
      await l.db.query('INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
        EVENTS + 1,
        `receipt:${freshReceipt().id}`,
        1,
        'ReceiptRecorded',
        '{}',
        last.recorded_at,
        last.event_hash,
        'a'.repeat(64),
      ]);
      await expectCaught(l, EVENTS + 1, 'event_hash_mismatch');
      await l.db.query('DELETE FROM events WHERE position = ?', [EVENTS + 1]);
      expect((await call(l.base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);

      // A careful forger inserts at position 3 and recomputes every later hash: the chain alone verifies ...
      await shift(l.db, 3, 1);
      const p2 = await row(l.db, 2);
      const forged = { position: 3, stream_id: `receipt:${freshReceipt().id}`, stream_position: 1, type: 'ReceiptRecorded', data: '{"forged":true}', recorded_at: p2.recorded_at, prev_hash: p2.event_hash };
      let prevHash = eventHash(forged);
      await l.db.query('INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [...Object.values(forged), prevHash]);
      for (let p = 4; p <= EVENTS + 1; p++) {
        const e = await row(l.db, p);
        const fixed = { ...e, prev_hash: prevHash };
        prevHash = eventHash(fixed);
        await l.db.query('UPDATE events SET prev_hash = ?, event_hash = ? WHERE position = ?', [fixed.prev_hash, prevHash, p]);
      }
      const alone = await call(l.base, 'GET', '/api/ledger/verify');
      // The chain part verifies; the read models were built from the events before the forgery, and the
      // forged event is not one the projections can apply: the projection audit names it (409).
      expect(alone.status).toBe(409);
      expect(alone.body).toMatchObject({ ok: false, verdict: 'invalid', checked: EVENTS + 1, first_failure: null, projections: { ok: false, replay_failure: { position: 3, type: 'ReceiptRecorded' } } });
      const offline = await cli(l.target, true);
      expect(offline.code).toBe(1);
      expect(JSON.parse(offline.out)).toMatchObject({ ok: false, chain_ok: true, first_failure: null, projections: { ok: false, replay_failure: { position: 3 } } });
      // ... but the head published before the forgery no longer matches.
      const witnessed = (await call(l.base, 'GET', `/api/ledger/verify?head_position=${l.head.position}&head_hash=${l.head.event_hash}`)).body;
      expect(witnessed.ok).toBe(false);
      expect(witnessed.expected_head).toMatchObject({ ok: false });
      expect(witnessed.expected_head.detail).toContain(`position ${l.head.position} has hash`);
    } finally {
      await l.close();
    }
  });
});
