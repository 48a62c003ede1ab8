/**
 * Access: every write endpoint refuses a missing, wrong, revoked or
 * malformed key (401) and a key of the wrong role (403), writing nothing;
 * keys never reach the logs of a real server process at LOG_LEVEL=info; the
 * verify endpoints answer 429 with Retry-After past VERIFY_RATE_LIMIT; and
 * their answers reveal nothing beyond the record (S13): a 404 has one shape
 * whether or not similar ids exist, and no answer carries internals.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZERO_DIGEST } from '../../src/core/aer1';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { adminKey, call, freshReceipt, killAll, leaksInternals, listen, makeEntry, Reply, ServerProcess, vector } from './helpers';

type Role = 'producer' | 'compliance' | 'auditor' | 'admin';

interface Write {
  method: 'POST' | 'PUT' | 'DELETE' | 'GET';
  path: string;
  roles: Role[];
  body?: () => string;
  contentType?: string;
}

/** Every endpoint that needs a key, with a body that would be accepted by the right key. */
function writes(ctx: { receiptId: string; planId: string; keyId: string }): Write[] {
  const workflow = (vector('workflow-valid-3') as { workflow: unknown }).workflow;
  return [
    { method: 'POST', path: '/api/receipts', roles: ['producer'], body: () => freshReceipt().text },
    { method: 'POST', path: '/api/receipts/batch', roles: ['producer'], body: () => `${freshReceipt().text}\n${freshReceipt().text}`, contentType: 'application/x-ndjson' },
    { method: 'POST', path: `/api/receipts/${ctx.receiptId}/corrections`, roles: ['producer'], body: () => freshReceipt().text },
    { method: 'POST', path: '/api/jobs/job-access/entries', roles: ['producer'], body: () => JSON.stringify(makeEntry('job-access', 1, ZERO_DIGEST)) },
    { method: 'PUT', path: '/api/jobs/job-access-import/timeline', roles: ['producer'], body: () => JSON.stringify([makeEntry('job-access-import', 1, ZERO_DIGEST, { close: true })]) },
    { method: 'POST', path: '/api/jobs/job-access/commitments', roles: ['producer'], body: () => JSON.stringify({ job_id: 'job-access', final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z' }) },
    { method: 'POST', path: '/api/workflows', roles: ['producer'], body: () => JSON.stringify(workflow) },
    { method: 'POST', path: '/api/workflows/assemble', roles: ['producer'], body: () => JSON.stringify({ session_id: 's', goal: 'g', status: 'ok', receipt_ids: [ctx.receiptId], output: 'o' }) },
    { method: 'POST', path: '/api/plans', roles: ['compliance'], body: () => JSON.stringify({ job_id: 'job-access-plan', title: 't', expected_actions: [{ action_id: 'a', tool: 'x' }] }) },
    { method: 'POST', path: `/api/plans/${ctx.planId}/amendments`, roles: ['compliance'], body: () => JSON.stringify({ title: 't2', expected_actions: [{ action_id: 'a', tool: 'x' }] }) },
    { method: 'POST', path: '/api/coverage-reports', roles: ['auditor'], body: () => JSON.stringify({ job_id: 'job-access-plan' }) },
    { method: 'POST', path: '/api/verification-batches', roles: ['auditor'], body: () => JSON.stringify({ scope: 'all' }) },
    { method: 'POST', path: '/api/keys', roles: ['admin'], body: () => JSON.stringify({ name: 'x', role: 'producer' }) },
    { method: 'GET', path: '/api/keys', roles: ['admin'] },
    { method: 'DELETE', path: `/api/keys/${ctx.keyId}`, roles: ['admin'] },
  ];
}

const ALL_ROLES: Role[] = ['producer', 'compliance', 'auditor', 'admin'];

describe.each(DIALECTS)('access on %s', (dialect) => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let base: string;
  let ctx: { receiptId: string; planId: string; keyId: string };
  let revoked: string;

  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
    const r = freshReceipt();
    expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: r.text })).status).toBe(201);
    const plan = await call(base, 'POST', '/api/plans', { key: t.keys.compliance, body: JSON.stringify({ job_id: 'job-access-p0', title: 't', expected_actions: [{ action_id: 'a', tool: 'x' }] }) });
    expect(plan.status).toBe(201);
    // A key to revoke, and a key that the DELETE endpoint would revoke.
    const made = await call(base, 'POST', '/api/keys', { key: t.keys.admin, body: JSON.stringify({ name: 'to-revoke', role: 'admin' }) });
    expect(made.status).toBe(201);
    revoked = made.body.key;
    expect((await call(base, 'DELETE', `/api/keys/${made.body.id}`, { key: t.keys.admin })).status).toBe(204);
    const victim = await call(base, 'POST', '/api/keys', { key: t.keys.admin, body: JSON.stringify({ name: 'victim', role: 'producer' }) });
    ctx = { receiptId: r.id, planId: plan.body.plan_id, keyId: victim.body.id };
  });
  afterAll(async () => {
    await t?.close();
  });

  const state = async (): Promise<string> => {
    const head = (await call(base, 'GET', '/api/ledger/head')).body;
    const keys = (await call(base, 'GET', '/api/keys', { key: t.keys.admin })).body as { id: string; revoked_at: string | null }[];
    return JSON.stringify({ head, keys: keys.map((k) => [k.id, k.revoked_at]) });
  };

  const expectRefused = (r: Reply, status: number, code: string, what: string): void => {
    expect({ what, status: r.status, error: r.body?.error }).toEqual({ what, status, error: code });
    expect(typeof r.body.message).toBe('string');
    expect(leaksInternals(r.text)).toBeNull();
  };

  it('refuses a missing, unknown, revoked or malformed key with 401 and a wrong role with 403, writing nothing', async () => {
    const before = await state();
    let checked = 0;
    for (const w of writes(ctx)) {
      const send = (headers: Record<string, string>): Promise<Reply> =>
        call(base, w.method, w.path, { headers, body: w.body?.(), contentType: w.contentType });
      const what = `${w.method} ${w.path}`;
      expectRefused(await send({}), 401, 'missing_key', `${what} without a key`);
      expectRefused(await send({ authorization: 'Bearer aer1_' + 'x'.repeat(43) }), 401, 'invalid_key', `${what} with an unknown key`);
      expectRefused(await send({ authorization: `Bearer ${t.keys.producer}x` }), 401, 'invalid_key', `${what} with a key one character longer`);
      expectRefused(await send({ authorization: `Bearer ${revoked}` }), 401, 'key_revoked', `${what} with a revoked key`);
      expectRefused(await send({ authorization: `Basic ${Buffer.from(`u:${t.keys.admin}`).toString('base64')}` }), 401, 'invalid_authorization', `${what} with Basic auth`);
      expectRefused(await send({ authorization: `Bearer ${t.keys.admin} extra` }), 401, 'invalid_authorization', `${what} with two tokens`);
      for (const role of ALL_ROLES.filter((r) => r !== 'admin' && !w.roles.includes(r))) {
        expectRefused(await send({ authorization: `Bearer ${t.keys[role]}` }), 403, 'forbidden_role', `${what} with a ${role} key`);
      }
      checked++;
    }
    expect(checked).toBe(15);
    expect(await state()).toEqual(before);
    // The right keys do work (so the refusals above were about the key only).
    for (const w of writes(ctx)) {
      const r = await call(base, w.method, w.path, { key: t.keys[w.roles[0]], body: w.body?.(), contentType: w.contentType });
      expect({ what: `${w.method} ${w.path}`, ok: r.status < 300 }).toEqual({ what: `${w.method} ${w.path}`, ok: true });
    }
  });

  it('verify answers reveal nothing beyond the record: one 404 shape, no internals (S13)', async () => {
    const rid = ctx.receiptId;
    // A similar id (one hex digit changed) and an unrelated one give the same answer, bar the id echoed back.
    const similar = rid.slice(0, -1) + (rid.endsWith('0') ? '1' : '0');
    const shape = (r: Reply, id: string): string => r.text.split(id).join('<id>');
    const a = await call(base, 'GET', `/api/receipt/${similar}/verify`);
    const b = await call(base, 'GET', `/api/receipt/${randomUUID()}/verify`);
    const b2 = b.text.match(/[0-9a-f-]{36}/)![0];
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    expect(shape(a, similar)).toBe(shape(b, b2));
    expect(Object.keys(a.body).sort()).toEqual(['error', 'message', 'receipt']);
    const j1 = await call(base, 'GET', '/api/jobs/job-access-x/verify');
    const j2 = await call(base, 'GET', '/api/jobs/zzzz-unrelated/verify');
    expect(j1.status).toBe(404);
    expect(shape(j1, 'job-access-x')).toBe(shape(j2, 'zzzz-unrelated'));
    const w1 = await call(base, 'GET', `/api/workflow/${similar}/verify`);
    const w2 = await call(base, 'GET', `/api/workflow/${b2}/verify`);
    expect(w1.status).toBe(404);
    expect(shape(w1, similar)).toBe(shape(w2, b2));
    // Odd ids: never a 5xx, never internals.
    for (const id of ["x' OR '1'='1", '..%2F..%2Fetc%2Fpasswd', '%FF', 'a'.repeat(3000), '%E2%80%AE']) {
      for (const p of [`/api/receipt/${id}/verify`, `/api/jobs/${id}/verify`, `/api/workflow/${id}/verify`]) {
        const r = await call(base, 'GET', p);
        expect({ p, status: r.status < 500, error: typeof r.body?.error }).toEqual({ p, status: true, error: 'string' });
        expect(r.text).not.toMatch(/QueryFailed|SQLITE|node_modules|\/work\/|\n\s+at /);
      }
    }
    // A record's own answer: its data, no internals.
    const ok = await call(base, 'GET', `/api/receipt/${rid}/verify`);
    expect(ok.status).toBe(200);
    expect(leaksInternals(ok.text)).toBeNull();
    expect(ok.text).not.toMatch(/key_hash|api_keys|aer1_[A-Za-z0-9_-]{43}/);
  });
});

