/**
 * Security review of outcome members in evidence packs (2026-12-01): tampered
 * packs that must not say VERIFIED (duplicated, swapped, reordered outcome
 * members and events; withheld outcomes), on SQLite. Setup as in
 * pack-outcomes.e2e-spec.ts: a payment confirmed, a report, then reversed.
 */
import type { Response as SaResponse } from 'superagent';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { PackWriter } from '../../src/core/pack/format';
import { DatabaseService } from '../../src/database/database.service';
import { STREAM_DOES_NOT_EXIST } from '../../src/ledger/event';
import { LedgerService } from '../../src/ledger/ledger.service';
import { streams } from '../../src/ledger/streams';
import type { OutcomeEvent } from '../../src/outcomes/outcomes.events';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { cli, TmpDir } from '../cli/helpers';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { startApp, TestApp } from '../helpers/app';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';

interface Member {
  member: string;
  [k: string]: unknown;
}
interface Verdict {
  code: number;
  verified: boolean;
  failures: { member: string; check: string }[];
  counts: Record<string, number>;
  reports: { report_id: string; digest: string; recomputed: string | null }[];
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
const eventOf = (ms: Member[], stream: string): Member => ms.find((m) => m.member.startsWith('event/') && leafText(m).includes(`"${stream}"`))!;

describe('tampered outcome members in evidence packs (sqlite)', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let vkey = '';
  const tmp = new TmpDir();
  const job = 'attack-pack-out';
  const hidden = 'attack-pack-out-meta';
  const forged = 'attack-pack-out-forged';
  let forgedOutcome: Record<string, string>;
  let settled: Record<string, string>;
  let reversed: Record<string, string>;
  let reportId = '';
  let jobPack = '';
  let reportPack = '';
  const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const pack = async (path: string, key: string): Promise<string> => {
    const r = await t.http.get(path).set('Authorization', `Bearer ${key}`).buffer(true).parse(text);
    expect(r.status).toBe(200);
    return r.body as string;
  };
  async function execute(jobId: string): Promise<ReturnType<typeof buildTimeline>> {
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
  const id = (o: Record<string, string>): string => o.outcome_id.toLowerCase();

  beforeAll(async () => {
    t = await startApp('sqlite');
    const svc = t.app.get(ApiKeysService);
    const payments = (await svc.create('payments', 'outcome', { systems: ['PAYMENTS'] })).key;
    const metaPayments = (await svc.create('payments-meta', 'outcome', { systems: ['PAYMENTS'], publication: 'metadata' })).key;
    const tl = await execute(job);
    settled = outcomeFor({ name: `${job}/settled`, job_id: job, receipt_id: tl[1].id });
    expect((await post('/api/outcomes', settled, payments)).status).toBe(201);
    const rep = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect([rep.status, rep.body.result]).toEqual([201, 'full_coverage']);
    reportId = rep.body.report_id as string;
    reversed = outcomeFor({ name: `${job}/reversed`, job_id: job, receipt_id: tl[1].id, result: 'reversed', observed_at: '2026-10-01T12:05:00Z' });
    expect((await post('/api/outcomes', reversed, payments)).status).toBe(201);
    const htl = await execute(hidden);
    expect((await post('/api/outcomes', outcomeFor({ name: `${hidden}/settled`, job_id: hidden, receipt_id: htl[1].id }), metaPayments)).status).toBe(201);
    // A misbehaving server (or a bug in the outcome path): the event's fields say confirmed, its raw report says failed.
    const ftl = await execute(forged);
    forgedOutcome = outcomeFor({ name: `${forged}/failed`, job_id: forged, receipt_id: ftl[1].id, result: 'failed' });
    const ledger = t.app.get(LedgerService);
    await t.app.get(DatabaseService).write((tx) =>
      ledger.append<OutcomeEvent>(tx, streams.outcome(forgedOutcome.outcome_id.toLowerCase()), STREAM_DOES_NOT_EXIST, [
        { type: 'OutcomeReported', data: { ...forgedOutcome, receipt_id: forgedOutcome.receipt_id.toLowerCase(), result: 'confirmed', raw: JSON.stringify(forgedOutcome), publication: 'full' } as never },
      ], { key_id: 'k', name: 'payments' }),
    );
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(CheckpointSigner).tick();
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    jobPack = await pack(`/api/jobs/${job}/evidence`, t.keys.auditor);
    reportPack = await pack(`/api/coverage-reports/${reportId}/evidence`, t.keys.compliance);
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('the genuine packs verify (baseline)', async () => {
    for (const body of [jobPack, reportPack]) expect((await verify(body)).failures).toEqual([]);
  });

  it('an outcome member duplicated (same line twice) is refused', async () => {
    const ms = lines(jobPack);
    const o = ms.find((m) => m.member === `outcome/${id(settled)}`)!;
    const j = await verify(repack([...ms, o]));
    expect([j.code, j.verified]).toEqual([1, false]);
  });

  it('an outcome event duplicated is refused', async () => {
    const ms = lines(jobPack);
    const ev = eventOf(ms, `outcome:${id(settled)}`);
    const j = await verify(repack([...ms, ev]));
    expect([j.code, j.verified]).toEqual([1, false]);
  });

  it("the confirmation's member pointing at the reversal's event (both events held) is refused", async () => {
    const ms = lines(jobPack);
    const rev = eventOf(ms, `outcome:${id(reversed)}`);
    const swapped = ms.map((m) => (m.member === `outcome/${id(settled)}` ? { ...m, position: Number(rev.member.slice('event/'.length)) } : m));
    const j = await verify(repack(swapped));
    expect([j.code, j.verified]).toEqual([1, false]);
    expect(j.failures).toEqual(expect.arrayContaining([{ member: `outcome/${id(settled)}`, check: 'leaf_bytes' }]));
  });

  it("the reversal's member renamed to the confirmation's id (and the confirmation dropped) is refused", async () => {
    const ms = lines(jobPack);
    const ev = eventOf(ms, `outcome:${id(settled)}`).member;
    const renamed = ms
      .filter((m) => m.member !== ev && m.member !== `outcome/${id(settled)}`)
      .map((m) => (m.member === `outcome/${id(reversed)}` ? { ...m, member: `outcome/${id(settled)}`, id: id(settled) } : m));
    const j = await verify(repack(renamed));
    expect([j.code, j.verified]).toEqual([1, false]);
  });

  it('outcome members and their events moved to the front in reverse ledger order: the file order decides nothing (same recomputed digest)', async () => {
    const ms = lines(jobPack);
    const evs = [eventOf(ms, `outcome:${id(reversed)}`), eventOf(ms, `outcome:${id(settled)}`)];
    const outs = [`outcome/${id(reversed)}`, `outcome/${id(settled)}`].map((n) => ms.find((m) => m.member === n)!);
    const moved = new Set([...evs, ...outs].map((m) => m.member));
    const rest = ms.filter((m) => !moved.has(m.member));
    // Right after the checkpoint (an event is checked against the checkpoint read before it), before the plans and receipts.
    const at = rest.findIndex((m) => m.member === 'log/checkpoint') + 1;
    const j = await verify(repack([...rest.slice(0, at), ...outs, ...evs, ...rest.slice(at)]));
    // The verifier does not hold the writer to the documented order; what it decides must not depend on it.
    expect(j.failures).toEqual([]);
    expect([j.code, j.verified, j.reports.map((r) => r.recomputed === r.digest)]).toEqual([0, true, [true]]);
  });

  it('an outcome with metadata publication is withheld from a compliance key: NOT VERIFIED, counted withheld; its raw put back as null by hand is still withheld', async () => {
    const body = await pack(`/api/jobs/${hidden}/evidence`, t.keys.compliance);
    const o = lines(body).find((m) => m.member.startsWith('outcome/'))!;
    expect([o.raw, typeof o.withheld]).toEqual([null, 'string']);
    const j = await verify(body);
    expect([j.code, j.verified]).toEqual([1, false]);
    expect(j.counts.withheld + j.counts.withheld_records).toBeGreaterThan(0);
    const full = await verify(await pack(`/api/jobs/${hidden}/evidence`, t.keys.auditor));
    expect([full.code, full.verified, full.failures]).toEqual([0, true, []]);
    // The withheld note removed: still not verified.
    const stripped = await verify(repack(lines(body).map((m) => (m.member === o.member ? { member: m.member, id: m.id, receipt_id: m.receipt_id, position: m.position, raw: null } : m))));
    expect([stripped.code, stripped.verified]).toEqual([1, false]);
  });

  it("in the job's pack, the reversal (member and event) dropped: NOT VERIFIED, its answer set and stream named (issue 30; before, this was a documented limit)", async () => {
    const ms = lines(jobPack);
    const ev = eventOf(ms, `outcome:${id(reversed)}`).member;
    const j = await verify(repack(ms.filter((m) => m.member !== ev && m.member !== `outcome/${id(reversed)}`)));
    expect([j.code, j.verified]).toEqual([1, false]);
    expect(j.failures.map((f) => [f.member, f.check])).toEqual([
      [`answers:${reversed.receipt_id.toLowerCase()}:timeline:${job}`, 'stream_incomplete'],
      [`outcome:${id(reversed)}`, 'stream_incomplete'],
    ]);
  });

  it("an OutcomeReported event whose fields disagree with its own raw report (result confirmed, raw failed) is refused", async () => {
    const rep = await post('/api/coverage-reports', { job_id: forged }, t.keys.auditor);
    expect(rep.status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const body = await pack(`/api/coverage-reports/${rep.body.report_id as string}/evidence`, t.keys.auditor);
    const o = lines(body).find((m) => m.member.startsWith('outcome/'))!;
    expect(o.raw).toContain('"result":"failed"');
    const j = await verify(body);
    // The report was recomputed from the event's `result` (confirmed), not from the report's bytes (failed).
    expect([j.code, j.verified]).toEqual([1, false]);
    expect(j.failures).toEqual(expect.arrayContaining([{ member: o.member, check: 'leaf_bytes' }]));
  });
});
