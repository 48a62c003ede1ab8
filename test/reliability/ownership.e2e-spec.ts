/**
 * Integrity issue, section 2 (who wrote what, who may touch what) and
 * section 6 (private bytes, S13). Each test names the hole it closes: before
 * the fix, events named no key, any producer could correct another's receipt,
 * append to or commit for another's job, put text on another's receipt page
 * through a workflow, and claim any provenance class; every receipt's bytes
 * were public.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ApiKeysService, KeyOptions, Role } from '../../src/auth/api-keys.service';
import { DatabaseService } from '../../src/database/database.service';
import { timelineEntries } from '../../src/cli/generate';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

/** A valid core receipt with the given provenance class and payload. */
function receipt(provenance: string, payload: unknown = { n: randomUUID() }): { id: string; text: string } {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  const id = randomUUID();
  const doc = {
    id,
    receipt_schema_version: '0.3',
    created_at: '2026-10-01T12:00:00Z',
    tool: { name: 'lookup', version: '1.0.0', scope: 'read' },
    provenance_class: provenance,
    canonical_bytes: bytes.toString('base64'),
    output_hash: 'sha256:' + createHash('sha256').update(bytes).digest('hex'),
    verification_status: 'verified',
  };
  return { id, text: JSON.stringify(doc) };
}

