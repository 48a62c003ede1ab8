/**
 * Completeness (issue 30, "Done when"), on SQLite and PostgreSQL: packs as
 * an operator forging them would cut them, the manifest rebuilt after each
 * removal with the server's own writer, and what `aer1 verify-pack` names:
 * - an open timeline (no commitment) with its last entry, its receipt and
 *   their events removed: the timeline and the receipt stream fall short of
 *   their signed heads (`stream_incomplete`, each with the missing position);
 * - a middle event removed: named by stream and position;
 * - an unplanned action's receipt removed: named with its entry and tool;
 * - a statement for another checkpoint, a statement signed by another key,
 *   a stream the statement does not list (re-signed with the log key
 *   without it): `stream_heads`, `stream_heads`, `stream_unlisted`;
 * - a statement that leaves an outcome of an answer set out, signed with the
 *   log key: verify-pack names the unlisted outcome, and `aer1 log
 *   check-heads` calls it INCONSISTENT (`answer_not_listed`);
 * - a format 2 history (LEDGER_EVENT_FORMAT=2): "completeness not provable
 *   before position N", never VERIFIED.
 * (The later outcome that contradicts a confirmation, removed: test/evidence/pack-outcomes.e2e-spec.ts.)
 */
import { lines, Member, onStream, repack, text } from './pack-lines';
import { AddressInfo } from 'node:net';
import { generateSignerKey, signStreamHeads, verifyStreamHeads, parseVerifierKey } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { cli, TmpDir } from '../cli/helpers';
import { buildTimeline, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { outcomeFor, paymentPlan } from '../outcomes/fixtures';

interface Verdict {
  code: number;
  verified: boolean;
  failures: { member: string; check: string; detail: string }[];
  completeness: { statements: number; streams: number; proven: boolean; not_provable_before: number | null };
  not_checked: string[];
}

const pos = (m: Member): number => m.position as number;

describe.each(DIALECTS)('pack completeness on %s', (dialect) => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let vkey = '';
  let url = '';
  const tmp = new TmpDir();
  const open = `open-${dialect}`;
  let tl: ReturnType<typeof buildTimeline>;
  let packText = '';
  let olderSize = 0;

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
  /** An open timeline's AER-1 verdict is invalid (not_closed): the pack says so whatever else it holds. */
  const OPEN: [string, string] = ['timeline (entry/1..entry/4)', 'aer1_verdict'];

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    await t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    vkey = t.app.get(LogIdentityService).current!.vkey;
    // A plan for two actions; the job also calls delete_records, which nobody planned. No commitment: the timeline is open.
    expect((await post('/api/plans', paymentPlan(open), t.keys.compliance)).status).toBe(201);
    // Five steps built, four recorded: the fifth (which closes the chain, S7) never comes, so the timeline stays open.
    tl = buildTimeline(open, [{ tool: 'fetch_customer' }, { tool: 'delete_records' }, { tool: 'send_payment' }, { tool: 'fetch_customer' }, { tool: 'send_payment' }]).slice(0, 4);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${open}/entries`, tl.slice(0, 2), t.keys.producer)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    olderSize = Number((await t.http.get('/checkpoint')).text.split('\n')[1]);
    expect((await post(`/api/jobs/${open}/entries`, tl.slice(2), t.keys.producer)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    packText = await pack(`/api/jobs/${open}/evidence`);
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('the pack as served holds every stream to its signed head; the open chain itself is not_closed (S7), the one failure', async () => {
    const v = await verify(packText);
    expect([v.code, v.verified, failures(v), v.completeness.proven, v.completeness.not_provable_before]).toEqual([1, false, [OPEN], true, null]);
    // The job's timeline, its 4 receipts, their 4 answer sets, the plan, and the pack's subject line: 11 in one statement.
    expect([v.completeness.statements, v.completeness.streams]).toEqual([1, 11]);
    expect(v.out).toContain('completeness: every stream held to its signed head (1 statement naming 11 streams)');
  });

  it('an open timeline with its last entry, its receipt and their events removed: both streams named short of their heads', async () => {
    const ms = lines(packText);
    const last = tl[3];
    const entryEvent = ms.find((m) => m.member === 'entry/4')!;
    const receiptEvents = ms.filter((m) => onStream(m, `receipt:${last.id}`));
    expect(receiptEvents).toHaveLength(1);
    const cut = ms.filter((m) => m.member !== 'entry/4' && m.member !== `receipt/${last.id}` && m.member !== `event/${pos(entryEvent)}` && !receiptEvents.includes(m));
    const v = await verify(repack(cut));
    expect([v.code, v.verified]).toEqual([1, false]);
    expect(failures(v)).toEqual([
      ['timeline (entry/1..entry/3)', 'aer1_verdict'],
      [`receipt:${last.id}`, 'stream_incomplete'],
      [`timeline:${open}`, 'stream_incomplete'],
    ]);
    v.failures.shift();
    // The entry that named it is gone too, so no action is named: the stream and position are.
    expect(v.failures[0].detail).toBe(`its stated head, the event at position ${pos(receiptEvents[0])}, is not in the pack`);
    expect(v.failures[1].detail).toBe(`its stated head, the event at position ${pos(entryEvent)}, is not in the pack`);
    expect(v.out).toContain('Result: NOT VERIFIED (3 failures)');
  });

  it('a middle event removed: its stream and position named', async () => {
    const ms = lines(packText);
    const e2 = ms.find((m) => m.member === 'entry/2')!;
    const v = await verify(repack(ms.filter((m) => m.member !== `event/${pos(e2)}`)));
    expect(failures(v)).toEqual(expect.arrayContaining([[`timeline:${open}`, 'stream_incomplete']]));
    const f = v.failures.find((x) => x.check === 'stream_incomplete')!;
    expect(f.detail).toBe(`event #2 of the stream, the event at position ${pos(e2)}, is not in the pack`);
    expect(v.verified).toBe(false);
  });

  it("an unplanned action's receipt removed (member and event): named with its entry and tool", async () => {
    const ms = lines(packText);
    const unplanned = tl[1];
    const ev = ms.find((m) => onStream(m, `receipt:${unplanned.id}`))!;
    const v = await verify(repack(ms.filter((m) => m !== ev && m.member !== `receipt/${unplanned.id}`)));
    expect(failures(v)).toEqual([OPEN, [`receipt/${unplanned.id}`, 'subject'], [`receipt:${unplanned.id}`, 'stream_incomplete']]);
    expect(v.failures[2].detail).toBe(`its stated head, the event at position ${pos(ev)}, is not in the pack (the receipt of entry 2 (tool "delete_records"))`);
  });

  it('a statement for another checkpoint, or signed by another key: stream_heads, and nothing shown complete', async () => {
    const ms = lines(packText);
    const own = ms.find((m) => m.member === 'log/stream-heads')!;
    const streamsOf = verifyStreamHeads(own.note as string, [parseVerifierKey(vkey)]).statement.heads.map((h) => h.streamId);
    const older = await t.http.get(`/api/ledger/stream-heads?size=${olderSize}&${streamsOf.filter((s) => !s.startsWith('answers:') && !s.startsWith('subject:')).map((s) => `stream=${encodeURIComponent(s)}`).join('&')}`);
    expect(older.status).toBe(200);
    const a = await verify(repack(ms.map((m) => (m === own ? { ...m, note: older.text } : m))));
    expect(failures(a)).toEqual([OPEN, ['log/stream-heads', 'stream_heads']]);
    expect(a.failures[1].detail).toMatch(new RegExp(`^the statement is as of size ${olderSize} \\(root [^)]+\\); the pack's checkpoint is size \\d+`));
    expect([a.verified, a.completeness.proven, a.completeness.statements]).toEqual([false, false, 0]);
    const body = (own.note as string).slice(0, (own.note as string).indexOf('\n\n') + 1);
    const other = generateSignerKey(vkey.split('+')[0]);
    const b = await verify(repack(ms.map((m) => (m === own ? { ...m, note: signStreamHeads(verifyStreamHeads(own.note as string, [parseVerifierKey(vkey)]).statement, other.signer) } : m))));
    expect(failures(b)).toEqual([OPEN, ['log/stream-heads', 'stream_heads']]);
    expect(b.failures[1].detail).toMatch(/^note_/);
    expect(body.split('\n')[1]).toBe('aer1-stream-heads/1');
  });

  it('a stream the statement does not list (re-signed with the log key without it): stream_unlisted, naming it', async () => {
    const ms = lines(packText);
    const own = ms.find((m) => m.member === 'log/stream-heads')!;
    const st = verifyStreamHeads(own.note as string, [parseVerifierKey(vkey)]).statement;
    const drop = `receipt:${tl[0].id}`;
    const forged = signStreamHeads({ ...st, heads: st.heads.filter((h) => h.streamId !== drop) }, t.app.get(LogIdentityService).current!.signer);
    const v = await verify(repack(ms.map((m) => (m === own ? { ...m, note: forged } : m))));
    const ev = ms.find((m) => onStream(m, drop))!;
    expect(failures(v)).toEqual([OPEN, [ev.member, 'stream_unlisted']]);
    expect(v.failures[1].detail).toBe(`an event of stream ${drop}, which no stream-heads statement in the pack names`);
  });

  it("an outcome left out of a signed answer set: verify-pack names it, check-heads calls the statement a lie", async () => {
    const payments = (await t.app.get(ApiKeysService).create(`payments-c-${dialect}`, 'outcome', { systems: ['PAYMENTS'] })).key;
    const job = `answers-${dialect}`;
    expect((await post('/api/plans', paymentPlan(job), t.keys.compliance)).status).toBe(201);
    const steps = buildTimeline(job, [{ tool: 'fetch_customer' }, { tool: 'send_payment' }]);
    for (const e of steps) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, steps, t.keys.producer)).status).toBe(201);
    const settled = outcomeFor({ name: `${job}/settled`, job_id: job, receipt_id: steps[1].id });
    const reversed = outcomeFor({ name: `${job}/reversed`, job_id: job, receipt_id: steps[1].id, result: 'reversed', observed_at: '2026-10-01T12:05:00Z' });
    for (const o of [settled, reversed]) expect((await post('/api/outcomes', o, payments)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const ms = lines(await pack(`/api/jobs/${job}/evidence`));
    const own = ms.find((m) => m.member === 'log/stream-heads')!;
    const st = verifyStreamHeads(own.note as string, [parseVerifierKey(vkey)]).statement;
    const gone = `outcome:${settled.outcome_id.toLowerCase()}`;
    expect(st.heads.map((h) => h.streamId)).toEqual(expect.arrayContaining([gone, `answers:${steps[1].id}:timeline:${job}`]));
    // The log key holder signs the set without the first outcome, and leaves that outcome out of the pack.
    const lie = signStreamHeads({ ...st, heads: st.heads.filter((h) => h.streamId !== gone) }, t.app.get(LogIdentityService).current!.signer);
    const ev = ms.find((m) => onStream(m, gone))!;
    const v = await verify(repack(ms.filter((m) => m !== ev && m.member !== `outcome/${settled.outcome_id.toLowerCase()}`).map((m) => (m === own ? { ...m, note: lie } : m))));
    expect(v.verified).toBe(true); // offline, a consistent lie about a middle member is not visible: the log shows it
    const file = tmp.write(`lie-${dialect}.txt`, lie);
    const c = await cli(['log', 'check-heads', file, '--url', url, '--vkey', vkey, '--json']);
    expect(c.code).toBe(1);
    const j = JSON.parse(c.out) as { results: { result: string; report: { streams: { stream_id: string; verdict: string; code?: string; later?: { position: number } }[] } }[] };
    const set = j.results[0].report.streams.find((s) => s.stream_id.startsWith('answers:'))!;
    expect([j.results[0].result, set.verdict, set.code, set.later?.position]).toEqual(['inconsistent', 'contradicted', 'answer_not_listed', pos(ev)]);
  });
});

