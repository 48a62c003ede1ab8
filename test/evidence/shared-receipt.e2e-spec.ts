/**
 * Issue 26, on SQLite and PostgreSQL: plans for jobs A and B both require
 * `payment.settled` from PAYMENTS, and one recorded receipt R is named by an
 * entry of each. PAYMENTS confirms R for job A. The outcome counts for A
 * only: B's report shows the payment unconfirmed, and R, claimed by both
 * jobs, is the finding `receipt_shared_with_other_job` in both reports (so B
 * is not full coverage). An outcome naming a job none of whose entries name
 * its receipt is refused (422 `receipt_not_in_job`, nothing written). The
 * packs of both jobs recompute their reports offline (the same digests), and
 * `aer1 coverage --outcomes` with A's outcome gives B's outcome part as the server.
 */
import type { Response as SaResponse } from 'superagent';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import type { CoverageReportContent } from '../../src/core/coverage/reconcile';
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
const leafText = (m: Member): string => (typeof m.leaf === 'string' ? Buffer.from(m.leaf, 'base64').toString('utf8') : '');

/** `entries` rechained as job `job`: seq 1..n, each prev_digest the digest of the one before, the last closing. */
function rechain(job: string, entries: Entry[]): Entry[] {
  let prev = ZERO_DIGEST;
  return entries.map((src, k) => {
    const e: Entry = { ...src, job_id: job, seq: k + 1, prev_digest: prev };
    delete e.close;
    if (k === entries.length - 1) e.close = true;
    prev = entryDigest(e) as string;
    return e;
  });
}