describe.each(DIALECTS)('ownership and attribution on %s', (dialect) => {
  let t: TestApp;
  let keys: ApiKeysService;
  const key = async (name: string, role: Role, o: KeyOptions = {}): Promise<{ id: string; key: string }> => keys.create(name, role, o);
  const head = async (): Promise<unknown> => (await t.http.get('/api/ledger/head')).body;
  const post = (path: string, k: string, body: string, type = 'application/json') => t.http.post(path).set('Authorization', `Bearer ${k}`).set('Content-Type', type).send(body);

  beforeAll(async () => {
    t = await startApp(dialect);
    keys = t.app.get(ApiKeysService);
  });
  afterAll(async () => t.close());

  it('records the key that wrote each event (format 3, hashed with the event) and shows it', async () => {
    const a = await key('agent-a', 'producer');
    const r = receipt('EXECUTED BY LEDGER');
    const res = await post('/api/receipts', a.key, r.text);
    expect(res.status).toBe(201);
    const db = t.app.get(DatabaseService);
    const ev = (await db.query<{ format: number | string; key_id: string; key_name: string }>('SELECT format, key_id, key_name FROM events WHERE position = ?', [res.body.position]))[0];
    expect({ ...ev, format: Number(ev.format) }).toEqual({ format: 3, key_id: a.id, key_name: 'agent-a' });
    const verify = await t.http.get(`/api/receipt/${r.id}/verify`);
    expect(verify.body.recorded_by).toEqual({ key_id: a.id, name: 'agent-a' });
    const page = await t.http.get(`/run/${r.id}`);
    expect(page.text).toContain('id="recorded-by"');
    expect(page.text).toContain('agent-a');
    expect((await t.http.get('/api/ledger/verify')).body.ok).toBe(true);
  });

  it("refuses a correction of another owner's receipt with 403 not_owner, writing nothing; the writer's own correction then succeeds", async () => {
    const a = await key('agent-a2', 'producer');
    const b = await key('agent-b2', 'producer');
    const original = receipt('EXECUTED BY LEDGER');
    expect((await post('/api/receipts', a.key, original.text)).status).toBe(201);
    const before = await head();
    const byB = await post(`/api/receipts/${original.id}/corrections`, b.key, receipt('EXECUTED BY LEDGER').text);
    expect(byB.status).toBe(403);
    expect(byB.body).toMatchObject({ error: 'not_owner', reasons: ['not_owner'] });
    expect(await head()).toEqual(before);
    const byA = await post(`/api/receipts/${original.id}/corrections`, a.key, receipt('EXECUTED BY LEDGER').text);
    expect(byA.status).toBe(201);
  });

  it('lets keys of one owner act on each other\'s records, and an admin on any', async () => {
    const a1 = await key('acme-1', 'producer', { owner: 'acme' });
    const a2 = await key('acme-2', 'producer', { owner: 'acme' });
    const r1 = receipt('EXECUTED BY LEDGER');
    expect((await post('/api/receipts', a1.key, r1.text)).status).toBe(201);
    expect((await post(`/api/receipts/${r1.id}/corrections`, a2.key, receipt('EXECUTED BY LEDGER').text)).status).toBe(201);
    const r2 = receipt('EXECUTED BY LEDGER');
    expect((await post('/api/receipts', a1.key, r2.text)).status).toBe(201);
    expect((await post(`/api/receipts/${r2.id}/corrections`, t.keys.admin, receipt('EXECUTED BY LEDGER').text)).status).toBe(201);
  });

  it("refuses timeline appends and commitments for another owner's job (403 not_owner, nothing written)", async () => {
    const a = await key('agent-a3', 'producer');
    const b = await key('agent-b3', 'producer');
    const job = `job-own-${randomUUID()}`;
    const entries = [...timelineEntries({ entries: 3, job })];
    expect((await post(`/api/jobs/${job}/entries`, a.key, JSON.stringify(entries[0]))).status).toBe(201);
    const before = await head();
    const append = await post(`/api/jobs/${job}/entries`, b.key, JSON.stringify(entries[1]));
    expect(append.status).toBe(403);
    expect(append.body.error).toBe('not_owner');
    const commitment = { job_id: job, final_entry_digest: '0'.repeat(64), entry_count: 1, published_at: '2026-10-01T12:00:00Z', witness: 'witness.example' };
    const commit = await post(`/api/jobs/${job}/commitments`, b.key, JSON.stringify(commitment));
    expect(commit.status).toBe(403);
    expect(commit.body.error).toBe('not_owner');
    expect(await head()).toEqual(before);
    expect((await post(`/api/jobs/${job}/entries`, a.key, JSON.stringify(entries[1]))).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, a.key, JSON.stringify(commitment))).status).toBe(201);
    const timeline = await t.http.get(`/api/jobs/${job}/timeline`);
    expect(timeline.body.entries_recorded_by).toEqual([{ first_seq: 1, last_seq: 2, recorded_by: { key_id: a.id, name: 'agent-a3' } }]);
    expect(timeline.body.commitments[0].recorded_by).toEqual({ key_id: a.id, name: 'agent-a3' });
  });

  it("shows a workflow of another owner that names a receipt as a claim, without its text, not as the receipt's workflow", async () => {
    const a = await key('agent-a4', 'producer');
    const b = await key('agent-b4', 'producer');
    const steps = [receipt('EXECUTED BY LEDGER'), receipt('EXECUTED BY LEDGER')];
    for (const s of steps) expect((await post('/api/receipts', a.key, s.text)).status).toBe(201);
    const assemble = (k: string, goal: string) =>
      post('/api/workflows/assemble', k, JSON.stringify({ session_id: randomUUID(), goal, status: 'completed', receipt_ids: steps.map((s) => s.id), output: 'done' }));
    const claimed = await assemble(b.key, 'FRAUD CONFIRMED');
    expect(claimed.status).toBe(201);
    let page = await t.http.get(`/run/${steps[0].id}`);
    expect(page.text).not.toContain('FRAUD CONFIRMED');
    expect(page.text).not.toContain('Part of workflow');
    expect(page.text).toContain('Claimed by <bdi>agent-b4</bdi>');
    let json = (await t.http.get(`/run/${steps[0].id}`).set('Accept', 'application/json')).body;
    expect(json.workflows).toEqual([]);
    expect(json.claimed_by_workflows).toEqual([expect.objectContaining({ workflow_id: claimed.body.workflow_id, seq: 1, claimed_by: 'agent-b4', recorded_by: { key_id: b.id, name: 'agent-b4' } })]);
    expect(JSON.stringify(json.claimed_by_workflows)).not.toContain('FRAUD');
    const own = await assemble(a.key, 'Quarterly reconciliation');
    expect(own.status).toBe(201);
    page = await t.http.get(`/run/${steps[0].id}`);
    expect(page.text).toContain('Part of workflow');
    expect(page.text).toContain('Quarterly reconciliation');
    json = (await t.http.get(`/run/${steps[0].id}`).set('Accept', 'application/json')).body;
    expect(json.workflows.map((w: { workflow_id: string }) => w.workflow_id)).toEqual([own.body.workflow_id]);
  });

  describe('provenance bound to keys', () => {
    it('lets a key without a list claim any class (as before lists existed)', async () => {
      const open = await key('open-key', 'producer');
      for (const p of ['EXECUTED BY ANYONE', 'OBSERVED VIA GATEWAY', 'LOGGED BY AGENT']) expect((await post('/api/receipts', open.key, receipt(p).text)).status).toBe(201);
    });

    it('restricts EXECUTED BY to the listed systems and OBSERVED VIA GATEWAY to gateway keys; LOGGED BY AGENT from any producer', async () => {
      const k = await key('ledger-only', 'producer', { systems: ['LEDGER', 'ACME'] });
      const g = await key('gateway-key', 'producer', { systems: [], gateway: true });
      const before = await head();
      const refused = await post('/api/receipts', k.key, receipt('EXECUTED BY BANK').text);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'provenance_not_permitted', provenance_class: 'EXECUTED BY BANK', permitted: ['LOGGED BY AGENT', 'EXECUTED BY LEDGER', 'EXECUTED BY ACME'] });
      expect((await post('/api/receipts', k.key, receipt('OBSERVED VIA GATEWAY').text)).body.error).toBe('provenance_not_permitted');
      expect((await post('/api/receipts', g.key, receipt('EXECUTED BY LEDGER').text)).body.error).toBe('provenance_not_permitted');
      expect(await head()).toEqual(before);
      expect((await post('/api/receipts', k.key, receipt('EXECUTED BY ACME').text)).status).toBe(201);
      expect((await post('/api/receipts', k.key, receipt('LOGGED BY AGENT').text)).status).toBe(201);
      expect((await post('/api/receipts', g.key, receipt('OBSERVED VIA GATEWAY').text)).status).toBe(201);
    });

    it('applies the list to timeline entries (append and import) and to each batch line alone', async () => {
      const k = await key('gen-only', 'producer', { systems: ['aer1-generate'] });
      const g = await key('gateway-only', 'producer', { gateway: true });
      const job = `job-prov-${randomUUID()}`;
      const entries = [...timelineEntries({ entries: 3, job })]; // seq 1 OBSERVED VIA GATEWAY, 2 LOGGED BY AGENT, 3 EXECUTED BY aer1-generate
      expect(entries.map((e) => e.provenance_class)).toEqual(['OBSERVED VIA GATEWAY', 'LOGGED BY AGENT', 'EXECUTED BY aer1-generate']);
      expect((await post(`/api/jobs/${job}/entries`, g.key, JSON.stringify(entries[0]))).status).toBe(201);
      expect((await post(`/api/jobs/${job}/entries`, g.key, JSON.stringify(entries[1]))).status).toBe(201);
      const executed = await post(`/api/jobs/${job}/entries`, g.key, JSON.stringify(entries[2]));
      expect(executed.status).toBe(403);
      expect(executed.body.error).toBe('provenance_not_permitted');
      const imported = `job-prov-import-${randomUUID()}`;
      const imp = await t.http.put(`/api/jobs/${imported}/timeline`).set('Authorization', `Bearer ${k.key}`).set('Content-Type', 'application/json').send(JSON.stringify([...timelineEntries({ entries: 3, job: imported })]));
      expect(imp.status).toBe(403);
      expect(imp.body.error).toBe('provenance_not_permitted');
      expect((await t.http.get(`/api/jobs/${imported}/verify`)).status).toBe(404);
      const lines = [receipt('EXECUTED BY aer1-generate'), receipt('EXECUTED BY OTHER'), receipt('LOGGED BY AGENT')];
      const batch = await post('/api/receipts/batch', k.key, lines.map((l) => l.text).join('\n'), 'application/x-ndjson');
      expect(batch.status).toBe(200);
      expect(batch.body).toMatchObject({ accepted: 2, rejected: 1 });
      expect(batch.body.results.map((r: { status: number }) => r.status)).toEqual([201, 403, 201]);
      expect(batch.body.results[1].error).toBe('provenance_not_permitted');
    });

    it('creates restricted keys over the admin API and refuses bad options with 422 invalid_key_options', async () => {
      const ok = await post('/api/keys', t.keys.admin, JSON.stringify({ name: 'platform', role: 'producer', owner: 'acme', systems: ['LEDGER'], gateway: true, publication: 'metadata' }));
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ name: 'platform', role: 'producer', owner: 'acme', systems: ['LEDGER'], gateway: true, publication: 'metadata' });
      for (const bad of [{ systems: 'LEDGER' }, { systems: [' LEDGER'] }, { systems: ['A', 'A'] }, { gateway: 'yes' }, { publication: 'secret' }, { owner: 'a\u202eb' }, { owner: '' }, { systems: [''] }]) {
        const r = await post('/api/keys', t.keys.admin, JSON.stringify({ name: 'x', role: 'producer', ...bad }));
        expect([r.status, r.body.error]).toEqual([422, 'invalid_key_options']);
      }
      for (const role of ['auditor', 'compliance', 'admin']) {
        const r = await post('/api/keys', t.keys.admin, JSON.stringify({ name: 'x', role, systems: ['ACME'] }));
        expect([r.status, r.body.error]).toEqual([422, 'invalid_key_options']); // a list would restrict nothing on a key that records no provenance
      }
      const unknown = await post('/api/keys', t.keys.admin, JSON.stringify({ name: 'x', role: 'producer', roles: ['admin'] }));
      expect([unknown.status, unknown.body.error]).toEqual([400, 'invalid_body']);
      const listed = (await t.http.get('/api/keys').set('Authorization', `Bearer ${t.keys.admin}`)).body as { name: string; systems: string[] | null }[];
      expect(listed.find((k) => k.name === 'platform')).toMatchObject({ owner: 'acme', systems: ['LEDGER'], gateway: true, publication: 'metadata' });
    });
  });

  describe('publication setting (S13)', () => {
    it('withholds the canonical bytes of a metadata key\'s receipt from the public and serves them to auditors', async () => {
      const k = await key('private-platform', 'producer', { publication: 'metadata' });
      const secret = receipt('EXECUTED BY LEDGER', { customer: 'Jane Roe', iban: 'DE89370400440532013000' });
      const encoded = (JSON.parse(secret.text) as { canonical_bytes: string }).canonical_bytes;
      expect((await post('/api/receipts', k.key, secret.text)).status).toBe(201);

      const pub = await t.http.get(`/run/${secret.id}`);
      expect(pub.status).toBe(200);
      expect(pub.text).not.toContain('Jane Roe');
      expect(pub.text).not.toContain(encoded);
      expect(pub.text).toContain('id="bytes-withheld"');
      expect(pub.text).toContain('private-platform');
      const pubJson = (await t.http.get(`/run/${secret.id}`).set('Accept', 'application/json')).body;
      expect(pubJson.raw).toBeNull();
      expect(pubJson.receipt.canonical_bytes).toBe('(withheld)');
      expect(pubJson.receipt.output_hash).toBe(JSON.parse(secret.text).output_hash);
      expect(pubJson.canonical_bytes_withheld).toMatchObject({ setting: 'metadata', by: { key_id: k.id, name: 'private-platform' } });
      expect(pubJson.verification.verdict).toBe('valid');
      expect(JSON.stringify(pubJson)).not.toContain(encoded);

      const verify = await t.http.get(`/api/receipt/${secret.id}/verify`);
      expect(verify.status).toBe(200);
      expect(verify.body).toMatchObject({ verdict: 'valid', publication: 'metadata' });
      expect(verify.body.statement).toContain('server-side');
      expect(verify.body.output_hash).toBe(JSON.parse(secret.text).output_hash);

      const producer = await t.http.get(`/run/${secret.id}`).set('Accept', 'application/json').set('Authorization', `Bearer ${t.keys.producer}`);
      expect(producer.body.raw).toBeNull();
      const auditor = await t.http.get(`/run/${secret.id}`).set('Accept', 'application/json').set('Authorization', `Bearer ${t.keys.auditor}`);
      expect(auditor.body.raw).toBe(secret.text);
      expect(auditor.body.canonical_bytes_withheld).toBeNull();
      expect((await t.http.get(`/run/${secret.id}`).set('Authorization', `Bearer ${t.keys.auditor}`)).text).toContain('Jane Roe');
      const bad = await t.http.get(`/run/${secret.id}`).set('Authorization', 'Bearer not-a-key');
      expect([bad.status, bad.body.error]).toEqual([401, 'invalid_key']);
    });

    it('keeps full publication for keys without the setting, and withholds timeline entry bytes for metadata keys', async () => {
      const open = await key('public-platform', 'producer');
      const r = receipt('EXECUTED BY LEDGER', { visible: true });
      expect((await post('/api/receipts', open.key, r.text)).status).toBe(201);
      expect((await t.http.get(`/run/${r.id}`).set('Accept', 'application/json')).body.raw).toBe(r.text);

      const k = await key('private-timelines', 'producer', { publication: 'metadata' });
      const job = `job-private-${randomUUID()}`;
      const entries = [...timelineEntries({ entries: 2, job })];
      expect((await post(`/api/jobs/${job}/entries`, k.key, JSON.stringify(entries))).status).toBe(201);
      const pub = (await t.http.get(`/api/jobs/${job}/timeline`)).body;
      expect(pub.entries.map((e: Record<string, unknown>) => [e.canonical_bytes, e.canonical_bytes_withheld])).toEqual([
        [undefined, true],
        [undefined, true],
      ]);
      expect(pub.entries.map((e: Record<string, unknown>) => e.entry_digest)).toEqual(
        (await t.http.get(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${t.keys.auditor}`)).body.entries.map((e: Record<string, unknown>) => e.entry_digest),
      );
      const aud = (await t.http.get(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${t.keys.auditor}`)).body;
      expect(aud.entries.map((e: Record<string, unknown>) => e.canonical_bytes)).toEqual(entries.map((e) => e.canonical_bytes));
      expect((await t.http.get(`/api/jobs/${job}/verify`)).body.verdict).toBe('valid');
    });
  });
});
