/**
 * Crash: the compiled server is killed with SIGKILL in the middle of a bulk
 * ingestion (concurrent single POSTs and NDJSON batches of 25 and 400 fresh receipts),
 * restarted on the same database, and every acknowledged receipt must be
 * there and verify, the ledger chain must verify, and no request may be half
 * written (each request's receipts are all present or all absent; events
 * equal the receipts projection).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { adminKey, call, countOf, freshReceipt, killAll, openDirect, pool, requireBuild, ServerProcess, waitUntil, withTimeout } from './helpers';

interface Sent {
  kind: 'single' | 'batch';
  ids: string[];
  acked: boolean;
}

const CLIENTS = 8;
const BATCH = 25;
const BIG_BATCH = 400;
const KILL_AFTER_ACKED = 600;

describe.each(DIALECTS)('crash: SIGKILL in the middle of bulk ingestion on %s', (dialect) => {
  jest.setTimeout(150_000);
  let dir: string;
  let databaseUrl: string;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'aer1-crash-'));
    if (dialect === 'sqlite') databaseUrl = `sqlite:${join(dir, 'ledger.sqlite')}`;
    else ({ url: databaseUrl, drop } = await createPgDatabase());
  });
  afterAll(async () => {
    await killAll();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged receipt, verifiable, and never half-writes a request', async () => {
    const admin = adminKey();
    const env = { DATABASE_URL: databaseUrl, LEDGER_ADMIN_KEY: admin, LOG_LEVEL: 'warn', VERIFY_RATE_LIMIT: '1000000' };
    const first = await ServerProcess.start(env);
    const created = await call(first.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name: 'crash-producer', role: 'producer' }) });
    expect(created.status).toBe(201);
    const producer = created.body.key as string;

    const sent: Sent[] = [];
    const unexpected: string[] = [];
    let stop = false;
    let acked = 0;
    let inFlight = 0;
    let inFlightAtKill = -1;

    const client = async (c: number): Promise<void> => {
      for (let k = 0; !stop && k < 5000; k++) {
        // Client 0 sends large batches (a long transaction is likely open at the kill); the others mix
        // batches of 25 with single receipts.
        const batch = c === 0 || (k + c) % 3 === 0;
        const size = c === 0 ? BIG_BATCH : batch ? BATCH : 1;
        const receipts = Array.from({ length: size }, freshReceipt);
        const s: Sent = { kind: batch ? 'batch' : 'single', ids: receipts.map((r) => r.id), acked: false };
        sent.push(s);
        inFlight++;
        try {
          const r = batch
            ? await call(first.url, 'POST', '/api/receipts/batch', { key: producer, body: receipts.map((x) => x.text).join('\n'), contentType: 'application/x-ndjson' })
            : await call(first.url, 'POST', '/api/receipts', { key: producer, body: receipts[0].text });
          const ok = batch
            ? r.status === 200 && r.body?.accepted === size && (r.body.results as { status: number; id: string }[]).every((x, i) => x.status === 201 && x.id === s.ids[i])
            : r.status === 201 && r.body?.id === s.ids[0];
          if (ok) {
            s.acked = true;
            acked += s.ids.length;
          } else if (!stop) unexpected.push(`${s.kind}: ${r.status} ${r.text.slice(0, 300)}`);
        } catch (e) {
          // Only requests cut by the kill may fail.
          if (!stop) unexpected.push(`${s.kind}: ${e instanceof Error ? e.message : String(e)}`);
          return;
        } finally {
          inFlight--;
        }
      }
    };

    const started = Date.now();
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    await waitUntil(`${KILL_AFTER_ACKED} acknowledged receipts`, 60_000, () => acked >= KILL_AFTER_ACKED || unexpected.length > 0, 5);
    expect(unexpected).toEqual([]);
    inFlightAtKill = inFlight;
    stop = true;
    await first.kill();
    await withTimeout(Promise.all(clients), 30_000, 'clients to stop');
    expect(unexpected).toEqual([]);
    // The kill really was mid-stream: requests were on the wire.
    expect(inFlightAtKill).toBeGreaterThan(0);
    const ackedSent = sent.filter((s) => s.acked);
    const unacked = sent.filter((s) => !s.acked);
    expect(unacked.length).toBeGreaterThan(0);

    // Restart on the same database.
    const second = await ServerProcess.start(env);
    const ackedIds = ackedSent.flatMap((s) => s.ids);
    expect(ackedIds.length).toBe(acked);

    // Every acknowledged receipt is present and verifies.
    const failures: string[] = [];
    await pool(ackedIds, 8, async (id) => {
      const r = await call(second.url, 'GET', `/api/receipt/${id}/verify`);
      if (r.status !== 200 || r.body?.verdict !== 'valid') failures.push(`${id}: ${r.status} ${r.text.slice(0, 200)}`);
    });
    expect(failures.slice(0, 5)).toEqual([]);

    // The ledger chain verifies end to end.
    const head = (await call(second.url, 'GET', '/api/ledger/head')).body as { position: number };
    const verify = await call(second.url, 'GET', '/api/ledger/verify');
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ ok: true, checked: head.position, first_failure: null });

    // No half-written event or request.
    const db = await openDirect(databaseUrl);
    try {
      const events = await countOf(db, 'SELECT COUNT(*) AS n FROM events');
      const receipts = await countOf(db, 'SELECT COUNT(*) AS n FROM receipts');
      expect(events).toBe(head.position);
      expect(receipts).toBe(events);
      expect(await countOf(db, "SELECT COUNT(*) AS n FROM events WHERE type <> 'ReceiptRecorded'")).toBe(0);
      const present = new Set((await db.query<{ id: string }>('SELECT id FROM receipts')).map((r) => r.id));
      const partial = sent.filter((s) => {
        const n = s.ids.filter((id) => present.has(id)).length;
        return n !== 0 && n !== s.ids.length;
      });
      expect(partial).toEqual([]);
      expect(ackedIds.filter((id) => !present.has(id))).toEqual([]);
      // Everything present was sent by a request of this test (nothing invented, nothing duplicated).
      const sentIds = new Set(sent.flatMap((s) => s.ids));
      expect([...present].filter((id) => !sentIds.has(id))).toEqual([]);
      if (dialect === 'sqlite') expect(await db.query('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      const committedUnacked = unacked.filter((s) => present.has(s.ids[0])).length;
      process.stdout.write(
        `crash on ${dialect}: killed after ${Date.now() - started} ms with ${inFlightAtKill} requests in flight; ${ackedIds.length} receipts acknowledged, ` +
          `${receipts} present; ${unacked.length} unacknowledged requests (${committedUnacked} committed before the kill, the rest absent)\n`,
      );
    } finally {
      await db.close();
    }

    // The restarted server extends the chain from where it stopped.
    const more = freshReceipt();
    expect((await call(second.url, 'POST', '/api/receipts', { key: producer, body: more.text })).status).toBe(201);
    expect((await call(second.url, 'GET', '/api/ledger/verify')).body).toMatchObject({ ok: true, checked: head.position + 1 });
    await second.stop();
  });
});
