/**
 * Read models edited behind the service (issue 14, "Nothing served that the
 * log does not back"), on SQLite and PostgreSQL: a row of each projection
 * table edited (raw bytes, a derived verdict, superseded_by, a counter, a
 * closed flag), a row deleted, a row inserted. Each is named (table and
 * position) by GET /api/ledger/verify (409, verdict invalid) and by `aer1
 * ledger verify --database` (exit 1, every failing table listed), and the
 * record's page and verifier refuse it with 409 `projection_mismatch`. An
 * untouched ledger under concurrent writes never reports a mismatch.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import Ajv from 'ajv';
import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { run } from '../../src/cli/main';
import { timelineEntries } from '../../src/cli/generate';
import { ProjectionRegistry } from '../../src/ledger/projections';
import { projectionRegistry } from '../../src/projections';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';
import { call, DirectDb, freshReceipt, listen, openDirect, pool, Reply } from './helpers';

type Row = Record<string, unknown>;

/** `aer1 ledger verify --database <db> [--json]` in process. */
async function cli(database: string, json: boolean): Promise<{ code: number; out: string }> {
  let text = '';
  const stdout = new Writable({
    write(chunk: Buffer, _e, cb) {
      text += chunk.toString();
      cb();
    },
  });
  const stderr = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await run(['ledger', 'verify', '--database', database, ...(json ? ['--json'] : [])], { stdout, stderr, stdin: Readable.from([]) });
  return { code, out: text };
}

const WF = vector('workflow-valid-3') as { workflow: { workflow_id: string }; step_receipts: unknown[] };
const JOB = 'job-projection-check';
const IMPORTED = 'job-projection-imported';

