/**
 * Evidence over erased records (issue 29), on SQLite and PostgreSQL: two
 * payment jobs whose tool outputs name a customer; one receipt of the first
 * and the whole second job are erased. Coverage reports issued afterwards
 * count the erased evidence as recorded and verified at ingestion and name
 * it (page and PDF too); a report issued before keeps its digest and says it
 * can no longer be recomputed; each job's evidence pack verifies offline
 * with `aer1 verify-pack`, lists the erased members and carries the erasure
 * event, and a pack whose member claims an erasure without that event fails.
 */
import type { Response as SaResponse } from 'superagent';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { PackWriter } from '../../src/core/pack/format';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { cli, TmpDir } from '../cli/helpers';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { receiptFor } from '../coverage/fixtures';
import { paymentPlan } from '../outcomes/fixtures';
import { forbiddenStrings, leaksIn, PersonalJob, personalTimeline, post, recordPersonalJob } from './fixtures';

interface Member {
  member: string;
  [k: string]: unknown;
}
const lines = (text: string): Member[] => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Member);
const text = (res: SaResponse, cb: (err: Error | null, body: string) => void): void => {
  let s = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (s += c));
  res.on('end', () => cb(null, s));
};
const repack = (members: Member[]): string => {
  const w = new PackWriter();
  let out = '';
  for (const m of members) if (m.member !== 'manifest' && !m.member.startsWith('manifest/')) out += w.member(m);
  return out + w.finish();
};

