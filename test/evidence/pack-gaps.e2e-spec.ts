/**
 * `aer1 verify-pack` on packs cut by hand and on a report with findings, on
 * SQLite and PostgreSQL:
 * - one member line deleted from a job pack (as `sed 'Nd'` does, the
 *   manifest left as it is), for every record and event member in turn: the
 *   first failure is `member_missing` naming the deleted member, and it is
 *   the only failure (the manifest comparison resynchronises after the gap;
 *   no neighbour is blamed as out of place; the event of a receipt the
 *   entries name is not "foreign");
 * - a verified pack whose report concludes `findings` (the payment settled,
 *   then reversed: outcome_contradicted) says so right under the result, in
 *   text and JSON (`subject_result`), with exit 0 (the pack is authentic).
 */
import { cli, TmpDir } from '../cli/helpers';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';
import type { Response as SaResponse } from 'superagent';

interface Verdict {
  code: number;
  verified: boolean;
  failures: { member: string; check: string; detail: string }[];
  subject_result: { report_id: string; result: string; headline: string | null } | null;
}

const text = (res: SaResponse, cb: (err: Error | null, body: string) => void): void => {
  let s = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (s += c));
  res.on('end', () => cb(null, s));
};

describe.each(DIALECTS)('verify-pack: a member deleted by hand, a report with findings, on %s', (dialect) => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let vkey = '';
  const tmp = new TmpDir();
  const job = `job-pay-gaps-${dialect}`;
  let jobPack = '';
  let reportPack = '';
  let reportId = '';

  const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const pack = async (path: string, key: string): Promise<string> => {
    const r = await t.http.get(path).set('Authorization', `Bearer ${key}`).buffer(true).parse(text);
    expect(r.status).toBe(200);
    return r.body as string;
  };
  const verify = async (body: string, json = true): Promise<{ code: number; out: string; j: Verdict | null }> => {
    const file = tmp.write(`pack-${Math.random().toString(36).slice(2)}.jsonl`, body);
    const r = await cli(['verify-pack', file, '--vkey', vkey, ...(json ? ['--json'] : [])]);
    return { code: r.code, out: r.out, j: json ? (JSON.parse(r.out) as Verdict) : null };
  };

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    const payments = (await t.app.get(ApiKeysService).create(`payments-gaps-${dialect}`, 'outcome', { systems: ['PAYMENTS'] })).key;
    expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, PAYMENT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    expect((await post('/api/outcomes', outcomeFor({ name: `${job}/settled`, job_id: job, receipt_id: tl[1].id }), payments)).status).toBe(201);
    const rev = outcomeFor({ name: `${job}/reversed`, job_id: job, receipt_id: tl[1].id, result: 'reversed', observed_at: '2026-10-01T12:05:00Z' });
    expect((await post('/api/outcomes', rev, payments)).status).toBe(201);
    const rep = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect([rep.status, rep.body.result]).toEqual([201, 'findings']);
    reportId = rep.body.report_id as string;
    await t.app.get(CheckpointSigner).tick();
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    jobPack = await pack(`/api/jobs/${job}/evidence`, t.keys.auditor);
    reportPack = await pack(`/api/coverage-reports/${reportId}/evidence`, t.keys.compliance);
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('a verified pack of a report with findings says what the report concludes under the result (text and JSON), exit 0', async () => {
    for (const [body, which] of [[jobPack, 'Newest report in this pack: coverage report'], [reportPack, 'Subject: coverage report']]) {
      const { code, j } = await verify(body);
      expect([code, j!.verified, j!.failures]).toEqual([0, true, []]);
      expect(j!.subject_result).toMatchObject({ report_id: reportId, result: 'findings' });
      expect(j!.subject_result!.headline).toMatch(/^Coverage: 1 FINDING: pay: outcome CONTRADICTED \(PAYMENTS reports reversed\) \(2\/2 expected actions covered\)$/);
      const r = await verify(body, false);
      expect(r.code).toBe(0);
      const lines = r.out.split('\n');
      const at = lines.findIndex((l) => l.startsWith('Result: VERIFIED'));
      expect(at).toBeGreaterThan(0);
      // A job pack's subject is the job: the report line says it is the newest report the pack holds (a new user read 'Subject: coverage report' under a job pack as the wrong subject).
      expect(lines[at + 1]).toBe(`${which} ${reportId} concludes: Coverage: 1 FINDING: pay: outcome CONTRADICTED (PAYMENTS reports reversed) (2/2 expected actions covered) (the pack is authentic evidence of these findings, not of full coverage)`);
    }
  });

  it('any one record or event member deleted (the manifest left as it was): the one failure is member_missing naming it', async () => {
    const all = jobPack.split('\n');
    const names = all.map((l) => (l ? (JSON.parse(l) as { member: string }).member : ''));
    const kinds = ['receipt/', 'event/', 'entry/', 'report/', 'outcome/', 'plan/', 'commitment/'];
    const targets = names.filter((n) => kinds.some((k) => n.startsWith(k)));
    // Every kind this pack holds is among them (a job pack with outcomes holds each).
    for (const k of ['receipt/', 'event/', 'entry/', 'report/', 'outcome/']) expect(targets.some((n) => n.startsWith(k))).toBe(true);
    for (const gone of targets) {
      const body = all.filter((_, k) => names[k] !== gone).join('\n');
      const { code, j } = await verify(body);
      const got = j!.failures.map((f) => ({ member: f.member, check: f.check }));
      // One line per member: what each deletion gives, in full.
      expect([gone, code, j!.verified, got]).toEqual([gone, 1, false, [{ member: gone, check: 'member_missing' }]]);
      expect(j!.failures[0].detail).toBe('listed in the manifest (manifest/0) but missing from the pack: removed');
    }
  });

  it('a receipt line deleted: the text names it as missing, once, and no neighbour as out of place', async () => {
    const all = jobPack.split('\n');
    const at = all.findIndex((l) => l.startsWith('{"member":"receipt/'));
    const gone = (JSON.parse(all[at]) as { member: string }).member;
    const r = await verify(all.filter((_, k) => k !== at).join('\n'), false);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`Failures (1):\n  ✗ ${gone}: member_missing: listed in the manifest (manifest/0) but missing from the pack: removed\n`);
    expect(r.out).not.toContain('at this place');
    expect(r.out).not.toContain('that is not in the pack');
    expect(r.out).not.toContain('neither the subject');
    expect(r.out).toContain('Result: NOT VERIFIED (1 failure)');
  });
});