describe.each(DIALECTS)('projection checks on %s', (dialect) => {
  jest.setTimeout(180_000);
  let dir: string;
  let t: TestApp;
  let base: string;
  let db: DirectDb;
  let target: string;
  const ids = { a: '', b: '', c: '', plan: '', report: '', batch: '', workflow: WF.workflow.workflow_id.toLowerCase() };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-projcheck-'));
    const file = join(dir, 'ledger.sqlite');
    t = await startApp(dialect, dialect === 'sqlite' ? { DATABASE_URL: `sqlite:${file}` } : {});
    base = await listen(t.app);
    const post = (path: string, body: unknown, key: string): Promise<Reply> => call(base, 'POST', path, { key, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const [a, b, c] = [freshReceipt(), freshReceipt(), freshReceipt()];
    Object.assign(ids, { a: a.id.toLowerCase(), b: b.id.toLowerCase(), c: c.id.toLowerCase() });
    expect((await post('/api/receipts', a.text, t.keys.producer)).status).toBe(201);
    expect((await post('/api/receipts', b.text, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/receipts/${b.id}/corrections`, c.text, t.keys.producer)).status).toBe(201);
    const entries = buildTimeline(JOB, EIGHT_STEPS);
    expect((await post(`/api/jobs/${JOB}/entries`, entries, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${JOB}/commitments`, commitmentFor(entries), t.keys.producer)).status).toBe(201);
    const imported = [...timelineEntries({ entries: 5, job: IMPORTED })];
    const put = await call(base, 'PUT', `/api/jobs/${IMPORTED}/timeline`, { key: t.keys.producer, body: JSON.stringify(imported) });
    expect(put.status).toBe(201);
    const plan = await post('/api/plans', eightStepPlan(JOB), t.keys.compliance);
    expect(plan.status).toBe(201);
    ids.plan = plan.body.plan_id as string;
    const report = await post('/api/coverage-reports', { job_id: JOB }, t.keys.auditor);
    expect(report.status).toBe(201);
    ids.report = report.body.report_id as string;
    for (const s of WF.step_receipts) expect((await post('/api/receipts', s, t.keys.producer)).status).toBe(201);
    expect((await post('/api/workflows', WF.workflow, t.keys.producer)).status).toBe(201);
    const batch = await post('/api/verification-batches', { scope: 'all' }, t.keys.auditor);
    expect(batch.status).toBe(202);
    ids.batch = batch.body.batch_id as string;
    for (let i = 0; ; i++) {
      const s = await call(base, 'GET', `/api/verification-batches/${ids.batch}`);
      if (s.body.status === 'completed') break;
      if (i > 200) throw new Error('batch did not complete');
      await new Promise((r) => setTimeout(r, 100));
    }
    // An outcome reported against receipt a by the system that owns the effect (issue 18): the outcomes read model.
    // The job it names has an entry naming receipt a (issue 26: else 422 receipt_not_in_job).
    const payJob = `${JOB}-pay`;
    expect((await post(`/api/jobs/${payJob}/entries`, { ...buildTimeline(payJob, [{ tool: 'send_payment' }])[0], id: a.id }, t.keys.producer)).status).toBe(201);
    const outcomeKey = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
    const observation = Buffer.from('{"payment":"pay_1","state":"settled"}');
    const outcome = {
      outcome_id: randomUUID(),
      job_id: payJob,
      receipt_id: ids.a,
      effect: 'payment.settled',
      result: 'confirmed',
      observed_at: '2026-10-01T12:01:30Z',
      system: 'PAYMENTS',
      canonical_bytes: observation.toString('base64'),
      output_hash: `sha256:${createHash('sha256').update(observation).digest('hex')}`,
    };
    expect((await post('/api/outcomes', outcome, outcomeKey)).status).toBe(201);
    target = dialect === 'sqlite' ? file : t.databaseUrl;
    db = await openDirect(dialect === 'sqlite' ? `sqlite:${file}` : t.databaseUrl);
  });
  afterAll(async () => {
    await db?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const one = async (sql: string, params: unknown[]): Promise<Row> => {
    const rows = await db.query<Row>(sql, params);
    expect(rows).toHaveLength(1);
    return rows[0];
  };

  /** GET /api/ledger/verify: 409, invalid, the chain still fine, and `table`'s first failure as given. */
  async function expectAudited(table: string, failure: Record<string, unknown>): Promise<void> {
    const r = await call(base, 'GET', '/api/ledger/verify');
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ verdict: 'invalid', ok: false, first_failure: null, projections: { ok: false } });
    const tables = r.body.projections.tables as { table: string; ok: boolean; first_failure: Row | null }[];
    const failing = tables.filter((x) => !x.ok).map((x) => x.table);
    expect(failing).toContain(table);
    expect(tables.find((x) => x.table === table)!.first_failure).toMatchObject(failure);
    const json = await cli(target, true);
    expect(json.code).toBe(1);
    const offline = JSON.parse(json.out);
    expect(offline).toMatchObject({ ok: false, chain_ok: true, projections: { ok: false } });
    expect((offline.projections.tables as { table: string; ok: boolean }[]).filter((x) => !x.ok).map((x) => x.table)).toEqual(failing);
    const text = await cli(target, false);
    expect(text.code).toBe(1);
    expect(text.out).toContain('Read models: DO NOT MATCH THE EVENTS');
    for (const f of failing) expect(text.out).toContain(`  ${f}: FAILS`);
    if (failure.position !== null && failure.position !== undefined) expect(text.out).toContain(`first failure: position ${String(failure.position)}`);
    expect(text.out).toContain('Verdict: invalid');
  }

  /** Each path answers 409 `projection_mismatch` naming `table` (an HTML page for people where the path is a page). */
  async function expectRefused(paths: { path: string; key?: string; html?: boolean }[], table: string, position: number | null): Promise<void> {
    for (const p of paths) {
      const r = await call(base, 'GET', p.path, { key: p.key, headers: p.html ? { accept: 'text/html' } : { accept: 'application/json' } });
      expect([p.path, r.status]).toEqual([p.path, 409]);
      if (p.html) {
        expect(r.headers.get('content-type')).toContain('text/html');
        expect(r.text).toContain('Record not served');
        expect(r.text).toContain(`table <code><bdi>${table}</bdi></code>`);
        if (position !== null) expect(r.text).toContain(`ledger position <code><bdi>${position}</bdi></code>`);
        expect(r.text).not.toMatch(/>\s*(valid|verified)\s*</i);
      } else {
        expect(r.body).toMatchObject({ error: 'projection_mismatch', table, position });
        expect(r.body.message).toContain(`the ${table} row`);
      }
    }
  }

  async function expectClean(): Promise<void> {
    const r = await call(base, 'GET', '/api/ledger/verify');
    expect([r.status, r.body.verdict, r.body.projections.ok]).toEqual([200, 'valid', true]);
  }

  const pagesOf = {
    receipt: (id: string) => [{ path: `/run/${id}`, html: true }, { path: `/run/${id}` }, { path: `/api/receipts/${id}/verify` }, { path: `/api/receipts/${id}` }],
    job: () => [{ path: `/jobs/${JOB}`, html: true }, { path: `/api/jobs/${JOB}/verify` }, { path: `/api/jobs/${JOB}/timeline` }],
    imported: () => [{ path: `/jobs/${IMPORTED}`, html: true }, { path: `/api/jobs/${IMPORTED}/verify` }, { path: `/api/jobs/${IMPORTED}/export` }],
    workflow: () => [{ path: `/workflow/${ids.workflow}`, html: true }, { path: `/api/workflows/${ids.workflow}/verify` }],
    plan: () => [{ path: `/api/plans/${ids.plan}`, key: t.keys.auditor }, { path: `/api/plans/${ids.plan}/versions/1`, key: t.keys.auditor }],
    report: () => [{ path: `/coverage/${ids.report}`, html: true }, { path: `/api/coverage-reports/${ids.report}` }],
    batch: () => [{ path: `/api/verification-batches/${ids.batch}` }],
  };

  interface Edit {
    name: string;
    table: string;
    where: string;
    params: () => unknown[];
    column: string;
    value: (old: unknown) => unknown;
    positionColumn?: string;
    paths: () => { path: string; key?: string; html?: boolean }[];
  }
  const edits: Edit[] = [
    { name: 'receipt bytes', table: 'receipts', where: 'id = ?', params: () => [ids.a], column: 'raw', value: (v) => String(v).replace('{', '{ '), paths: () => pagesOf.receipt(ids.a) },
    { name: 'receipt verdict (derived)', table: 'receipts', where: 'id = ?', params: () => [ids.a], column: 'verdict', value: () => 'invalid', paths: () => pagesOf.receipt(ids.a) },
    { name: 'receipt superseded_by (updated later)', table: 'receipts', where: 'id = ?', params: () => [ids.b], column: 'superseded_by', value: () => null, paths: () => pagesOf.receipt(ids.b) },
    { name: 'timeline entry_count (counter)', table: 'timelines', where: 'job_id = ?', params: () => [JOB], column: 'entry_count', value: (v) => Number(v) - 1, positionColumn: 'last_position', paths: pagesOf.job },
    { name: 'timeline closed flag', table: 'timelines', where: 'job_id = ?', params: () => [JOB], column: 'closed', value: (v) => (Number(v) === 1 ? 0 : 1), positionColumn: 'last_position', paths: pagesOf.job },
    { name: 'timeline entry bytes', table: 'timeline_entries', where: 'job_id = ? AND seq = 3', params: () => [JOB], column: 'raw', value: (v) => String(v).replace('{', '{ '), paths: pagesOf.job },
    { name: 'imported timeline entry bytes', table: 'timeline_entries', where: 'job_id = ? AND seq = 4', params: () => [IMPORTED], column: 'raw', value: (v) => String(v).replace('{', '{ '), paths: pagesOf.imported },
    { name: 'imported timeline verdict (derived)', table: 'timelines', where: 'job_id = ?', params: () => [IMPORTED], column: 'verdict', value: () => 'invalid', positionColumn: 'last_position', paths: pagesOf.imported },
    { name: 'commitment binding (derived)', table: 'commitments', where: 'job_id = ? AND issued_by IS NULL', params: () => [JOB], column: 'binding', value: (v) => (Number(v) === 1 ? 0 : 1), paths: pagesOf.job },
    { name: 'workflow bytes', table: 'workflows', where: 'workflow_id = ?', params: () => [ids.workflow], column: 'raw', value: (v) => String(v).replace('{', '{ '), paths: pagesOf.workflow },
    { name: 'workflow step tool', table: 'workflow_steps', where: 'workflow_id = ? AND seq = 2', params: () => [ids.workflow], column: 'tool', value: () => 'other_tool', paths: pagesOf.workflow },
    { name: 'plan current_version (counter)', table: 'plans', where: 'plan_id = ?', params: () => [ids.plan], column: 'current_version', value: () => 2, positionColumn: 'last_position', paths: pagesOf.plan },
    { name: 'plan version text', table: 'plan_versions', where: 'plan_id = ? AND version = 1', params: () => [ids.plan], column: 'plan', value: (v) => String(v).replace('{', '{ '), paths: pagesOf.plan },
    { name: 'coverage report text', table: 'coverage_reports', where: 'report_id = ?', params: () => [ids.report], column: 'report', value: (v) => String(v).replace('{', '{ '), paths: pagesOf.report },
    { name: 'batch done (counter)', table: 'verification_batches', where: 'batch_id = ?', params: () => [ids.batch], column: 'done', value: (v) => Number(v) - 1, paths: pagesOf.batch },
    { name: 'batch result verdict', table: 'verification_results', where: "batch_id = ? AND target_id = ?", params: () => [ids.batch, ids.a], column: 'verdict', value: () => 'invalid', paths: pagesOf.batch },
  ];

  it('an untouched ledger verifies, every projection table checked', async () => {
    const r = await call(base, 'GET', '/api/ledger/verify');
    expect(r.status).toBe(200);
    const tables = r.body.projections.tables as { table: string; ok: boolean; rows_checked: number }[];
    expect(tables.map((x) => x.table).sort()).toEqual(['commitments', 'coverage_reports', 'erased_events', 'erasures', 'outcomes', 'plan_versions', 'plans', 'receipts', 'timeline_entries', 'timelines', 'verification_batches', 'verification_results', 'workflow_steps', 'workflows']);
    // Nothing was erased in this ledger: the erasure tables (issue 29) are checked and empty.
    for (const x of tables) expect([x.table, x.ok, x.rows_checked > 0]).toEqual([x.table, true, !x.table.startsWith('eras')]);
    // The job's 8, the import's 5, and the entry naming receipt a for the outcome (issue 26).
    expect(tables.find((x) => x.table === 'timeline_entries')!.rows_checked).toBe(8 + 5 + 1);
    // The offline audit replays through the same projections as the service.
    expect([...projectionRegistry().tables()].sort()).toEqual([...t.app.get(ProjectionRegistry).tables()].sort());
    expect((await cli(target, false)).code).toBe(0);
  });

  it.each(edits.map((e) => [e.name, e] as const))('an edited row (%s) is named by /api/ledger/verify and the CLI, and refused by its page and verifier', async (_n, e) => {
    // Served once untouched first: the guard keeps the digest of what the events make, and must still see the edit.
    expect((await call(base, 'GET', e.paths()[0].path, { key: e.paths()[0].key })).status).toBe(200);
    const before = await one(`SELECT * FROM ${e.table} WHERE ${e.where}`, e.params());
    const old = before[e.column];
    const position = e.table === 'workflow_steps' ? null : Number(before[e.positionColumn ?? 'position']);
    await db.query(`UPDATE ${e.table} SET ${e.column} = ? WHERE ${e.where}`, [e.value(old), ...e.params()]);
    try {
      await expectAudited(e.table, { kind: 'differs', column: e.column, position });
      await expectRefused(e.paths(), e.table, position);
    } finally {
      await db.query(`UPDATE ${e.table} SET ${e.column} = ? WHERE ${e.where}`, [old, ...e.params()]);
    }
    await expectClean();
    expect((await call(base, 'GET', e.paths()[0].path, { key: e.paths()[0].key })).status).toBe(200);
  });

  it('a deleted row is named as missing, and its page refuses rather than saying "not found"', async () => {
    const before = await one('SELECT * FROM receipts WHERE id = ?', [ids.a]);
    await db.query('DELETE FROM receipts WHERE id = ?', [ids.a]);
    const logged = jest.spyOn(Logger.prototype, 'error');
    try {
      await expectAudited('receipts', { kind: 'missing', position: Number(before.position), key: { id: ids.a } });
      await expectRefused(pagesOf.receipt(ids.a), 'receipts', Number(before.position));
      // Both the audit and the refused record are logged at error level, naming the table.
      const lines = logged.mock.calls.map((c) => String(c[0]));
      expect(lines.some((l) => l.startsWith('projection_mismatch: the read models do not match') && l.includes(`receipts (first at position ${Number(before.position)}: missing)`))).toBe(true);
      expect(lines.some((l) => l.startsWith('projection_mismatch: the receipts row of ledger position'))).toBe(true);
    } finally {
      logged.mockRestore();
      const cols = Object.keys(before);
      await db.query(`INSERT INTO receipts (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, cols.map((c) => before[c]));
    }
    await expectClean();
  });

  it('an inserted row is named as made by no event, and its page refuses it', async () => {
    const before = await one('SELECT * FROM receipts WHERE id = ?', [ids.a]);
    const forged = freshReceipt().id.toLowerCase();
    const cols = Object.keys(before);
    await db.query(`INSERT INTO receipts (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, cols.map((c) => (c === 'id' || c === 'id_as_given' ? forged : before[c])));
    try {
      await expectAudited('receipts', { kind: 'unexpected', position: Number(before.position), key: { id: forged } });
      await expectRefused(pagesOf.receipt(forged), 'receipts', Number(before.position));
    } finally {
      await db.query('DELETE FROM receipts WHERE id = ?', [forged]);
    }
    await expectClean();
  });

  it('several tables edited at once are all listed, by the API and the CLI', async () => {
    const r = await one('SELECT verdict FROM receipts WHERE id = ?', [ids.a]);
    const w = await one('SELECT goal FROM workflows WHERE workflow_id = ?', [ids.workflow]);
    await db.query("UPDATE receipts SET verdict = 'invalid' WHERE id = ?", [ids.a]);
    await db.query("UPDATE workflows SET goal = 'another goal' WHERE workflow_id = ?", [ids.workflow]);
    try {
      const v = await call(base, 'GET', '/api/ledger/verify');
      expect(v.status).toBe(409);
      expect((v.body.projections.tables as { table: string; ok: boolean }[]).filter((x) => !x.ok).map((x) => x.table)).toEqual(['receipts', 'workflows']);
      // The 409 body is the documented LedgerVerification schema.
      const doc = (await call(base, 'GET', '/docs-json')).body;
      expect(Object.keys(doc.paths['/api/ledger/verify'].get.responses)).toEqual(expect.arrayContaining(['200', '409']));
      const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
      const validate = ajv.compile({ ...doc.paths['/api/ledger/verify'].get.responses['409'].content['application/json'].schema, components: doc.components });
      expect(validate(v.body)).toBe(true);
      expect(validate({ ...v.body, projections: { ...v.body.projections, tables: [{ table: 'x' }] } })).toBe(false);
      const text = await cli(target, false);
      expect(text.code).toBe(1);
      expect(text.out).toContain('  receipts: FAILS, 1 of ');
      expect(text.out).toContain('  workflows: FAILS, 1 of ');
      expect(text.out).toContain('  timelines: ok');
    } finally {
      await db.query('UPDATE receipts SET verdict = ? WHERE id = ?', [r.verdict, ids.a]);
      await db.query('UPDATE workflows SET goal = ? WHERE workflow_id = ?', [w.goal, ids.workflow]);
    }
    await expectClean();
  });

  it('an untouched ledger under concurrent writes never reports a mismatch', async () => {
    let writing = true;
    let written = 0;
    // Entries appended one by one to a job whose page and verifier are read meanwhile, and receipts recorded.
    const job = 'job-concurrent';
    const entries = [...timelineEntries({ entries: 400, job })];
    const writer = (async () => {
      for (const e of entries) {
        if (!writing) break;
        expect((await call(base, 'POST', `/api/jobs/${job}/entries`, { key: t.keys.producer, body: JSON.stringify(e) })).status).toBe(201);
        const r = await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: freshReceipt().text });
        expect(r.status).toBe(201);
        written++;
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 200));
      const answers = await pool([...Array(12).keys()], 3, async (i) => {
        const v = await call(base, 'GET', '/api/ledger/verify');
        const page = await call(base, 'GET', i % 2 === 0 ? `/api/jobs/${job}/verify` : `/jobs/${job}`);
        return { v, page };
      });
      for (const { v, page } of answers) {
        expect([v.status, v.body.verdict, v.body.projections.ok]).toEqual([200, 'valid', true]);
        // The job is open while entries arrive: its verifier answers 422 (not closed), never 409.
        expect([200, 422]).toContain(page.status);
        expect(page.body?.error).not.toBe('projection_mismatch');
      }
      const offline = await cli(target, true);
      expect(offline.code).toBe(0);
    } finally {
      writing = false;
      await writer;
    }
    expect(written).toBeGreaterThan(0);
    await expectClean();
  });
});