describe.each(DIALECTS)('a format 2 history on %s', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  const tmp = new TmpDir();
  afterAll(async () => {
    await t?.close();
    tmp.cleanup();
  });

  it('is reported "completeness not provable before position N", never VERIFIED', async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000', LEDGER_EVENT_FORMAT: '2' });
    const vkey = t.app.get(LogIdentityService).current!.vkey;
    const job = `legacy-${dialect}`;
    const steps = buildTimeline(job, [{ tool: 'fetch_customer' }, { tool: 'send_payment' }]);
    const post = (path: string, body: unknown) => t.http.post(path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    for (const e of steps) expect((await post('/api/receipts', receiptFor(e))).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, steps)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const r = await t.http.get(`/api/jobs/${job}/evidence`).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);
    expect(r.status).toBe(200);
    const file = tmp.write('legacy.jsonl', r.body as string);
    const j = JSON.parse((await cli(['verify-pack', file, '--vkey', vkey, '--json'])).out) as Verdict;
    const newest = Math.max(...lines(r.body as string).filter((m) => m.member.startsWith('event/')).map(pos));
    expect([j.verified, j.failures, j.completeness.proven, j.completeness.not_provable_before]).toEqual([false, [], false, newest + 1]);
    expect(j.not_checked).toContain(`completeness not provable before position ${newest + 1}: events up to it are in format 1 or 2, which carry no stream_prev`);
    const txt = await cli(['verify-pack', file, '--vkey', vkey]);
    expect(txt.code).toBe(1);
    expect(txt.out).toContain(`Result: NOT VERIFIED (0 failures; completeness not provable before position ${newest + 1})`);
    expect(txt.out).not.toContain('Result: VERIFIED');
    // A format 2 receipt erased (issue 29): its leaf can no longer be rebuilt, so no statement can back its head.
    // The pack is still served, that stream is left out of the statement and named, never signed blind.
    const er = await t.http.post('/api/erasures').set('Authorization', `Bearer ${t.keys.privacy}`).set('Content-Type', 'application/json').send(JSON.stringify({ receipt_ids: [steps[0].id], reason: 'customer request', legal_basis: 'GDPR Art. 17(1)(a)' }));
    expect(er.status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const r2 = await t.http.get(`/api/jobs/${job}/evidence`).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);
    expect(r2.status).toBe(200);
    const after = JSON.parse((await cli(['verify-pack', tmp.write('legacy-erased.jsonl', r2.body as string), '--vkey', vkey, '--json'])).out) as Verdict;
    expect(after.verified).toBe(false);
    expect(after.failures.filter((f) => f.check.startsWith('stream_')).map((f) => [f.member, f.check])).toEqual([[`receipt:${steps[0].id}`, 'stream_unlisted']]);
  });
});
