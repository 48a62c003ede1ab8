/**
 * Security review of erasure (issue 29), 2026-12-02, the hostile operator:
 * payloads cleared or restored in the database behind the ledger, a
 * PayloadsErased event's own payload cleared or its retained data forged,
 * an erasure cut half way, and read models rebuilt after erasures. Each must
 * be named by GET /api/ledger/verify and `aer1 ledger verify --database`
 * (never a 500 or a crash), and a rebuild must reproduce the read models
 * exactly. SQLite and PostgreSQL.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { run } from '../../src/cli/main';
import { payloadCommitment } from '../../src/core/ledger/event-hash';
import { EventsRepository } from '../../src/ledger/events.repository';
import { DIALECTS, expectNoPartialErasure, Ledger, payloadsErased, startLedger, verify } from './erasure-fixtures';
import { buildTimeline } from '../coverage/fixtures';
import { PAYMENT_STEPS } from '../outcomes/fixtures';
import { call, leaksInternals, requireBuild } from './helpers';

const WHY = { reason: 'customer request 4711', legal_basis: 'GDPR Art. 17(1)(a)' };

/** `aer1 ledger verify --database <db> --json` in process: exit code and the report. */
async function cli(database: string): Promise<{ code: number; report: { ok: boolean; first_failure: { position: number; reason: string } | null } | null; text: string }> {
  let out = '';
  let err = '';
  const sink = (f: (s: string) => void): Writable => new Writable({ write: (c: Buffer, _e, cb) => (f(c.toString()), cb()) });
  const code = await run(['ledger', 'verify', '--database', database, '--json'], { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)), stdin: Readable.from([]) });
  let report = null;
  try {
    report = JSON.parse(out);
  } catch {
    report = null;
  }
  return { code, report, text: out + err };
}

/** `npm run ledger -- rebuild-projections` on `databaseUrl` (the compiled CLI). */
function rebuild(databaseUrl: string): Promise<{ code: number; out: string }> {
  const js = join(__dirname, '../../dist/src/ledger-cli.js');
  requireBuild(js);
  return new Promise((resolve) => {
    execFile(process.execPath, [js, 'rebuild-projections'], { env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, timeout: 120_000 }, (e, stdout, stderr) => {
      resolve({ code: e ? (typeof (e as { code?: unknown }).code === 'number' ? (e as { code: number }).code : -1) : 0, out: String(stdout) + String(stderr) });
    });
  });
}

const READ_MODELS = ['receipts', 'timeline_entries', 'timelines', 'commitments', 'outcomes', 'erasures', 'erased_events'];

