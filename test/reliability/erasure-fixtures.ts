/**
 * Shared set-up of the erasure attack suites (issue 29): an in-process app on
 * a SQLite file or a fresh PostgreSQL database listening on a real socket, a
 * direct connection to its database, jobs recorded with personal data, and
 * the invariants every erasure must keep.
 */
import { join } from 'node:path';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import { call, DirectDb, listen, makeEntry, openDirect, Reply } from './helpers';

export { DIALECTS };

/** The S7.1 digest of a well-formed entry (throws on one that does not recompute). */
export function digestOf(e: unknown): string {
  const d = entryDigest(e as never);
  if (d === null) throw new Error('the entry does not recompute');
  return d;
}

/** What a job recorded by {@link Ledger.execute} holds: its receipts' ids, their canonical bytes and output hashes, and the outcome. */
export interface RecordedJob {
  job: string;
  receiptIds: string[];
  /** Every content string of the job (canonical bytes in base64, output hashes, the outcome's observation): none may be served after erasure. */
  secrets: string[];
  outcomeId: string;
}

export interface Ledger {
  t: TestApp;
  base: string;
  db: DirectDb;
  /** `aer1 ledger verify --database` target: the SQLite file or the PostgreSQL URL. */
  target: string;
  outcomeKey: string;
  post(path: string, body: unknown, key?: string): Promise<Reply>;
  get(path: string, key?: string): Promise<Reply>;
  erase(body: unknown, key?: string): Promise<Reply>;
  execute(job: string): Promise<RecordedJob>;
  /** An open job of `n` entries (no close), appended one by one; returns the last entry's digest. */
  openJob(job: string, n: number): Promise<string>;
  close(): Promise<void>;
}

/** Start a ledger for `dialect` (a SQLite file under `dir`, or a fresh PostgreSQL database). */
export async function startLedger(dialect: (typeof DIALECTS)[number], dir: string, name: string): Promise<Ledger> {
  const file = join(dir, `${name}.sqlite`);
  const t = await startApp(dialect, dialect === 'sqlite' ? { DATABASE_URL: `sqlite:${file}` } : {});
  const base = await listen(t.app);
  const db = await openDirect(dialect === 'sqlite' ? `sqlite:${file}` : t.databaseUrl);
  const outcomeKey = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
  const post = (path: string, body: unknown, key = t.keys.producer): Promise<Reply> => call(base, 'POST', path, { key, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const get = (path: string, key?: string): Promise<Reply> => call(base, 'GET', path, key === undefined ? {} : { key });
  const l: Ledger = {
    t,
    base,
    db,
    target: dialect === 'sqlite' ? file : t.databaseUrl,
    outcomeKey,
    post,
    get,
    erase: (body, key = t.keys.privacy) => post('/api/erasures', body, key),
    async execute(job) {
      expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
      const tl = buildTimeline(job, PAYMENT_STEPS);
      const receipts = tl.map((e) => receiptFor(e, 'ok'));
      for (const r of receipts) expect((await post('/api/receipts', r)).status).toBe(201);
      expect((await post(`/api/jobs/${encodeURIComponent(job)}/entries`, tl)).status).toBe(201);
      expect((await post(`/api/jobs/${encodeURIComponent(job)}/commitments`, commitmentFor(tl))).status).toBe(201);
      const observation = JSON.stringify({ customer: `Ada Lovelace ${job}`, iban: 'GB33BUKB20201555555555' });
      const outcome = outcomeFor({ name: job, job_id: job, receipt_id: tl[1].id, observation });
      expect((await post('/api/outcomes', outcome, outcomeKey)).status).toBe(201);
      const secrets = [
        ...receipts.flatMap((r) => [String(r.canonical_bytes), String(r.output_hash).slice('sha256:'.length)]),
        ...tl.map((e) => digestOf(e)),
        Buffer.from(observation).toString('base64'),
        String(outcome.output_hash).slice('sha256:'.length),
      ];
      return { job, receiptIds: tl.map((e) => e.id.toLowerCase()), secrets, outcomeId: outcome.outcome_id.toLowerCase() };
    },
    async openJob(job, n) {
      let prev = ZERO_DIGEST;
      for (let seq = 1; seq <= n; seq++) {
        const e = makeEntry(job, seq, prev);
        expect((await post(`/api/jobs/${encodeURIComponent(job)}/entries`, e)).status).toBe(201);
        prev = digestOf(e);
      }
      return prev;
    },
    close: async () => {
      await db.close();
      await t.close();
    },
  };
  return l;
}

/** The PayloadsErased events of the ledger: position and the positions each names. */
export async function payloadsErased(db: DirectDb): Promise<{ position: number; positions: number[] }[]> {
  const rows = await db.query<{ position: number | string; data: string }>("SELECT position, data FROM events WHERE type = 'PayloadsErased' ORDER BY position");
  return rows.map((r) => ({ position: Number(r.position), positions: r.data === '' ? [] : (JSON.parse(r.data) as { positions: number[] }).positions }));
}

/**
 * The erasure invariant: the positions whose payload is gone are exactly the
 * positions named by PayloadsErased events, and no position is named twice.
 */
export async function expectNoPartialErasure(db: DirectDb): Promise<void> {
  const gone = (await db.query<{ position: number | string }>("SELECT position FROM events WHERE data = '' OR payload_salt IS NULL ORDER BY position")).map((r) => Number(r.position));
  const named = (await payloadsErased(db)).flatMap((e) => e.positions);
  expect(new Set(named).size).toBe(named.length);
  expect([...named].sort((a, b) => a - b)).toEqual(gone);
}

/** GET /api/ledger/verify as an auditor: the report (200 valid, 409 invalid with the full report; never another status). */
export async function verify(l: Ledger): Promise<{ ok: boolean; first_failure: { position: number; reason: string } | null; [k: string]: unknown }> {
  const v = await l.get('/api/ledger/verify', l.t.keys.auditor);
  expect([v.status, v.body?.verdict]).toEqual(v.status === 200 ? [200, 'valid'] : [409, 'invalid']);
  return v.body;
}
