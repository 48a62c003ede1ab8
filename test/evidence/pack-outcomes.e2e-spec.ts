/**
 * Evidence packs with outcome evidence (issue 18), on SQLite and PostgreSQL:
 * a plan requires `payment.settled` from PAYMENTS, the payment system
 * confirms it, a coverage report is issued (full coverage because of the
 * confirmation), then the payment is reversed. The job's pack holds both
 * outcome reports, the report's pack the one at or below the report's
 * position; `aer1 verify-pack` recomputes the report with them (the same
 * digest) offline. An outcome left out, altered, or taken from another job
 * fails with its check named.
 */
import type { Response as SaResponse } from 'superagent';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { PackWriter } from '../../src/core/pack/format';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { cli, TmpDir } from '../cli/helpers';
import { buildTimeline, commitmentFor, Entry, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';

interface Member {
  member: string;
  [k: string]: unknown;
}

interface Verdict {
  code: number;
  verified: boolean;
  failures: { member: string; check: string }[];
  passed: Record<string, number>;
  counts: Record<string, number>;
  verdicts: { outcomes: Record<string, number> };
  reports: { report_id: string; digest: string; recomputed: string | null }[];
}

const lines = (text: string): Member[] => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Member);
const text = (res: SaResponse, cb: (err: Error | null, body: string) => void): void => {
  let s = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (s += c));
  res.on('end', () => cb(null, s));
};
/** Rewrite a pack's members with a fresh manifest (so only the other checks can catch a change). */
const repack = (members: Member[]): string => {
  const w = new PackWriter();
  let out = '';
  for (const m of members) if (m.member !== 'manifest' && !m.member.startsWith('manifest/')) out += w.member(m);
  return out + w.finish();
};
/** The leaf's ledger event (its JSON), to find an event member by stream. */
const leafText = (m: Member): string => (typeof m.leaf === 'string' ? Buffer.from(m.leaf, 'base64').toString('utf8') : '');
const eventOf = (ms: Member[], stream: string): Member => ms.find((m) => m.member.startsWith('event/') && leafText(m).includes(`"${stream}"`))!;