describe('verify rate limit (VERIFY_RATE_LIMIT=5)', () => {
  // One app per path: the budget is one per client across every public read (see costs.e2e-spec.ts for the
  // shared budget and the weights; /api/jobs/{id}/verify weighs 5 there).
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each(['/api/receipt/00000000-0000-4000-8000-000000000000/verify', '/api/workflow/00000000-0000-4000-8000-000000000000/verify'])(
    '%s: 5 answers, then 429 with Retry-After',
    async (path) => {
      t = await startApp('sqlite', { VERIFY_RATE_LIMIT: '5' });
      const base = await listen(t.app);
      const statuses: number[] = [];
      let last: Reply | undefined;
      for (let i = 0; i < 8; i++) {
        last = await call(base, 'GET', path);
        statuses.push(last.status);
      }
      expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429, 429]);
      expect(last!.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(leaksInternals(last!.text)).toBeNull();
    },
  );
});

describe('keys never reach the logs (server process, LOG_LEVEL=info)', () => {
  jest.setTimeout(60_000);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-logs-'));
  });
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs requests but never a key: valid, unknown, revoked, malformed, admin, or a key just created', async () => {
    const admin = adminKey();
    const server = await ServerProcess.start({ DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}`, LEDGER_ADMIN_KEY: admin, LOG_LEVEL: 'info' });
    const created = await call(server.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name: 'log-producer', role: 'producer' }) });
    expect(created.status).toBe(201);
    const producer = created.body.key as string;
    const other = await call(server.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name: 'log-revoked', role: 'auditor' }) });
    await call(server.url, 'DELETE', `/api/keys/${other.body.id}`, { key: admin });
    const unknown = 'aer1_' + 'Q'.repeat(43);
    const secrets = [admin, producer, other.body.key as string, unknown];
    const r = freshReceipt();
    expect((await call(server.url, 'POST', '/api/receipts', { key: producer, body: r.text })).status).toBe(201);
    await call(server.url, 'POST', '/api/receipts', { key: unknown, body: r.text });
    await call(server.url, 'POST', '/api/verification-batches', { key: other.body.key, body: '{"scope":"all"}' });
    await call(server.url, 'POST', '/api/receipts', { headers: { authorization: `Bearer ${producer} trailing` }, body: r.text });
    await call(server.url, 'POST', '/api/receipts', { headers: { authorization: `Token ${producer}` }, body: '{' });
    await call(server.url, 'POST', '/api/receipts', { headers: { authorization: `bearer ${producer}` }, body: Buffer.from([0xff, 0xfe]) });
    await call(server.url, 'GET', '/api/keys', { key: admin });
    await call(server.url, 'GET', `/api/receipt/${r.id}/verify`, { key: producer });
    await server.stop();
    const logs = server.stdout.text + server.stderr.text;
    // The log is not empty: requests were logged (so the check below means something).
    expect(logs).toContain('/api/receipts');
    expect(logs).toContain('[redacted]');
    for (const s of secrets) {
      expect(logs.includes(s)).toBe(false);
      expect(logs.includes(s.slice(5, 30))).toBe(false); // no fragment either
    }
  });
});