describe.each(DIALECTS)('evidence over erased records on %s', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  const tmp = new TmpDir();
  let a: PersonalJob;
  let b: PersonalJob;
  let vkey = '';
  let before = { report_id: '', digest: '' };
  let receiptErasure = { erasure_id: '', positions: [] as number[], erasure_position: 0 };
  let jobErasure = { erasure_id: '', positions: [] as number[], erasure_position: 0 };

  const get = (path: string, key = t.keys.auditor) => t.http.get(path).set('Authorization', `Bearer ${key}`);
  const pack = async (path: string): Promise<string> => {
    const r = await get(path).buffer(true).parse(text);
    expect(r.status).toBe(200);
    return r.body as string;
  };

  beforeAll(async () => {
    t = await startApp(dialect);
    const payments = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
    a = await recordPersonalJob(t, `ev-a-${dialect}`, payments);
    b = await recordPersonalJob(t, `ev-b-${dialect}`, payments);
    const rep = await post(t, '/api/coverage-reports', { job_id: b.job }, t.keys.auditor);
    expect(rep.status).toBe(201);
    before = { report_id: rep.body.report_id, digest: rep.body.digest };
    const e1 = await post(t, '/api/erasures', { receipt_ids: [a.entries[0].id], reason: 'customer request 17', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect(e1.status).toBe(201);
    receiptErasure = e1.body;
    const e2 = await post(t, '/api/erasures', { job_ids: [b.job], reason: 'customer request 18', legal_basis: 'GDPR Art. 17(1)(b)' }, t.keys.privacy);
    expect(e2.status).toBe(201);
    jobErasure = e2.body;
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey;
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('issues a report after the erasure: erased evidence counted as recorded and verified at ingestion, and named', async () => {
    for (const [j, note] of [[a, receiptErasure], [b, jobErasure]] as const) {
      const r = await post(t, '/api/coverage-reports', { job_id: j.job }, t.keys.auditor);
      expect([r.status, r.body.error]).toEqual([201, undefined]);
      const g = await get(`/api/coverage-reports/${r.body.report_id}`);
      expect(g.status).toBe(200);
      const rep = g.body.report;
      expect(rep.counts).toMatchObject({ expected_actions: 2, covered: 2, missing: 0, recorded_actions: 2 });
      expect(rep.result).toBe('findings');
      const erased = (rep.findings as { code: string; seq?: number; message: string }[]).filter((f) => f.code === 'evidence_erased');
      const bySeq = erased.filter((f) => f.seq !== undefined);
      if (j === a) {
        // Only the first receipt: its entry is held, the chain still verifies.
        expect(rep.integrity.verdict).toBe('valid');
        expect(bySeq.map((f) => f.seq)).toEqual([1]);
        expect(bySeq[0].message).toBe(`seq 1: the content of the receipt ${a.entries[0].id} was erased on ${new Date().toISOString().slice(0, 10)} by test-privacy (GDPR Art. 17(1)(a)): customer request 17 (erasure event at position ${note.erasure_position}); counted as recorded and verified at ingestion (recorded verdict valid), no longer re-checked`);
        expect(rep.actions[0].evidence[0]).toMatchObject({ seq: 1, outcome: 'success', receipt_recorded: true, evidence_erased: { entry: false, receipt: true, recorded_verdict: 'valid' } });
        expect(rep.actions[0].evidence[0].receipt_mismatch).toBeUndefined();
      } else {
        // The whole job: the chain can no longer be re-checked; the verdict recorded at ingestion is kept.
        expect([rep.integrity.verdict, rep.integrity.recorded_verdict, rep.integrity.erased_entries, rep.integrity.final_entry_digest]).toEqual(['erased', 'valid', [1, 2], null]);
        expect(bySeq.map((f) => f.seq)).toEqual([1, 2]);
        expect(erased.some((f) => f.message.startsWith('outcome report ') && f.message.includes('customer request 18'))).toBe(true);
        expect(rep.findings.some((f: { code: string }) => f.code === 'timeline_not_valid')).toBe(false);
        expect(rep.actions.map((x: { status: string }) => x.status)).toEqual(['covered', 'covered']);
        expect(leaksIn(JSON.stringify(g.body), forbiddenStrings([b]))).toEqual([]);
        // The page and the PDF name it.
        const page = await t.http.get(`/coverage/${r.body.report_id}`);
        expect(page.status).toBe(200);
        expect(page.text).toContain('evidence_erased');
        expect(page.text).toContain('ERASED');
        expect(page.text).not.toMatch(/Timeline: VALID/i);
        const pdf = await t.http.get(`/coverage/${r.body.report_id}.pdf`).buffer(true);
        expect(pdf.status).toBe(200);
      }
      expect(rep.does_not_prove.some((x: string) => x.startsWith('Erased evidence (findings evidence_erased)'))).toBe(true);
    }
    // A report issued before the erasure keeps its stored digest.
    const old = await get(`/api/coverage-reports/${before.report_id}`);
    expect([old.status, old.body.digest, old.body.digest_verified]).toEqual([200, before.digest, true]);
  });

  it('packs verify offline, list the erased members and carry the erasure event; without that event the pack fails', async () => {
    await t.app.get(CheckpointSigner).tick();
    const bText = await pack(`/api/jobs/${b.job}/evidence`);
    const ms = lines(bText);
    // The erased members: leaf present, payload absent, the erasure named; the PayloadsErased event is in the pack.
    const erasedEvents = ms.filter((m) => m.member.startsWith('event/') && m.erased);
    expect(erasedEvents.map((m) => m.position).sort((x, y) => Number(x) - Number(y))).toEqual(jobErasure.positions.filter((p) => p <= Number(ms[0].as_of_position)));
    expect(erasedEvents.every((m) => typeof m.leaf === 'string' && m.payload === null && m.payload_salt === null)).toBe(true);
    expect(ms.find((m) => m.member === `event/${jobErasure.erasure_position}`)).toMatchObject({ type: 'PayloadsErased', payload: expect.any(String) });
    expect(ms.filter((m) => m.member.startsWith('entry/')).map((m) => [m.member, m.raw, (m.erased as { erasure_id: string }).erasure_id])).toEqual([['entry/1', null, jobErasure.erasure_id], ['entry/2', null, jobErasure.erasure_id]]);
    const file = tmp.write('b.jsonl', bText);
    const v = await cli(['verify-pack', file, '--vkey', vkey, '--json']);
    const j = JSON.parse(v.out) as { verified: boolean; failures: unknown[]; counts: Record<string, number>; not_checked: string[]; reports: { report_id: string; digest: string; recomputed: string | null }[] };
    // The report issued after the erasure (first test) recomputes offline from the retained data in the pack's erasure event.
    const afterReports = j.reports.filter((x) => x.report_id !== before.report_id);
    expect(afterReports.length).toBe(1);
    expect(afterReports[0].recomputed).toBe(afterReports[0].digest);
    expect([v.code, j.verified, j.failures]).toEqual([0, true, []]);
    expect(j.counts.erased).toBe(erasedEvents.length);
    expect(j.not_checked.filter((x) => x.startsWith('entry/')).length).toBe(2);
    expect(j.not_checked.some((x) => x.startsWith('entry/1: content erased on') && x.includes('customer request 18'))).toBe(true);
    // The report issued before the erasure keeps its digest and says it can no longer be recomputed; the one after recomputes.
    expect(j.not_checked).toContain(`report/${before.report_id}: no longer recomputable: an event it reads was erased after it was issued (its stored digest stands, checked above)`);
    const txt = await cli(['verify-pack', file, '--vkey', vkey]);
    expect(txt.out).toContain(`Result: VERIFIED (every member matches the manifest, every record is in the log under the signed checkpoint, every content held verified, every stream held to its signed head); ${erasedEvents.length} events erased (listed above): recorded under the signed checkpoint, their content gone and not verified`);
    expect(txt.out).not.toContain('every verdict and report recomputed');
    expect(txt.out).toMatch(/format 3 payloads match their leaf commitments; erased content is backed by its erasure event in the pack: \d+ passed\n/);
    expect(txt.out).toContain('entry/2: content erased on');
    // Erased content is never in the pack, but for the report issued before the erasure: a report is not erasable and holds the outcome's output hash.
    const leaks = ms.filter((m) => m.member !== `report/${before.report_id}`).flatMap((m) => leaksIn(JSON.stringify(m), forbiddenStrings([b])));
    expect(leaks).toEqual([]);
    // A member that claims an erasure whose PayloadsErased event is not in the pack fails.
    const bad = repack(ms.filter((m) => m.member !== `event/${jobErasure.erasure_position}`));
    const vb = JSON.parse((await cli(['verify-pack', tmp.write('bad.jsonl', bad), '--vkey', vkey, '--json'])).out) as { verified: boolean; failures: { member: string; check: string }[] };
    expect(vb.verified).toBe(false);
    expect(vb.failures.filter((f) => f.check === 'payload_commitment').map((f) => f.member).sort()).toEqual(erasedEvents.map((m) => m.member).sort());
    // Job a: one receipt erased, its entry held.
    const aText = await pack(`/api/jobs/${a.job}/evidence`);
    const va = JSON.parse((await cli(['verify-pack', tmp.write('a.jsonl', aText), '--vkey', vkey, '--json'])).out) as { verified: boolean; failures: unknown[]; not_checked: string[] };
    expect([va.verified, va.failures]).toEqual([true, []]);
    expect(va.not_checked.some((x) => x.startsWith(`receipt/${a.entries[0].id}: content erased on`))).toBe(true);
    void receiptErasure;
  });
  it('a workflow report counts an erased step receipt as recorded at ingestion, and says the workflow is no longer re-checked', async () => {
    const steps = personalTimeline(`ev-wf-${dialect}`);
    for (const e of steps) expect((await post(t, '/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    const wf = await post(t, '/api/workflows/assemble', { session_id: `s-${dialect}`, goal: 'erasure', status: 'ok', receipt_ids: steps.map((e) => e.id), output: 'done' }, t.keys.producer);
    expect(wf.status).toBe(201);
    const workflowId = (wf.body.workflow_id ?? wf.body.id) as string;
    const plan = { workflow_id: workflowId, title: 'wf', expected_actions: [{ action_id: 'lookup', tool: 'fetch_customer' }, { action_id: 'pay', tool: 'send_payment' }] };
    expect((await post(t, '/api/plans', plan, t.keys.compliance)).status).toBe(201);
    const e = await post(t, '/api/erasures', { receipt_ids: [steps[0].id], reason: 'customer request 19', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect(e.status).toBe(201);
    const r = await post(t, '/api/coverage-reports', { workflow_id: workflowId }, t.keys.auditor);
    expect(r.status).toBe(201);
    const rep = (await get(`/api/coverage-reports/${r.body.report_id}`)).body.report;
    expect(rep.counts).toMatchObject({ expected_actions: 2, covered: 2, missing: 0 });
    expect([rep.integrity.verdict, rep.integrity.erased_entries]).toEqual(['erased', [1]]);
    const erased = (rep.findings as { code: string; seq?: number; message: string }[]).filter((f) => f.code === 'evidence_erased');
    expect(erased.map((f) => f.seq ?? null)).toEqual([null, 1]);
    expect(erased[1].message).toContain('customer request 19');
  });
  it('an imported timeline erased whole: its entries stand in from the retained import, the verdict recorded at import is kept', async () => {
    const job = `ev-import-${dialect}`;
    expect((await post(t, '/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    const entries = personalTimeline(job);
    for (const e of entries) expect((await post(t, '/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    const put = await t.http.put(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(entries));
    expect(put.status).toBe(201);
    expect((await post(t, '/api/erasures', { job_ids: [job], reason: 'customer request 20', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy)).status).toBe(201);
    const r = await post(t, '/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    const rep = (await get(`/api/coverage-reports/${r.body.report_id}`)).body.report;
    expect(rep.counts).toMatchObject({ expected_actions: 2, covered: 2, recorded_actions: 2 });
    expect([rep.integrity.verdict, rep.integrity.recorded_verdict, rep.integrity.erased_entries, rep.integrity.closed]).toEqual(['erased', 'valid', [1, 2], true]);
    expect(rep.actions[0].evidence[0]).toMatchObject({ seq: 1, tool: 'fetch_customer', receipt_id: entries[0].id, outcome: 'success', evidence_erased: { entry: true, receipt: true, recorded_verdict: 'valid' } });
    // The timeline, each of its two actions (entry and receipt erased), and the commitment the ledger issued on the closed import.
    const found = rep.findings.filter((f: { code: string }) => f.code === 'evidence_erased') as { seq?: number; commitment?: string }[];
    expect(found.map((f) => [f.seq ?? null, f.commitment === undefined])).toEqual([[null, true], [1, true], [2, true], [null, false]]);
    // Its pack: the import's entries are erased members (seq kept, no bytes), and the pack verifies.
    await t.app.get(CheckpointSigner).tick();
    const ms = lines(await pack(`/api/jobs/${job}/evidence`));
    expect(ms.filter((m) => m.member.startsWith('entry/')).map((m) => [m.member, m.raw, typeof m.erased])).toEqual([['entry/1', null, 'object'], ['entry/2', null, 'object']]);
    const v = JSON.parse((await cli(['verify-pack', tmp.write('import.jsonl', repack(ms)), '--vkey', vkey, '--json'])).out) as { verified: boolean; failures: unknown[]; not_checked: string[] };
    expect([v.verified, v.failures]).toEqual([true, []]);
    expect(v.not_checked.filter((x) => /^(entry|receipt)\/.*: content erased on/.test(x)).length).toBe(4);
  });

  it('a plan version erased by position: the pack lists it, its report is no longer recomputable (not failed); the report erased too is listed, never recomputed', async () => {
    const job = `ev-plan-${dialect}`;
    const payments = (await t.app.get(ApiKeysService).create(`payments-${dialect}-plan`, 'outcome', { systems: ['PAYMENTS'] })).key;
    await recordPersonalJob(t, job, payments);
    const rep = await post(t, '/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(rep.status).toBe(201);
    const planId = (await get(`/api/plans?job_id=${job}`)).body.plan_id as string;
    const planPos = (await get(`/api/plans/${planId}/versions/1`)).body.position as number;
    const reportPos = (await get(`/api/coverage-reports/${rep.body.report_id}`)).body.position as number;
    const e1 = await post(t, '/api/erasures', { positions: [planPos], reason: 'customer request 21', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect(e1.status).toBe(201);
    // The report, issued before, now leads with its plan erased since.
    expect((await get(`/api/coverage-reports/${rep.body.report_id}`)).body.evidence_erased_since).toEqual({ count: 1, erased_at: e1.body.erased_at, erasure_id: e1.body.erasure_id });
    // Its page shows no covered row in green: each reads "covered as issued" in amber, in the table and the picture (a new user saw green ticks).
    const page = (await t.http.get(`/coverage/${rep.body.report_id}`).set('Accept', 'text/html')).text;
    expect(page).not.toContain('class="s-covered"');
    expect(page.match(/<td class="s-erased">covered as issued<br>/g)).toHaveLength(2);
    expect(page).toContain('id="integrity-as-issued"');
    // ... and the picture's accepted marks are amber "as issued" circles, none green.
    expect(page).toMatch(/<circle [^>]*fill="#9a6700"><title>[^<]*: accepted, as issued \(not re-checkable now\)<\/title>/);
    expect(page).not.toMatch(/<circle [^>]*fill="#1a7f37"><title>/);
    expect(page).not.toContain('<span class="badge ok">ledger-issued</span>');
    await t.app.get(CheckpointSigner).tick();
    const check = async (name: string): Promise<{ verified: boolean; failures: unknown[]; not_checked: string[] }> => {
      const ms = lines(await pack(`/api/coverage-reports/${rep.body.report_id}/evidence`));
      expect(ms.some((m) => JSON.stringify(m).includes('Pay supplier invoice') && m.member !== `report/${rep.body.report_id}`)).toBe(false);
      return JSON.parse((await cli(['verify-pack', tmp.write(name, repack(ms)), '--vkey', vkey, '--json'])).out) as { verified: boolean; failures: unknown[]; not_checked: string[] };
    };
    const v1 = await check('plan-erased.jsonl');
    expect([v1.verified, v1.failures]).toEqual([true, []]);
    expect(v1.not_checked.filter((x) => x.startsWith(`plan/${planId}/1: content erased on `) && x.includes('customer request 21'))).toHaveLength(1);
    expect(v1.not_checked).toContain(`report/${rep.body.report_id}: no longer recomputable: the plan version in force (position ${planPos}) was erased (an event it reads was erased after it was issued; its stored digest stands, checked above)`);
    const e2 = await post(t, '/api/erasures', { positions: [reportPos], reason: 'customer request 22', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy);
    expect(e2.status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const v2 = await check('report-erased.jsonl');
    expect([v2.verified, v2.failures]).toEqual([true, []]);
    expect(v2.not_checked.filter((x) => x.startsWith(`report/${rep.body.report_id}: content erased on `) && x.includes('customer request 22'))).toHaveLength(1);
    expect(v2.not_checked.some((x) => x.startsWith(`report/${rep.body.report_id}: no longer recomputable`))).toBe(false);
  });
});