describe.each(DIALECTS)('erasure attacked by the operator on %s', (dialect) => {
  jest.setTimeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-erasure-operator-'));
  let n = 0;
  let l: Ledger;
  beforeEach(async () => {
    l = await startLedger(dialect, dir, `op${n++}`);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await l.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const positionOf = async (stream: string): Promise<number> => Number((await l.db.query<{ position: number }>('SELECT position FROM events WHERE stream_id = ? ORDER BY position LIMIT 1', [stream]))[0].position);
  const allowUpdates = async (): Promise<void> => {
    if (dialect === 'sqlite') await l.db.query('DROP TRIGGER events_no_update');
    else await l.db.query('ALTER TABLE events DISABLE TRIGGER events_no_update');
  };
  /** Online and offline verification both fail at `position` for `reason` (200 and exit 1, never a 500 or a crash). */
  async function expectCaught(position: number, reason?: string): Promise<void> {
    const v = await verify(l);
    expect([v.ok, v.first_failure?.position, reason === undefined ? undefined : v.first_failure?.reason]).toEqual([false, position, reason]);
    const c = await cli(l.target);
    expect([c.code, c.report?.ok, c.report?.first_failure?.position, reason === undefined ? undefined : c.report?.first_failure?.reason]).toEqual([1, false, position, reason]);
    expect(leaksInternals(c.text)).toBeNull();
  }

  it('a payload cleared behind the ledger (the update the trigger allows) is payload_missing, online and offline', async () => {
    const job = await l.execute('behind');
    const p = await positionOf(`receipt:${job.receiptIds[0]}`);
    await l.db.query("UPDATE events SET data = '', payload_salt = NULL WHERE position = ?", [p]);
    await expectCaught(p, 'payload_missing');
  });

  it('a plan payload cleared behind the ledger (a type that cannot be erased) is payload_missing', async () => {
    await l.execute('behind-plan');
    const p = Number((await l.db.query<{ position: number }>("SELECT position FROM events WHERE stream_id LIKE 'plan:%' ORDER BY position DESC LIMIT 1"))[0].position);
    await l.db.query("UPDATE events SET data = '', payload_salt = NULL WHERE position = ?", [p]);
    await expectCaught(p, 'payload_missing');
  });

  it('a salt removed with the data kept is payload_missing; data removed with the salt kept is payload_commitment_mismatch', async () => {
    const job = await l.execute('half');
    const [a, b] = [await positionOf(`receipt:${job.receiptIds[0]}`), await positionOf(`receipt:${job.receiptIds[1]}`)];
    await allowUpdates();
    await l.db.query('UPDATE events SET payload_salt = NULL WHERE position = ?', [b]);
    await expectCaught(b, 'payload_missing');
    await l.db.query("UPDATE events SET data = '' WHERE position = ?", [a]);
    await expectCaught(a, 'payload_commitment_mismatch');
  });

  it('an erased payload restored from a backup (data and salt put back) does not verify silently', async () => {
    const job = await l.execute('restored');
    const p = await positionOf(`receipt:${job.receiptIds[0]}`);
    const kept = (await l.db.query<{ data: string; payload_salt: string }>('SELECT data, payload_salt FROM events WHERE position = ?', [p]))[0];
    expect((await l.erase({ receipt_ids: [job.receiptIds[0]], ...WHY })).status).toBe(201);
    expect((await verify(l)).ok).toBe(true);
    await allowUpdates();
    await l.db.query('UPDATE events SET data = ?, payload_salt = ? WHERE position = ?', [kept.data, kept.payload_salt, p]);
    // The PayloadsErased event says this payload is gone: content served again is an erasure undone behind the ledger.
    await expectCaught(p);
  });

  it("a PayloadsErased event's own payload cleared behind the ledger: verify answers 409 payload_missing (not 500), the CLI exits 1, pages do not 500", async () => {
    const job = await l.execute('erasure-cleared');
    const e = await l.erase({ receipt_ids: [job.receiptIds[0]], ...WHY });
    expect(e.status).toBe(201);
    await l.db.query("UPDATE events SET data = '', payload_salt = NULL WHERE position = ?", [e.body.erasure_position]);
    await expectCaught(Math.min(...(e.body.positions as number[])), 'payload_missing');
    for (const path of [`/run/${job.receiptIds[0]}`, `/api/receipts/${job.receiptIds[0]}/verify`, `/api/erasures/${e.body.erasure_id}`]) {
      const r = await l.get(path);
      expect([path, r.status < 500, leaksInternals(r.text)]).toEqual([path, true, null]);
    }
  });

  it("a PayloadsErased event's retained data forged (recorded verdict flipped) is payload_commitment_mismatch; with the commitment recomputed, event_hash_mismatch", async () => {
    const job = await l.execute('forged');
    const e = await l.erase({ job_ids: ['forged'], ...WHY });
    expect(e.status).toBe(201);
    const row = (await l.db.query<{ data: string; payload_salt: string }>('SELECT data, payload_salt FROM events WHERE position = ?', [e.body.erasure_position]))[0];
    const forged = row.data.replace(/"verdict":"valid"/g, '"verdict":"invalid"').replace(/"positions":\[/, `"positions":[${e.body.erasure_position - 1},`);
    expect(forged).not.toBe(row.data);
    await allowUpdates();
    await l.db.query('UPDATE events SET data = ? WHERE position = ?', [forged, e.body.erasure_position]);
    await expectCaught(e.body.erasure_position, 'payload_commitment_mismatch');
    await l.db.query('UPDATE events SET payload_commitment = ? WHERE position = ?', [payloadCommitment(Buffer.from(row.payload_salt, 'hex'), forged), e.body.erasure_position]);
    await expectCaught(e.body.erasure_position, 'event_hash_mismatch');
    expect(job.receiptIds.length).toBe(2);
  });

  it('an erasure cut half way (the payload update fails) leaves nothing: no PayloadsErased event, every payload held; the retry succeeds', async () => {
    const job = await l.execute('cut');
    const events = l.t.app.get(EventsRepository);
    jest.spyOn(events, 'erasePayloads').mockRejectedValueOnce(new Error('disk full'));
    const r = await l.erase({ job_ids: ['cut'], ...WHY });
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(leaksInternals(r.text)).toBeNull();
    expect(await payloadsErased(l.db)).toEqual([]);
    await expectNoPartialErasure(l.db);
    expect((await l.get(`/api/receipts/${job.receiptIds[0]}`, l.t.keys.auditor)).body.raw).not.toBe('');
    const again = await l.erase({ job_ids: ['cut'], ...WHY });
    expect(again.status).toBe(201);
    await expectNoPartialErasure(l.db);
    expect((await verify(l)).ok).toBe(true);
  });

  it('rebuild-projections after erasures reproduces every read model exactly, and the projection audit passes', async () => {
    const a = await l.execute('rebuild-a');
    await l.execute('rebuild-b');
    await l.openJob('rebuild-open', 3);
    // An imported timeline (JSON array) and one imported as NDJSON: their retained entries are parsed from the erased text.
    const imported = buildTimeline('rebuild-import', PAYMENT_STEPS);
    expect((await call(l.base, 'PUT', '/api/jobs/rebuild-import/timeline', { key: l.t.keys.producer, body: JSON.stringify(imported) })).status).toBe(201);
    const nd = buildTimeline('rebuild-ndjson', PAYMENT_STEPS);
    const ndPut = await call(l.base, 'PUT', '/api/jobs/rebuild-ndjson/timeline', { key: l.t.keys.producer, body: nd.map((e) => JSON.stringify(e)).join('\n') + '\n', contentType: 'application/x-ndjson' });
    expect(ndPut.status).toBe(201);
    expect((await l.erase({ receipt_ids: [a.receiptIds[0]], ...WHY })).status).toBe(201);
    expect((await l.erase({ job_ids: ['rebuild-b', 'rebuild-open', 'rebuild-import', 'rebuild-ndjson'], ...WHY })).status).toBe(201);
    expect((await l.erase({ job_ids: ['rebuild-a'], ...WHY })).status).toBe(201);
    const snapshot = async (): Promise<Record<string, string[]>> => {
      const out: Record<string, string[]> = {};
      for (const t of READ_MODELS) out[t] = (await l.db.query<Record<string, unknown>>(`SELECT * FROM ${t}`)).map((r) => JSON.stringify(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)]))).sort();
      return out;
    };
    const before = await snapshot();
    expect(before.erased_events.length).toBeGreaterThan(10);
    const r = await rebuild(l.target.startsWith('postgres') ? l.target : `sqlite:${l.target}`);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('rebuilt')]);
    expect(await snapshot()).toEqual(before);
    const v = await verify(l);
    expect([v.ok, (v.projections as { ok: boolean }).ok]).toEqual([true, true]);
    expect((await cli(l.target)).code).toBe(0);
  });
});