describe.each(DIALECTS)('a receipt named by entries of two jobs, on %s', (dialect) => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let payments = '';
  let vkey = '';
  const tmp = new TmpDir();
  const jobA = `shared-a-${dialect}`;
  const jobB = `shared-b-${dialect}`;
  let tlA: Entry[] = [];
  let tlB: Entry[] = [];
  let R = '';
  let confirmA: Record<string, string>;

  const post = (path: string, body: unknown, key: string) =>
    t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const head = async (): Promise<number> => (await t.http.get('/api/ledger/head')).body.position as number;
  async function issue(job: string): Promise<{ report_id: string; digest: string; report: CoverageReportContent }> {
    const r = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    const g = await t.http.get(`/api/coverage-reports/${r.body.report_id as string}`).set('Accept', 'application/json');
    expect(g.body.digest_verified).toBe(true);
    return { report_id: r.body.report_id as string, digest: r.body.digest as string, report: g.body.report as CoverageReportContent };
  }
  const pay = (r: CoverageReportContent) => r.actions.find((a) => a.action_id === 'pay')!;
  const codes = (r: CoverageReportContent) => r.findings.map((f) => f.code);
  async function pack(path: string): Promise<string> {
    const r = await t.http.get(path).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);
    expect(r.status).toBe(200);
    return r.body as string;
  }
  async function verify(body: string): Promise<{ code: number; verified: boolean; failures: { member: string; check: string }[]; reports: { digest: string; recomputed: string | null }[] }> {
    const r = await cli(['verify-pack', tmp.write(`p-${Math.random().toString(36).slice(2)}.jsonl`, body), '--vkey', vkey, '--json']);
    const j = JSON.parse(r.out) as { verified: boolean; failures: { member: string; check: string }[]; reports: { digest: string; recomputed: string | null }[] };
    return { code: r.code, verified: j.verified, failures: j.failures.map((f) => ({ member: f.member, check: f.check })), reports: j.reports };
  }

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    payments = (await t.app.get(ApiKeysService).create(`payments-shared-${dialect}`, 'outcome', { systems: ['PAYMENTS'] })).key;
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    tlA = buildTimeline(jobA, PAYMENT_STEPS);
    // B looks up its own customer, then names A's payment receipt R (the same bytes) as its payment.
    tlB = rechain(jobB, [buildTimeline(jobB, PAYMENT_STEPS)[0], tlA[1]]);
    R = tlA[1].id.toLowerCase();
    expect(tlB[1].id.toLowerCase()).toBe(R);
    for (const job of [jobA, jobB]) expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    for (const e of [...tlA, tlB[0]]) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    for (const [job, tl] of [[jobA, tlA], [jobB, tlB]] as [string, Entry[]][]) {
      expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
      expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    }
    confirmA = outcomeFor({ name: `${jobA}/settled`, job_id: jobA, receipt_id: R });
    const r = await post('/api/outcomes', confirmA, payments);
    expect([r.status, r.body.error]).toEqual([201, undefined]);
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('an outcome naming a job none of whose entries name its receipt is refused: 422 receipt_not_in_job, nothing written', async () => {
    const before = await head();
    // A's lookup receipt is recorded, but no entry of B names it.
    const wrongJob = await post('/api/outcomes', outcomeFor({ name: `${jobB}/lookup`, job_id: jobB, receipt_id: tlA[0].id }), payments);
    expect([wrongJob.status, wrongJob.body.error, wrongJob.body.job_id, wrongJob.body.receipt_id]).toEqual([422, 'receipt_not_in_job', jobB, tlA[0].id.toLowerCase()]);
    // A job with no timeline at all.
    const noJob = await post('/api/outcomes', outcomeFor({ name: `nobody-${dialect}`, job_id: `nobody-${dialect}`, receipt_id: R }), payments);
    expect([noJob.status, noJob.body.error]).toEqual([422, 'receipt_not_in_job']);
    expect(await head()).toBe(before);
    // B's export holds no outcome: A's confirmation names A.
    const exp = await t.http.get(`/api/jobs/${jobB}/outcomes`).buffer(true).parse(text);
    expect([exp.status, exp.body]).toEqual([200, '']);
  });

  it("A's confirmation counts for A only; R is a finding in both reports; B is not full coverage", async () => {
    const a = await issue(jobA);
    const b = await issue(jobB);
    expect(pay(a.report).outcome).toMatchObject({ status: 'confirmed', evidence: [{ seq: 2, status: 'confirmed', deciding_outcome: confirmA.outcome_id }] });
    expect(codes(a.report)).toEqual(['receipt_shared_with_other_job']);
    expect(a.report.findings[0]).toMatchObject({ seq: 2, message: expect.stringContaining(`receipt ${R} is also named by an entry of job "${jobB}"`) });
    expect(a.report.result).toBe('findings');

    expect(pay(b.report).status).toBe('covered');
    expect(pay(b.report).outcome).toMatchObject({ status: 'unconfirmed', evidence: [{ seq: 2, status: 'unconfirmed', deciding_outcome: null, outcomes: [] }] });
    expect(b.report.outcomes!.counts).toEqual({ required: 1, confirmed: 0, contradicted: 0, unconfirmed: 1, wrong_system: 0, outcomes_matched: 0 });
    expect(codes(b.report)).toEqual(['receipt_shared_with_other_job', 'outcome_unconfirmed']);
    expect(b.report.findings[0]).toMatchObject({ seq: 2, message: expect.stringContaining(`receipt ${R} is also named by an entry of job "${jobA}"`) });
    expect(b.report.result).toBe('findings');

    // Offline: A's export given to B's reconciliation is rejected (other_job); the outcome part is the server's.
    const exported = (await t.http.get(`/api/jobs/${jobA}/outcomes`).buffer(true).parse(text)).body as string;
    expect(exported.trimEnd().split('\n')).toHaveLength(1);
    const run = await cli([
      'coverage', '--json',
      '--plan', tmp.write('plan-b.json', paymentPlan(jobB)),
      '--timeline', tmp.write('timeline-b.json', tlB),
      '--receipts', tmp.write('receipts-b.ndjson', [tlB[0], tlA[1]].map((e) => JSON.stringify(receiptFor(e))).join('\n') + '\n'),
      '--outcomes', tmp.write('outcomes-a.ndjson', exported),
    ]);
    expect([run.code, run.err]).toEqual([1, '']);
    const offline = JSON.parse(run.out) as { report: CoverageReportContent; outcomes: { used: number; rejected: { index: number; reasons: string[] }[] } };
    expect(offline.outcomes).toEqual({ used: 0, rejected: [{ index: 0, outcome_id: confirmA.outcome_id, reasons: ['other_job'] }] });
    expect(pay(offline.report).outcome).toEqual(pay(b.report).outcome);
    expect(offline.report.outcomes).toEqual(b.report.outcomes);
    // Offline, other jobs are not seen: said, not passed.
    expect(offline.report.findings.map((f) => f.code)).not.toContain('receipt_shared_with_other_job');
    expect(offline.report.does_not_prove.some((s) => /other jobs name the same receipts/.test(s) && /not checked offline/.test(s))).toBe(true);
  });

  it("both jobs' packs recompute their reports offline (same digests); A's outcome put into B's pack, or B's statement of A dropped, fails", async () => {
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(CheckpointSigner).tick();
    const packA = await pack(`/api/jobs/${jobA}/evidence`);
    const packB = await pack(`/api/jobs/${jobB}/evidence`);
    const msA = lines(packA);
    const msB = lines(packB);
    expect(msA.filter((m) => m.member.startsWith('outcome/')).map((m) => m.member)).toEqual([`outcome/${confirmA.outcome_id}`]);
    expect(msB.filter((m) => m.member.startsWith('outcome/'))).toEqual([]);
    const reportB = msB.find((m) => m.member.startsWith('report/'))!;
    expect(reportB.other_jobs).toEqual({ [R]: [jobA] });
    for (const p of [packA, packB]) {
      const j = await verify(p);
      expect(j.failures).toEqual([]);
      expect([j.code, j.verified, j.reports.length, j.reports.every((x) => x.recomputed === x.digest)]).toEqual([0, true, 1, true]);
    }
    // A's genuine outcome (event and member) added to B's pack: it names job A, not B's subject.
    const outcomeEvent = msA.find((m) => m.member.startsWith('event/') && leafText(m).includes(`"outcome:${confirmA.outcome_id}"`))!;
    const outcomeMember = msA.find((m) => m.member === `outcome/${confirmA.outcome_id}`)!;
    const added = await verify(repack([...msB, outcomeEvent, outcomeMember]));
    expect([added.code, added.failures]).toEqual([
      1,
      [
        { member: `outcome/${confirmA.outcome_id}`, check: 'subject' },
        { member: outcomeEvent.member, check: 'stream_unlisted' },
      ],
    ]);
    // The statement that A names R too is what B's report was built with: without it the report does not recompute.
    const stripped = await verify(repack(msB.map((m) => (m.member === reportB.member ? { ...m, other_jobs: undefined } : m))));
    expect([stripped.code, stripped.failures]).toEqual([1, [{ member: reportB.member, check: 'report_recomputed' }]]);
  });

  it("an outcome for B naming R (an entry of B names it) is B's: B's payment confirmed, R still a finding, still not full coverage", async () => {
    const confirmB = outcomeFor({ name: `${jobB}/settled`, job_id: jobB, receipt_id: R });
    expect((await post('/api/outcomes', confirmB, payments)).status).toBe(201);
    const b = await issue(jobB);
    expect(pay(b.report).outcome).toMatchObject({ status: 'confirmed', evidence: [{ deciding_outcome: confirmB.outcome_id, outcomes: [expect.objectContaining({ outcome_id: confirmB.outcome_id })] }] });
    expect(pay(b.report).outcome!.evidence[0].outcomes).toHaveLength(1);
    expect(codes(b.report)).toEqual(['receipt_shared_with_other_job']);
    expect(b.report.result).toBe('findings');
    const a = await issue(jobA);
    expect(pay(a.report).outcome!.evidence[0].outcomes.map((o) => o.outcome_id)).toEqual([confirmA.outcome_id]);
  });
});