describe.each(DIALECTS)('evidence packs with outcome evidence on %s', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let vkey = '';
  const tmp = new TmpDir();
  const job = `pack-out-${dialect}`;
  const other = `pack-out-other-${dialect}`;
  let settled: Record<string, string>;
  let reversed: Record<string, string>;
  let otherOutcome: Record<string, string>;
  let reportId = '';
  let reportDigest = '';
  let jobPack = '';
  let reportPack = '';
  let otherPack = '';
  let payments = '';

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const pack = async (path: string, key: string): Promise<string> => {
    const r = await t.http.get(path).set('Authorization', `Bearer ${key}`).buffer(true).parse(text);
    expect(r.status).toBe(200);
    return r.body as string;
  };
  /** Compliance registers the plan (the payment requires PAYMENTS' confirmation); the agent records receipts, timeline, commitment. */
  async function execute(jobId: string): Promise<Entry[]> {
    expect((await post('/api/plans', paymentPlan(jobId), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(jobId, PAYMENT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${jobId}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${jobId}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    return tl;
  }
  async function verify(body: string): Promise<Verdict> {
    const file = tmp.write(`pack-${Math.random().toString(36).slice(2)}.jsonl`, body);
    const r = await cli(['verify-pack', file, '--vkey', vkey, '--json']);
    const j = JSON.parse(r.out) as Verdict;
    j.code = r.code;
    j.failures = j.failures.map((f) => ({ member: f.member, check: f.check }));
    return j;
  }

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    payments = (await t.app.get(ApiKeysService).create(`payments-${dialect}`, 'outcome', { systems: ['PAYMENTS'] })).key;
    const tl = await execute(job);
    settled = outcomeFor({ name: `${job}/settled`, job_id: job, receipt_id: tl[1].id });
    expect((await post('/api/outcomes', settled, payments)).status).toBe(201);
    const rep = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect([rep.status, rep.body.result]).toEqual([201, 'full_coverage']);
    reportId = rep.body.report_id as string;
    reportDigest = rep.body.digest as string;
    // After the report: the payment is reversed (a report issued now would say contradicted).
    reversed = outcomeFor({ name: `${job}/reversed`, job_id: job, receipt_id: tl[1].id, result: 'reversed', observed_at: '2026-10-01T12:05:00Z' });
    expect((await post('/api/outcomes', reversed, payments)).status).toBe(201);
    // Another job's payment, confirmed: its outcome is genuine, but not evidence about this job.
    const otl = await execute(other);
    otherOutcome = outcomeFor({ name: `${other}/settled`, job_id: other, receipt_id: otl[1].id });
    expect((await post('/api/outcomes', otherOutcome, payments)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(CheckpointSigner).tick();
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    jobPack = await pack(`/api/jobs/${job}/evidence`, t.keys.auditor);
    reportPack = await pack(`/api/coverage-reports/${reportId}/evidence`, t.keys.compliance);
    otherPack = await pack(`/api/jobs/${other}/evidence`, t.keys.auditor);
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  const id = (o: Record<string, string>): string => o.outcome_id.toLowerCase();

  it("the job's pack and the report's pack hold both outcomes with their events, as of the checkpoint (issue 30: the signed statement covers the set)", () => {
    const jm = lines(jobPack);
    const outcomes = jm.filter((m) => m.member.startsWith('outcome/'));
    expect(outcomes.map((m) => [m.member, m.id, m.receipt_id, m.raw])).toEqual([
      [`outcome/${id(settled)}`, id(settled), settled.receipt_id.toLowerCase(), JSON.stringify(settled)],
      [`outcome/${id(reversed)}`, id(reversed), reversed.receipt_id.toLowerCase(), JSON.stringify(reversed)],
    ]);
    for (const o of outcomes) expect(jm.find((m) => m.member === `event/${String(o.position)}`)).toMatchObject({ type: 'OutcomeReported', leaf_index: (o.position as number) - 1 });
    const report = jm.find((m) => m.member === `report/${reportId}`)!;
    expect((report.report as { as_of_position: number }).as_of_position).toBeLessThan(outcomes[1].position as number);
    const rm = lines(reportPack);
    expect(rm.filter((m) => m.member.startsWith('outcome/')).map((m) => m.member)).toEqual([`outcome/${id(settled)}`, `outcome/${id(reversed)}`]);
    expect(rm.filter((m) => m.member.startsWith('event/') && m.type === 'OutcomeReported')).toHaveLength(2);
  });

  it('verify-pack says VERIFIED and recomputes the report with the confirmation (same digest), for the job and the report', async () => {
    for (const body of [jobPack, reportPack]) {
      const j = await verify(body);
      expect(j.failures).toEqual([]);
      expect([j.code, j.verified, j.passed.report_recomputed]).toEqual([0, true, 1]);
      expect(j.reports).toEqual([{ report_id: reportId, digest: reportDigest, recomputed: reportDigest }]);
    }
    const j = await verify(jobPack);
    expect([j.counts.outcomes, j.verdicts.outcomes]).toEqual([2, { valid: 2 }]);
    const file = tmp.write('report.jsonl', reportPack);
    const r = await cli(['verify-pack', file, '--vkey', vkey]);
    expect(r.out).toContain('2 outcome reports)');
    expect(r.out).toContain('  outcome reports: 2 valid');
    expect(r.out).toContain('Result: VERIFIED');
  });

  it("the reversal recorded after the report is in the report's pack and leaves its recomputation alone; cut out (member and event), the signed answer set names it", async () => {
    const rm = lines(reportPack);
    const ev = eventOf(rm, `outcome:${id(reversed)}`);
    const j = await verify(reportPack);
    expect([j.code, j.verified, j.reports[0].recomputed]).toEqual([0, true, reportDigest]);
    // The later outcome that contradicts the confirmation: the newest of its receipt's answer set, so its head.
    const cut = await verify(repack(rm.filter((m) => m.member !== ev.member && m.member !== `outcome/${id(reversed)}`)));
    const set = `answers:${reversed.receipt_id.toLowerCase()}:timeline:${job}`;
    expect([cut.code, cut.verified, cut.failures]).toEqual([
      1,
      false,
      [
        { member: set, check: 'stream_incomplete' },
        { member: `outcome:${id(reversed)}`, check: 'stream_incomplete' },
      ],
    ]);
    const text = await cli(['verify-pack', tmp.write('cut-reversal.jsonl', repack(rm.filter((m) => m.member !== ev.member && m.member !== `outcome/${id(reversed)}`))), '--vkey', vkey]);
    expect(text.out).toContain(`✗ ${set}: stream_incomplete: the newest outcome answering receipt ${reversed.receipt_id.toLowerCase()}, the event at position ${String(ev.position)}, is not in the pack (outcomes answering the receipt of entry 2 (tool "send_payment"))`);
  });

  it("the confirmation left out of the report's pack (member and event): report_recomputed fails, named", async () => {
    const ev = eventOf(lines(reportPack), `outcome:${id(settled)}`).member;
    const j = await verify(repack(lines(reportPack).filter((m) => m.member !== ev && m.member !== `outcome/${id(settled)}`)));
    expect([j.code, j.verified]).toEqual([1, false]);
    expect(j.failures).toEqual([
      { member: `report/${reportId}`, check: 'report_recomputed' },
      { member: `outcome:${id(settled)}`, check: 'stream_incomplete' },
    ]);
    expect(j.reports[0].recomputed).not.toBe(reportDigest);
  });

  it('its event left out: the outcome member fails leaf_bytes and the report report_recomputed', async () => {
    const ev = eventOf(lines(reportPack), `outcome:${id(settled)}`).member;
    const j = await verify(repack(lines(reportPack).filter((m) => m.member !== ev)));
    expect(j.failures).toEqual([
      { member: `outcome/${id(settled)}`, check: 'leaf_bytes' },
      { member: `report/${reportId}`, check: 'report_recomputed' },
      { member: `outcome:${id(settled)}`, check: 'stream_incomplete' },
    ]);
  });

  it("the outcome's bytes changed fail leaf_bytes (and the manifest when it is not rewritten)", async () => {
    const name = `outcome/${id(settled)}`;
    const change = (ms: Member[]): Member[] => ms.map((m) => (m.member === name ? { ...m, raw: (m.raw as string).replace('"result":"confirmed"', '"result":"failed"') } : m));
    const changed = change(lines(reportPack));
    expect(changed.find((m) => m.member === name)!.raw).toContain('"result":"failed"');
    const j = await verify(repack(changed));
    expect([j.code, j.failures]).toEqual([1, [{ member: name, check: 'leaf_bytes' }]]);
    const raw = await verify(changed.map((m) => JSON.stringify(m)).join('\n') + '\n');
    expect(raw.failures).toEqual([
      { member: name, check: 'manifest' },
      { member: name, check: 'leaf_bytes' },
    ]);
  });

  it("the outcome's event payload changed fails its payload commitment (the log commits to the confirmation, not the forgery)", async () => {
    const ms = lines(reportPack);
    const ev = eventOf(ms, `outcome:${id(settled)}`) as ReturnType<typeof eventOf> & { payload: string };
    // Format 3 (issue 29): the event's data is its payload, committed to by the leaf; the forgery says failed instead of confirmed.
    const payload = Buffer.from(ev.payload, 'base64').toString('utf8');
    const forged = payload.replace(/confirmed/g, 'failed');
    expect(forged).not.toBe(payload);
    ev.payload = Buffer.from(forged, 'utf8').toString('base64');
    const j = await verify(repack(ms));
    expect([j.code, j.verified]).toEqual([1, false]);
    expect(j.failures).toEqual(expect.arrayContaining([{ member: ev.member, check: 'payload_commitment' }]));
    expect(j.failures.every((f) => f.member === ev.member || f.member === `outcome/${id(settled)}` || f.member === `report/${reportId}`)).toBe(true);
    // The leaf itself, edited, fails its hash as before.
    const ms2 = lines(reportPack);
    const ev2 = eventOf(ms2, `outcome:${id(settled)}`);
    ev2.leaf = Buffer.from(leafText(ev2).replace('"OutcomeReported"', '"OutcomeReportet"'), 'utf8').toString('base64');
    const k = await verify(repack(ms2));
    expect(k.failures).toEqual(expect.arrayContaining([{ member: ev2.member, check: 'leaf_hash' }]));
  });

  it("another job's genuine outcome added to the pack fails the subject check; its event alone, too", async () => {
    const om = lines(otherPack);
    const otherEvent = eventOf(om, `outcome:${id(otherOutcome)}`);
    const otherMember = om.find((m) => m.member === `outcome/${id(otherOutcome)}`)!;
    const withBoth = await verify(repack([...lines(jobPack), otherEvent, otherMember]));
    // Its stream is in no statement of this pack either (issue 30).
    expect(withBoth.failures).toEqual([
      { member: `outcome/${id(otherOutcome)}`, check: 'subject' },
      { member: otherEvent.member, check: 'stream_unlisted' },
    ]);
    const withEvent = await verify(repack([...lines(jobPack), otherEvent]));
    expect(withEvent.failures).toEqual([
      { member: otherEvent.member, check: 'subject' },
      { member: otherEvent.member, check: 'stream_unlisted' },
    ]);
  });

  it("a workflow whose payment step requires an outcome: its pack and its report's pack carry the confirmation and verify", async () => {
    const steps = buildTimeline(`pack-out-wf-${dialect}`, PAYMENT_STEPS);
    for (const e of steps) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    const wf = await post('/api/workflows/assemble', { session_id: 's-pack-out', goal: 'pay', status: 'ok', receipt_ids: steps.map((e) => e.id), output: 'paid' }, t.keys.producer);
    expect(wf.status).toBe(201);
    const wfId = (wf.body.workflow_id ?? wf.body.id) as string;
    // The payment plan, naming the workflow instead of a job (JSON drops the undefined job_id).
    const plan = { ...paymentPlan(wfId), job_id: undefined, workflow_id: wfId };
    expect((await post('/api/plans', plan, t.keys.compliance)).status).toBe(201);
    // Issue 26: an outcome of a workflow step names the workflow (its id as job_id); a job no entry of which names the receipt is refused.
    const noJob = await post('/api/outcomes', outcomeFor({ name: `${wfId}/no-job`, job_id: `pack-out-wf-${dialect}`, receipt_id: steps[1].id }), payments);
    expect([noJob.status, noJob.body.error]).toEqual([422, 'receipt_not_in_job']);
    const confirmed = outcomeFor({ name: `${wfId}/settled`, job_id: wfId, receipt_id: steps[1].id });
    expect((await post('/api/outcomes', confirmed, payments)).status).toBe(201);
    const rep = await post('/api/coverage-reports', { workflow_id: wfId }, t.keys.auditor);
    expect(rep.status).toBe(201);
    const g = await t.http.get(`/api/coverage-reports/${rep.body.report_id as string}`).set('Accept', 'application/json');
    expect(g.body.report.actions.find((a: { action_id: string }) => a.action_id === 'pay').outcome).toMatchObject({ status: 'confirmed', evidence: [{ deciding_outcome: id(confirmed) }] });
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(CheckpointSigner).tick();
    for (const path of [`/api/workflows/${wfId}/evidence`, `/api/coverage-reports/${rep.body.report_id as string}/evidence`]) {
      const body = await pack(path, t.keys.auditor);
      expect(lines(body).filter((m) => m.member.startsWith('outcome/')).map((m) => m.member)).toEqual([`outcome/${id(confirmed)}`]);
      const j = await verify(body);
      expect(j.failures).toEqual([]);
      expect([j.code, j.verified, j.passed.report_recomputed, j.reports[0].recomputed]).toEqual([0, true, 1, rep.body.digest]);
      // Without the confirmation the report does not recompute.
      const ms = lines(body);
      const ev = eventOf(ms, `outcome:${id(confirmed)}`).member;
      const cut = await verify(repack(ms.filter((m) => m.member !== ev && m.member !== `outcome/${id(confirmed)}`)));
      expect(cut.failures).toEqual([
        { member: `report/${rep.body.report_id as string}`, check: 'report_recomputed' },
        { member: `answers:${steps[1].id.toLowerCase()}:workflow:${wfId.toLowerCase()}`, check: 'stream_incomplete' },
        { member: `outcome:${id(confirmed)}`, check: 'stream_incomplete' },
      ]);
    }
  });
});
