/**
 * Completeness under attack (issue 30): an operator who does NOT hold the log
 * key cuts records out of an evidence pack, rebuilds the manifest with the
 * server's own writer, and swaps the pack's stream-heads statement for one
 * the ledger signs for anyone (`GET /api/ledger/stream-heads` is a public
 * read: any list of streams, at any signed checkpoint size). `aer1
 * verify-pack` must not say VERIFIED on such a pack. Helpers as in
 * test/evidence/pack-completeness.e2e-spec.ts.
 */
import { isStatement, lines, Member, onStream, repack, text } from '../evidence/pack-lines';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { parseVerifierKey, verifyStreamHeads } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { cli, TmpDir } from '../cli/helpers';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import { uuidFor } from '../coverage/fixtures';

interface Verdict {
  code: number;
  verified: boolean;
  failures: { member: string; check: string; detail: string }[];
  completeness: { statements: number; streams: number; proven: boolean; not_provable_before: number | null };
  subject_result: { report_id: string; result: string } | null;
  not_checked: string[];
}


describe.each(DIALECTS)('completeness under attack on %s', (dialect) => {
  jest.setTimeout(240_000);
  let t: TestApp;
  let vkey = '';
  const tmp = new TmpDir();
  const job = `attack30-${dialect}`;
  let tl: ReturnType<typeof buildTimeline>;
  let jobPack = '';
  let firstReport = '';
  let secondReport = '';
  const corrected = `attack30-s9-${dialect}`;
  const odd = `a30 100%25 é ${dialect}`;
  let ctl: ReturnType<typeof buildTimeline>;
  let correction = '';
  let correctedPack = '';
  let oddPack = '';

  const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const pack = async (path: string): Promise<string> => {
    const r = await t.http.get(path).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);
    expect(r.status).toBe(200);
    return r.body as string;
  };
  async function verify(body: string): Promise<Verdict & { out: string }> {
    const file = tmp.write(`p-${Math.random().toString(36).slice(2)}.jsonl`, body);
    const r = await cli(['verify-pack', file, '--vkey', vkey, '--json']);
    const txt = await cli(['verify-pack', file, '--vkey', vkey]);
    return { ...(JSON.parse(r.out) as Verdict), code: r.code, out: txt.out };
  }
  const failures = (v: Verdict): [string, string][] => v.failures.map((f) => [f.member, f.check]);
  /** The streams the pack's own statements name. */
  const streamsOf = (ms: Member[]): string[] => ms.filter(isStatement).flatMap((m) => verifyStreamHeads(m.note as string, [parseVerifierKey(vkey)]).statement.heads.map((h) => h.streamId));
  /** What anyone can get without the log key: the ledger's own signed statement for `ids`, as of the pack's checkpoint. */
  async function publicStatements(ms: Member[], all: string[]): Promise<Member[]> {
    const size = ms.find((m) => m.member === 'log/checkpoint')!.size as number;
    const out: Member[] = [];
    // The pack's subject line is signed only into packs: the public endpoint refuses it (400), so a forger has none.
    const ids = all.filter((s) => !s.startsWith('subject:'));
    if (all.some((s) => s.startsWith('subject:'))) {
      const refused = await t.http.get(`/api/ledger/stream-heads?size=${size}&stream=${encodeURIComponent(all.find((s) => s.startsWith('subject:'))!)}`);
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_query']);
    }
    for (let i = 0; i < ids.length; i += 100) {
      const r = await t.http.get(`/api/ledger/stream-heads?size=${size}&${ids.slice(i, i + 100).map((s) => `stream=${encodeURIComponent(s)}`).join('&')}`);
      expect(r.status).toBe(200);
      out.push({ member: out.length === 0 ? 'log/stream-heads' : `log/stream-heads/${out.length + 1}`, note: r.text });
    }
    return out;
  }
  /** The pack with `drop` left out and its statements replaced by public ones naming every stream but `unnamed`. */
  async function forge(body: string, drop: (m: Member) => boolean, unnamed: (s: string) => boolean): Promise<string> {
    const ms = lines(body);
    const ids = streamsOf(ms).filter((s) => !unnamed(s));
    const kept = ms.filter((m) => !drop(m) && !isStatement(m));
    const at = kept.findIndex((m) => m.member.startsWith('manifest'));
    kept.splice(at < 0 ? kept.length : at, 0, ...(await publicStatements(ms, ids)));
    return repack(kept);
  }

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    vkey = t.app.get(LogIdentityService).current!.vkey;
    const payments = (await t.app.get(ApiKeysService).create(`payments-a30-${dialect}`, 'outcome', { systems: ['PAYMENTS'] })).key;
    expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    tl = buildTimeline(job, PAYMENT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    expect((await post('/api/outcomes', outcomeFor({ name: `${job}/settled`, job_id: job, receipt_id: tl[1].id }), payments)).status).toBe(201);
    const r1 = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect([r1.status, r1.body.result]).toEqual([201, 'full_coverage']);
    firstReport = r1.body.report_id as string;
    const reversed = outcomeFor({ name: `${job}/reversed`, job_id: job, receipt_id: tl[1].id, result: 'reversed', observed_at: '2026-10-01T12:05:00Z' });
    expect((await post('/api/outcomes', reversed, payments)).status).toBe(201);
    const r2 = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r2.status).toBe(201);
    expect(r2.body.result).not.toBe('full_coverage');
    secondReport = r2.body.report_id as string;
    // A second job: its plan amended once, its first receipt corrected (S9).
    expect((await post('/api/plans', paymentPlan(corrected), t.keys.compliance)).status).toBe(201);
    ctl = buildTimeline(corrected, PAYMENT_STEPS);
    for (const e of ctl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${corrected}/entries`, ctl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${corrected}/commitments`, commitmentFor(ctl), t.keys.producer)).status).toBe(201);
    correction = uuidFor(`${corrected}/r1-corrected`);
    expect((await post(`/api/receipts/${ctl[0].id}/corrections`, { ...receiptFor(ctl[0]), id: correction }, t.keys.producer)).status).toBe(201);
    const planId = ((await t.http.get(`/api/plans?job_id=${corrected}`).set('Authorization', `Bearer ${t.keys.compliance}`)).body as { plan_id: string }).plan_id;
    const am = await post(`/api/plans/${planId}/amendments`, { ...paymentPlan(corrected), title: 'amended', reason: 'scope', supersedes_version: 1 }, t.keys.compliance);
    expect(am.status).toBe(201);
    // A job whose id holds a space, a percent sign and non-ASCII text.
    const otl = buildTimeline(odd, PAYMENT_STEPS);
    for (const e of otl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${encodeURIComponent(odd)}/entries`, otl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${encodeURIComponent(odd)}/commitments`, commitmentFor(otl), t.keys.producer)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    jobPack = await pack(`/api/jobs/${encodeURIComponent(job)}/evidence`);
    correctedPack = await pack(`/api/jobs/${encodeURIComponent(corrected)}/evidence`);
    oddPack = await pack(`/api/jobs/${encodeURIComponent(odd)}/evidence`);
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('the job pack as served verifies, and its subject line is the newest report (a finding)', async () => {
    const v = await verify(jobPack);
    expect([v.code, v.verified, failures(v)]).toEqual([0, true, []]);
    expect(v.subject_result?.report_id).toBe(secondReport);
    // Control: the forging machinery with nothing dropped: a public statement, even naming every other stream,
    // binds no subject (the pack writer alone signs subject lines), so the swap alone is named.
    const same = await verify(await forge(jobPack, () => false, () => false));
    expect([same.code, same.verified, failures(same)]).toEqual([1, false, [[`subject:job:${job}`, 'stream_unlisted']]]);
  });

  // Was a hole: a public statement without the newest report's stream, swapped in, left a verified pack showing the
  // older FULL report. Since the pack's first statement carries its subject line (signed only into packs, with every
  // plan and report stream of the subject), a public statement binds no subject: stream_unlisted.
  it('the newest coverage report dropped, with a public statement not naming it: not VERIFIED', async () => {
    const v = await verify(await forge(jobPack, (m) => m.member === `report/${secondReport}` || onStream(m, `coverage:${secondReport}`), (s) => s === `coverage:${secondReport}`));
    expect(v.subject_result).toMatchObject({ report_id: firstReport, established: false });
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`subject:job:${job}`, 'stream_unlisted']]));
  });

  // Was a hole, likewise for plans (every plan version and every report dropped): closed the same way.
  it('the only plan (and the reports that used it) dropped, with a public statement not naming them: not VERIFIED', async () => {
    const ms = lines(jobPack);
    const planIds = ms.filter((m) => m.member.startsWith('plan/')).map((m) => m.plan_id as string);
    expect(planIds).toHaveLength(1);
    const gone = (s: string): boolean => s === `plan:${planIds[0]}` || s.startsWith('coverage:');
    const goneStreams = streamsOf(ms).filter(gone);
    expect(goneStreams).toHaveLength(3);
    const v = await verify(await forge(jobPack, (m) => m.member.startsWith('plan/') || m.member.startsWith('report/') || goneStreams.some((s) => onStream(m, s)), gone));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`subject:job:${job}`, 'stream_unlisted']]));
    // The genuine statement kept instead: the plan and report streams it names are short (stream_incomplete).
    const ms2 = lines(jobPack).filter((m) => !(m.member.startsWith('plan/') || m.member.startsWith('report/') || goneStreams.some((s) => onStream(m, s))));
    const kept = await verify(repack(ms2));
    expect(failures(kept).filter(([, c]) => c === 'stream_incomplete').map(([m]) => m).sort()).toEqual([...goneStreams].sort());
  });

  it('a receipt of the job dropped, with a public statement not naming it: stream_unlisted', async () => {
    const rid = tl[1].id;
    const v = await verify(await forge(jobPack, (m) => m.member === `receipt/${rid}` || onStream(m, `receipt:${rid}`), (s) => s === `receipt:${rid}`));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`receipt:${rid}`, 'stream_unlisted']]));
  });

  it("an outcome dropped, with a public statement naming neither its stream nor the receipt's answer set: stream_unlisted", async () => {
    const rid = tl[1].id;
    const outs = lines(jobPack).filter((m) => m.member.startsWith('outcome/'));
    expect(outs).toHaveLength(2);
    const o = outs[1].id as string;
    const v = await verify(await forge(jobPack, (m) => m.member === `outcome/${o}` || onStream(m, `outcome:${o}`), (s) => s === `outcome:${o}` || s.startsWith(`answers:${rid}`)));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`answers:${rid}:timeline:${job}`, 'stream_unlisted']]));
  });

  it('a corrected receipt: the correction and the superseding receipt dropped, with a public statement not naming it: caught', async () => {
    const ok = await verify(correctedPack);
    expect([ok.code, ok.verified, failures(ok)]).toEqual([0, true, []]);
    const ms = lines(correctedPack);
    expect(ms.some((m) => m.member === `receipt/${correction}`)).toBe(true);
    const corr = ms.find((m) => onStream(m, `receipt:${ctl[0].id}`) && m.type === 'ReceiptCorrected')!;
    expect(corr).toBeDefined();
    const v = await verify(await forge(correctedPack, (m) => m.member === corr.member || m.member === `receipt/${correction}` || onStream(m, `receipt:${correction}`), (s) => s === `receipt:${correction}`));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual([
      [`subject:job:${corrected}`, 'stream_unlisted'],
      [`receipt:${ctl[0].id}`, 'stream_incomplete'],
    ]);
  });

  it('the newest plan version dropped (the older kept), with a public statement: caught as the plan stream short of its head', async () => {
    const ms = lines(correctedPack);
    const versions = ms.filter((m) => m.member.startsWith('plan/'));
    expect(versions.map((m) => m.version)).toEqual([1, 2]);
    const v2 = versions[1];
    const v = await verify(await forge(correctedPack, (m) => m.member === v2.member || m.member === `event/${v2.position as number}`, () => false));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`plan:${v2.plan_id as string}`, 'stream_incomplete']]));
  });

  it('a job id with a space, "%" and non-ASCII text: the served pack verifies; its receipt dropped is caught', async () => {
    const ok = await verify(oddPack);
    expect([ok.code, ok.verified, failures(ok)]).toEqual([0, true, []]);
    expect(streamsOf(lines(oddPack))).toContain(`timeline:${odd}`);
    const e2 = lines(oddPack).find((m) => m.member === 'entry/2')!;
    const v = await verify(await forge(oddPack, (m) => m.member === `event/${e2.position as number}`, () => false));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`timeline:${odd}`, 'stream_incomplete']]));
  });

  it("statements spliced: another job's statement added, or one statement twice: never VERIFIED on the other job's streams, harmless twice", async () => {
    const ms = lines(jobPack);
    const own = ms.filter(isStatement);
    const other = lines(oddPack).filter(isStatement).map((m, i) => ({ ...m, member: `log/stream-heads/${own.length + 1 + i}` }));
    const at = ms.findIndex((m) => m.member.startsWith('manifest'));
    const spliced = [...ms.slice(0, at), ...other, ...ms.slice(at)];
    const v = await verify(repack(spliced));
    expect([v.code, v.verified]).toEqual([1, false]);
    expect(failures(v)).toEqual(expect.arrayContaining([[`timeline:${odd}`, 'stream_incomplete']]));
    const twice = [...ms.slice(0, at), { ...own[0], member: `log/stream-heads/${own.length + 1}` }, ...ms.slice(at)];
    const w = await verify(repack(twice));
    expect([w.code, w.verified, failures(w)]).toEqual([0, true, []]);
  });

  it('a huge or malformed note in a statement member: one stream_heads failure, no crash', async () => {
    const ms = lines(jobPack);
    const own = ms.find((m) => m.member === 'log/stream-heads')!;
    for (const note of ['x'.repeat(3_000_000), `${own.note as string}`.replace('aer1-stream-heads/1', 'aer1-stream-heads/2'), '\u0000\n\n', `${own.note as string}extra\n`]) {
      const v = await verify(repack(ms.map((m) => (m === own ? { ...m, note } : m))));
      expect([v.code, v.verified]).toEqual([1, false]);
      expect(failures(v)).toEqual([['log/stream-heads', 'stream_heads']]);
    }
  });

  it("the answer set of another job swapped in for the job's own: stream_unlisted", async () => {
    const ms = lines(jobPack);
    const rid = tl[1].id;
    const ids = streamsOf(ms).map((s) => (s === `answers:${rid}:timeline:${job}` ? `answers:${rid}:timeline:${corrected}` : s));
    const forged = [...ms.filter((m) => !isStatement(m))];
    const at = forged.findIndex((m) => m.member.startsWith('manifest'));
    forged.splice(at, 0, ...(await publicStatements(ms, ids)));
    const v = await verify(repack(forged));
    expect(v.verified).toBe(false);
    expect(failures(v)).toEqual(expect.arrayContaining([[`answers:${rid}:timeline:${job}`, 'stream_unlisted']]));
  });

  it('an erased format 3 head rewritten as a format 1/2 stub (leaf null) to stop the walk, an earlier event dropped: caught', async () => {
    const e = `attack30-erase-${dialect}`;
    const etl = buildTimeline(e, PAYMENT_STEPS);
    for (const x of etl) expect((await post('/api/receipts', receiptFor(x), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${e}/entries`, etl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${e}/commitments`, commitmentFor(etl), t.keys.producer)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const evs = lines(await pack(`/api/jobs/${e}/evidence`)).filter((m) => onStream(m, `timeline:${e}`));
    const head = evs[evs.length - 1];
    expect((await post('/api/erasures', { positions: [head.position], reason: 'test', legal_basis: 'GDPR Art. 17(1)(a)' }, t.keys.privacy)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const body = await pack(`/api/jobs/${e}/evidence`);
    const ms = lines(body);
    expect((await verify(body)).verified).toBe(true); // format 3: the erased head's leaf is still there, so the walk passes it
    const stub = (m: Member): Member => (m.member === head.member ? { ...m, leaf: null, payload: undefined, payload_salt: undefined } : m);
    const v = await verify(repack(ms.map(stub).filter((m) => m.member !== evs[0].member)));
    expect([v.code, v.verified]).toEqual([1, false]);
    expect(failures(v)).toEqual(expect.arrayContaining([[head.member, 'subject'], ['entry/1', 'leaf_bytes']]));
  });

  it('an imported timeline (one TimelineImported event): a middle entry and its receipt dropped, with a public statement: caught', async () => {
    const im = `attack30-import-${dialect}`;
    const itl = buildTimeline(im, [{ tool: 'fetch_customer' }, { tool: 'delete_records' }, { tool: 'send_payment' }]);
    for (const x of itl) expect((await post('/api/receipts', receiptFor(x), t.keys.producer)).status).toBe(201);
    const put = await t.http.put(`/api/jobs/${im}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(itl));
    expect(put.status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const body = await pack(`/api/jobs/${im}/evidence`);
    expect((await verify(body)).verified).toBe(true);
    const rid = itl[1].id;
    const v = await verify(await forge(body, (m) => m.member === 'entry/2' || m.member === `receipt/${rid}` || onStream(m, `receipt:${rid}`), (s) => s.includes(rid)));
    expect([v.code, v.verified]).toEqual([1, false]);
    expect(v.failures.length).toBeGreaterThan(0);
  });

  it('a workflow pack with a step receipt dropped (member, events, answer set), with a public statement not naming it: caught', async () => {
    const steps = buildTimeline(`attack30-wf-${dialect}`, [{ tool: 'fetch_customer' }, { tool: 'delete_records' }, { tool: 'send_payment' }]);
    for (const e of steps) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    const wf = await post('/api/workflows/assemble', { session_id: `s-a30-${dialect}`, goal: 'pay', status: 'ok', receipt_ids: steps.map((e) => e.id), output: 'paid' }, t.keys.producer);
    expect(wf.status).toBe(201);
    const wfId = (wf.body.workflow_id ?? wf.body.id) as string;
    await t.app.get(CheckpointSigner).tick();
    const body = await pack(`/api/workflows/${wfId}/evidence`);
    const ok = await verify(body);
    expect([ok.code, ok.verified, failures(ok)]).toEqual([0, true, []]);
    const rid = steps[1].id.toLowerCase();
    const v = await verify(await forge(body, (m) => m.member === `receipt/${rid}` || onStream(m, `receipt:${rid}`), (s) => s.includes(rid)));
    expect([v.code, v.verified]).toEqual([1, false]);
    expect(failures(v)).toEqual(expect.arrayContaining([[`receipt/${rid}`, 'subject'], [`receipt:${rid}`, 'stream_unlisted'], [`answers:${rid}:workflow:${wfId.toLowerCase()}`, 'stream_unlisted']]));
    const named = v.failures.find((f) => f.member === `receipt:${rid}`)!;
    expect(named.detail).toContain('delete_records');
  });

  it('a recorded receipt swapped for a "not recorded" stub, its event dropped, with a public statement: caught (its head is not 0)', async () => {
    const rid = tl[0].id;
    const ms = lines(jobPack);
    const stubbed = ms.filter((m) => !onStream(m, `receipt:${rid}`)).map((m) => (m.member === `receipt/${rid}` ? { member: m.member, id: rid, position: null, raw: null, recorded: false } : m));
    const v = await verify(await forge(repack(stubbed), () => false, () => false));
    expect([v.code, v.verified]).toEqual([1, false]);
    expect(failures(v)).toEqual(expect.arrayContaining([[`receipt:${rid}`, 'stream_incomplete']]));
  });
});
