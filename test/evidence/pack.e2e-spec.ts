/**
 * Evidence packs end to end, on SQLite and PostgreSQL: a job with a plan,
 * receipts, an endpoint commitment and a coverage report is downloaded as a
 * pack, the app is closed, and `aer1 verify-pack` checks the file offline;
 * each kind of tampering fails with its member named; a job of a few
 * thousand entries arrives in many chunks; access control.
 */
import type { Response as SaResponse } from 'superagent';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { PackWriter } from '../../src/core/pack/format';
import { cosignCheckpoint, generateSignerKey, SIG_COSIGNATURE_V1 } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { checkpointTimestampDigest } from '../../src/core/timestamp';
import { requestTimestamp } from '../../src/timestamp/tsa-client';
import { startOpenSslTsa } from '../helpers/openssl-tsa';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { readFileSync } from 'node:fs';
import { cli, TmpDir } from '../cli/helpers';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, Entry, receiptFor, uuidFor } from '../coverage/fixtures';

interface Member {
  member: string;
  [k: string]: unknown;
}

const lines = (text: string): Member[] => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Member);
const write = (members: Member[]): string => members.map((m) => JSON.stringify(m)).join('\n') + '\n';
/** Collect a response body as text (supertest parser). */
const text = (res: SaResponse, cb: (err: Error | null, body: string) => void): void => {
  let s = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (s += c));
  res.on('end', () => cb(null, s));
};
/** Rewrite a pack's members through the server's writer (a new manifest), as the server would have written them. */
const repack = (members: Member[]): string => {
  const w = new PackWriter();
  let out = '';
  for (const m of members) if (m.member !== 'manifest' && !m.member.startsWith('manifest/')) out += w.member(m);
  return out + w.finish();
};

describe.each(DIALECTS)('evidence packs on %s', (dialect) => {
  jest.setTimeout(300_000);
  let t: TestApp | null;
  let vkey: string;
  const tmp = new TmpDir();
  const job = `pack-job-${dialect}`;
  const bigJob = `pack-big-${dialect}`;
  let reportId = '';
  let packFile = '';
  let reportPackFile = '';
  let packText = '';
  let workflowPackFile = '';
  let withheldPackText = '';
  let dupPackFile = '';
  const dup = `pack-dup-${dialect}`;
  const hidden = `pack-hidden-${dialect}`;

  const post = (path: string, body: unknown, key: string) =>
    t!.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));

  beforeAll(async () => {
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000' });
    const app = t;
    expect((await post('/api/plans', eightStepPlan(job), app.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, EIGHT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), app.keys.producer)).status).toBe(201);
    for (const e of tl) expect((await post(`/api/jobs/${job}/entries`, e, app.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), app.keys.producer)).status).toBe(201);
    const rep = await post('/api/coverage-reports', { job_id: job }, app.keys.auditor);
    expect(rep.status).toBe(201);
    expect(rep.body.result).toBe('full_coverage');
    reportId = rep.body.report_id;
    // A job of a few thousand entries (one NDJSON import is one event; appends are events of their own).
    const big = buildTimeline(bigJob, Array.from({ length: 3000 }, (_, k) => ({ tool: `t${k % 7}` })));
    const put = await app.http.put(`/api/jobs/${bigJob}/timeline`).set('Authorization', `Bearer ${app.keys.producer}`).set('Content-Type', 'application/x-ndjson').send(big.map((e) => JSON.stringify(e)).join('\n') + '\n');
    expect(put.status).toBe(201);
    // A workflow assembled from recorded receipts.
    const wfSteps = buildTimeline(`pack-wf-${dialect}`, [{ tool: 'a' }, { tool: 'b' }]);
    for (const e of wfSteps) expect((await post('/api/receipts', receiptFor(e), app.keys.producer)).status).toBe(201);
    const wf = await post('/api/workflows/assemble', { session_id: 's-pack', goal: 'pack test', status: 'ok', receipt_ids: wfSteps.map((e) => e.id), output: 'done' }, app.keys.producer);
    expect(wf.status).toBe(201);
    // A job recorded by a key whose publication is `metadata`.
    const meta = (await app.app.get(ApiKeysService).create(`meta-${dialect}`, 'producer', { publication: 'metadata' })).key;
    const hiddenTl = buildTimeline(hidden, [{ tool: 'x' }, { tool: 'y' }]);
    for (const e of hiddenTl) expect((await post(`/api/jobs/${hidden}/entries`, e, meta)).status).toBe(201);
    // Two entries naming one receipt, and a corrected receipt (S9): each receipt is in the pack once.
    expect((await post('/api/plans', { job_id: dup, title: 'dup', expected_actions: [{ action_id: 'a', tool: 'a' }, { action_id: 'b', tool: 'b' }] }, app.keys.compliance)).status).toBe(201);
    const r1 = uuidFor(`${dup}/r1`);
    const dupEntries: Entry[] = [];
    let prev = ZERO_DIGEST;
    for (const [seq, id, tool] of [[1, r1, 'a'], [2, uuidFor(`${dup}/r2`), 'b'], [3, r1, 'a']] as [number, string, string][]) {
      const e: Entry = { seq, job_id: dup, id, tool, provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: Buffer.from(`${dup}/${tool}`).toString('base64'), prev_digest: prev };
      if (seq === 3) e.close = true;
      prev = entryDigest(e) as string;
      dupEntries.push(e);
    }
    expect((await post('/api/receipts', receiptFor(dupEntries[0]), app.keys.producer)).status).toBe(201);
    expect((await post('/api/receipts', receiptFor(dupEntries[1], 'error'), app.keys.producer)).status).toBe(201);
    expect((await post(`/api/receipts/${dupEntries[1].id}/corrections`, { ...receiptFor(dupEntries[1]), id: uuidFor(`${dup}/r2-corrected`) }, app.keys.producer)).status).toBe(201);
    for (const e of dupEntries) expect((await post(`/api/jobs/${dup}/entries`, e, app.keys.producer)).status).toBe(201);
    expect((await post('/api/coverage-reports', { job_id: dup }, app.keys.auditor)).status).toBe(201);
    await app.app.get(CheckpointSigner).tick();
    await app.app.get(CheckpointSigner).tick();
    const dr = await app.http.get(`/api/jobs/${dup}/evidence`).set('Authorization', `Bearer ${app.keys.auditor}`).buffer(true).parse(text);
    expect(dr.status).toBe(200);
    dupPackFile = tmp.write('dup.aer1pack.jsonl', dr.body as string);
    const wfId = wf.body.workflow_id ?? wf.body.id;
    const wr = await app.http.get(`/api/workflows/${wfId}/evidence`).set('Authorization', `Bearer ${app.keys.auditor}`).buffer(true).parse(text);
    expect(wr.status).toBe(200);
    workflowPackFile = tmp.write('workflow.aer1pack.jsonl', wr.body as string);
    const hr = await app.http.get(`/api/jobs/${hidden}/evidence`).set('Authorization', `Bearer ${app.keys.compliance}`).buffer(true).parse(text);
    expect(hr.status).toBe(200);
    withheldPackText = hr.body as string;
    vkey = (await app.http.get('/.well-known/aer1')).body.log_vkey;

    const r = await app.http.get(`/api/jobs/${job}/evidence`).set('Authorization', `Bearer ${app.keys.auditor}`).buffer(true).parse((res, cb) => {
      let s = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (s += c));
      res.on('end', () => cb(null, s));
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/jsonl; charset=utf-8');
    packText = r.body as string;
    packFile = tmp.write('job.aer1pack.jsonl', packText);
    const rr = await app.http.get(`/api/coverage-reports/${reportId}/evidence`).set('Authorization', `Bearer ${app.keys.compliance}`).buffer(true).parse((res, cb) => {
      let s = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (s += c));
      res.on('end', () => cb(null, s));
    });
    expect(rr.status).toBe(200);
    reportPackFile = tmp.write('report.aer1pack.jsonl', rr.body as string);
  });
  afterAll(async () => {
    await t?.close();
    tmp.cleanup();
  });

  it('refuses without a key (401) and with a producer key (403)', async () => {
    expect((await t!.http.get(`/api/jobs/${job}/evidence`)).status).toBe(401);
    const p = await t!.http.get(`/api/jobs/${job}/evidence`).set('Authorization', `Bearer ${t!.keys.producer}`);
    expect([p.status, p.body.error]).toEqual([403, 'forbidden_role']);
    expect((await t!.http.get(`/api/coverage-reports/${reportId}/evidence`).set('Authorization', `Bearer ${t!.keys.producer}`)).status).toBe(403);
    expect((await t!.http.get('/api/jobs/no-such-job/evidence').set('Authorization', `Bearer ${t!.keys.auditor}`)).status).toBe(404);
  });

  it('holds every record, leaf and proof against one checkpoint, and a manifest', () => {
    const ms = lines(packText);
    expect(ms[0]).toMatchObject({ member: 'header', format: 'aer1-evidence-pack/1', subject: { kind: 'job', id: job }, requested_by_role: 'auditor' });
    const names = ms.map((m) => m.member);
    expect(names.filter((n) => n.startsWith('entry/'))).toHaveLength(8);
    expect(names.filter((n) => n.startsWith('receipt/'))).toHaveLength(8);
    // The producer's commitment and the ledger's own, issued when the timeline closed (issue 15).
    expect(names.filter((n) => n.startsWith('commitment/'))).toHaveLength(2);
    expect(names.filter((n) => n.startsWith('plan/'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('report/'))).toEqual([`report/${reportId}`]);
    // 1 plan + 8 receipts + 8 entries + 2 commitments + 1 report events
    expect(names.filter((n) => n.startsWith('event/'))).toHaveLength(20);
    const cp = ms.find((m) => m.member === 'log/checkpoint')!;
    expect(ms.find((m) => m.member === 'header')!.as_of_position).toBe(cp.size);
    expect(ms[ms.length - 1]).toMatchObject({ member: 'manifest', member_count: ms.length - 2, chunks: [['manifest/0', expect.stringMatching(/^[0-9a-f]{64}$/)]] });
  });

  it('streams a job of 3000 entries in many chunks; every check passes, but its receipts are only stated not recorded: NOT VERIFIED', async () => {
    let chunks = 0;
    const r = await t!.http.get(`/api/jobs/${bigJob}/evidence`).set('Authorization', `Bearer ${t!.keys.auditor}`).buffer(true).parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks++;
        parts.push(c);
      });
      res.on('end', () => cb(null, Buffer.concat(parts).toString('utf8')));
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBeUndefined();
    expect(chunks).toBeGreaterThan(10);
    const ms = lines(r.body as string);
    expect(ms.filter((m) => m.member.startsWith('entry/'))).toHaveLength(3000);
    // Its entries name receipts the ledger does not hold: each is stated (recorded: false), so a dropped receipt cannot pass for one never recorded.
    const absent = ms.filter((m) => m.member.startsWith('receipt/'));
    expect([absent.length, absent.every((m) => m.recorded === false && m.raw === null && m.position === null)]).toEqual([3000, true]);
    expect(ms.filter((m) => m.member.startsWith('manifest/'))).toHaveLength(7);
    const file = tmp.write('big.aer1pack.jsonl', r.body as string);
    // Issue 26 listed the ledger's word that a receipt is not recorded as unchecked; issue 30's signed stream-heads
    // statement says each receipt stream had no event as of the checkpoint, so the pack is complete and verifies.
    const v = await cli(['verify-pack', file, '--vkey', vkey]);
    expect([v.code, v.out.includes('Result: VERIFIED')]).toEqual([0, true]);
    expect(v.out).toContain('; 3000 receipts the subject names are not recorded as of the checkpoint, as the log key\'s signed stream-heads statement says');
    expect(v.out).toMatch(/completeness: every stream held to its signed head \(\d+ statements naming 6001 streams\)/);
    const j = JSON.parse((await cli(['verify-pack', file, '--vkey', vkey, '--json'])).out) as { verified: boolean; failures: unknown[]; counts: Record<string, number>; not_checked: string[]; passed: Record<string, number>; completeness: { proven: boolean; streams: number } };
    expect([j.verified, j.failures, j.counts.not_recorded, j.not_checked.length, j.completeness.proven, j.completeness.streams]).toEqual([true, [], 3000, 0, true, 6001]);
    // Each statement names at most 1,000 streams as asked (answer sets add no outcome here): 7 statements.
    expect(ms.filter((m) => /^log\/stream-heads(\/\d+)?$/.test(m.member)).map((m) => m.member)).toEqual(['log/stream-heads', ...[2, 3, 4, 5, 6, 7].map((k) => `log/stream-heads/${k}`)]);
  });

  it('a workflow pack verifies offline; a compliance pack withholds metadata-published bytes and says NOT VERIFIED', async () => {
    const w = await cli(['verify-pack', workflowPackFile, '--vkey', vkey, '--json']);
    const wj = JSON.parse(w.out);
    expect(wj.failures).toEqual([]);
    expect([w.code, wj.verified, wj.verdicts.workflow, wj.counts.receipts]).toEqual([0, true, 'valid', 2]);
    const ms = lines(withheldPackText);
    const entries = ms.filter((m) => m.member.startsWith('entry/'));
    expect(entries.map((e) => [e.raw, e.withheld])).toEqual([[null, 'withheld'], [null, 'withheld']]);
    // Format 3 (issue 29): the leaf holds no content and is served; the payload is what is withheld.
    expect(ms.filter((m) => m.member.startsWith('event/')).every((e) => typeof e.leaf === 'string' && e.payload === null && typeof e.withheld === 'string')).toBe(true);
    const file = tmp.write('withheld.jsonl', withheldPackText);
    const r = await cli(['verify-pack', file, '--vkey', vkey]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('Result: NOT VERIFIED (0 failures, 3 events withheld, 2 records withheld)');
    expect(r.out).toContain('entry/1: bytes withheld');
    expect(r.out).toMatch(/inclusion proofs against the checkpoint root: 3 passed/); // two entries and the ledger's commitment on close
  });

  it('carries witness cosignatures and an RFC 3161 token, verified with --witness/--quorum and --tsa-certs; a bad cosignature or token fails, named', async () => {
    const w1 = generateSignerKey('witness-one.test', SIG_COSIGNATURE_V1);
    const w2 = generateSignerKey('witness-two.test', SIG_COSIGNATURE_V1);
    const tsa = await startOpenSslTsa();
    try {
      const ms = lines(packText);
      const c = ms.find((m) => m.member === 'log/checkpoint')!;
      const note = c.note as string;
      const body = note.slice(0, note.indexOf('\n\n') + 1);
      const witnessed = note + cosignCheckpoint(body, w1.signer, 1_800_000_000) + '\n' + cosignCheckpoint(body, w2.signer, 1_800_000_001) + '\n';
      c.note = witnessed;
      const stamped = await requestTimestamp(tsa.url, checkpointTimestampDigest(witnessed), { certsPem: tsa.caPem });
      if (!stamped.ok) throw new Error(stamped.message);
      const at = ms.indexOf(c) + 1;
      ms.splice(at, 0, { member: 'log/timestamp', timestamp: stamped.token.toString('base64') });
      const good = tmp.write('witnessed.jsonl', repack(ms));
      const ca = tmp.write('ca.pem', tsa.caPem);
      const args = ['--witness', w1.verifierKey, '--witness', w2.verifierKey, '--quorum', '2', '--tsa-certs', ca];
      const r = await cli(['verify-pack', good, '--vkey', vkey, ...args]);
      expect(r.out).toContain('Result: VERIFIED');
      expect(r.out).toContain('cosigned by witness-one.test at 2027-01-15T08:00:00.000Z, witness-two.test at 2027-01-15T08:00:01.000Z');
      expect(r.out).toContain(`the checkpoint existed at ${stamped.genTime}`);
      expect(r.code).toBe(0);
      const unchecked = await cli(['verify-pack', good, '--vkey', vkey]);
      expect(unchecked.out).toContain('RFC 3161 timestamp of the checkpoint: NOT CHECKED (give --tsa-certs)');
      // A cosignature byte changed (the server's manifest rewritten too, so only the signature can catch it).
      const lines2 = witnessed.split('\n');
      const k = lines2.findIndex((l) => l.startsWith('\u2014 witness-two.test '));
      const sig = lines2[k].split(' ');
      const raw = Buffer.from(sig[2], 'base64');
      raw[raw.length - 1] ^= 1;
      lines2[k] = [sig[0], sig[1], raw.toString('base64')].join(' ');
      c.note = lines2.join('\n');
      const bad = tmp.write('badcosig2.jsonl', repack(ms));
      const b = JSON.parse((await cli(['verify-pack', bad, '--vkey', vkey, ...args, '--json'])).out);
      expect(b.failures).toEqual([expect.objectContaining({ member: 'log/checkpoint', check: 'cosignatures', detail: 'the cosignature by witness-two.test does not verify' })]);
      expect(b.verified).toBe(false);
      // A token over another checkpoint body (the timestamp covers the body, not the signature lines).
      c.note = witnessed;
      const otherBody = body.replace(/\n(\d+)\n/, (_m, n: string) => `\n${Number(n) + 1}\n`);
      const other = await requestTimestamp(tsa.url, checkpointTimestampDigest(otherBody + '\n'), { certsPem: tsa.caPem });
      if (!other.ok) throw new Error(other.message);
      ms[at].timestamp = other.token.toString('base64');
      const wrongTs = tmp.write('wrongts.jsonl', repack(ms));
      const t2 = JSON.parse((await cli(['verify-pack', wrongTs, '--vkey', vkey, ...args, '--json'])).out);
      expect(t2.failures).toEqual([expect.objectContaining({ member: 'log/timestamp', check: 'timestamp' })]);
    } finally {
      await tsa.close();
    }
  });

  it('writes a receipt named by two entries once, and a correction once; the report is recomputed with the correction', async () => {
    const ms = lines(readFileSync(dupPackFile, 'utf8'));
    expect(ms.filter((m) => m.member.startsWith('receipt/')).map((m) => m.member).sort()).toEqual([`receipt/${uuidFor(`${dup}/r1`)}`, `receipt/${uuidFor(`${dup}/r2-corrected`)}`, `receipt/${uuidFor(`${dup}/r2`)}`].sort());
    const r = await cli(['verify-pack', dupPackFile, '--vkey', vkey, '--json']);
    const j = JSON.parse(r.out);
    expect(j.failures).toEqual([]);
    expect([r.code, j.reports.length, j.reports[0].recomputed === j.reports[0].digest]).toEqual([0, 1, true]);
  });

  it('verifies offline with no server running (the app closed first)', async () => {
    await t!.close();
    t = null;
    const r = await cli(['verify-pack', packFile, '--vkey', vkey]);
    expect(r.err).toBe('');
    expect(r.out).toContain('Result: VERIFIED');
    expect(r.out).toMatch(/coverage reports recomputed from the pack \(same digest\): 1 passed/);
    expect(r.code).toBe(0);
    const j = JSON.parse((await cli(['verify-pack', packFile, '--vkey', vkey, '--json'])).out);
    expect(j.verified).toBe(true);
    expect(j.failures).toEqual([]);
    expect(j.reports[0].recomputed).toBe(j.reports[0].digest);
    expect(j.verdicts).toEqual({ receipts: { valid: 8 }, timeline: 'valid', workflow: null, outcomes: {} });
    expect(j.passed.inclusion).toBe(20); // 19 records' events and the ledger-issued commitment
    const rp = await cli(['verify-pack', reportPackFile, '--vkey', vkey]);
    expect([rp.code, rp.out.includes('Result: VERIFIED')]).toEqual([0, true]);
    expect((await cli(['verify-pack', packFile])).code).toBe(2);
    expect((await cli(['verify-pack', tmp.path('absent'), '--vkey', vkey])).code).toBe(2);
  });

  async function failuresOf(mutate: (ms: Member[]) => void, raw?: (text: string) => string): Promise<{ member: string; check: string }[]> {
    const ms = lines(packText);
    mutate(ms);
    const file = tmp.write(`tampered-${Math.random().toString(36).slice(2)}.jsonl`, raw ? raw(packText) : write(ms));
    const r = await cli(['verify-pack', file, '--vkey', vkey, '--json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.verified).toBe(false);
    return j.failures.map((f: { member: string; check: string }) => ({ member: f.member, check: f.check }));
  }

  const find = (ms: Member[], prefix: string): Member => ms.find((m) => m.member.startsWith(prefix))!;
  /** An event member's leaf as text (its stream id is in it). */
  const leafOf = (m: Member): string => (typeof m.leaf === 'string' ? Buffer.from(m.leaf, 'base64').toString('utf8') : '');

  /** Verify a pack whose members were changed and whose manifest was rewritten to match (so only the other checks can catch it). */
  async function verifyRepacked(mutate: (ms: Member[]) => Member[], source = packText): Promise<{ code: number; out: string; j: { verified: boolean; failures: { member: string; check: string }[]; not_checked: string[]; counts: Record<string, number> } }> {
    const ms = mutate(lines(source));
    const file = tmp.write(`repacked-${Math.random().toString(36).slice(2)}.jsonl`, repack(ms));
    const r = await cli(['verify-pack', file, '--vkey', vkey, '--json']);
    const j = JSON.parse(r.out);
    j.failures = j.failures.map((f: { member: string; check: string }) => ({ member: f.member, check: f.check }));
    return { code: r.code, out: r.out, j };
  }

  it('a forged receipt/<id> next to a genuine copy under another name fails (member name, leaf bytes, duplicate)', async () => {
    let name = '';
    const { code, j } = await verifyRepacked((ms) =>
      ms.flatMap((m) => {
        if (name !== '' || !m.member.startsWith('receipt/')) return [m];
        name = m.member;
        return [{ ...m, raw: (m.raw as string).replace('"status":"ok"', '"status":"ko"') }, { ...m, member: 'receipt/zz-genuine' }];
      }),
    );
    expect([code, j.verified]).toEqual([1, false]);
    expect(j.failures).toEqual(expect.arrayContaining([{ member: name, check: 'leaf_bytes' }, { member: 'receipt/zz-genuine', check: 'member_name' }, { member: 'receipt/zz-genuine', check: 'duplicate' }]));
  });

  it('a forged entry/3 next to a genuine copy under another name fails', async () => {
    const { code, j } = await verifyRepacked((ms) =>
      ms.flatMap((m) => (m.member === 'entry/3' ? [{ ...m, raw: (m.raw as string).replace('"seq":3', '"seq": 3') }, { ...m, member: 'entry/3x' }] : [m])),
    );
    expect(code).toBe(1);
    expect(j.failures).toEqual(expect.arrayContaining([{ member: 'entry/3', check: 'leaf_bytes' }, { member: 'entry/3x', check: 'member_name' }, { member: 'entry/3x', check: 'duplicate' }]));
  });

  it('a record whose bytes are null (no withheld note, leaf present) says NOT VERIFIED, listed as not checked', async () => {
    let name = '';
    const { code, out, j } = await verifyRepacked((ms) =>
      ms.map((m) => {
        if (name === '' && m.member.startsWith('receipt/')) {
          name = m.member;
          return { ...m, raw: null };
        }
        return m.member === 'entry/3' ? { ...m, raw: null } : m;
      }),
    );
    expect([code, j.verified, j.counts.withheld, j.counts.withheld_records]).toEqual([1, false, 0, 2]);
    expect(j.not_checked).toEqual(expect.arrayContaining([`${name}: bytes withheld`, 'entry/3: bytes withheld']));
    expect(out).not.toContain('Result: VERIFIED');
  });

  it('a pack renamed to another subject, or with a named receipt dropped, fails the subject check', async () => {
    const renamed = await verifyRepacked((ms) => ms.map((m) => (m.member === 'header' ? { ...m, subject: { kind: 'job', id: 'job-other' } } : m)));
    expect(renamed.code).toBe(1);
    expect(renamed.j.failures).toEqual(expect.arrayContaining([{ member: 'entry/1', check: 'subject' }, { member: `report/${reportId}`, check: 'subject' }, { member: find(lines(packText), 'plan/').member, check: 'subject' }]));
    // Drop one receipt with its events (and the report, which would no longer recompute).
    const r = find(lines(packText), 'receipt/');
    const id = r.id as string;
    const dropped = await verifyRepacked((ms) => {
      const positions = new Set(ms.filter((m) => m.member.startsWith('event/') && m.leaf !== null && (Buffer.from(m.leaf as string, 'base64').toString('utf8').includes(`receipt:${id}`) || Buffer.from(m.leaf as string, 'base64').toString('utf8').includes('coverage:'))).map((m) => m.member));
      return ms.filter((m) => m.member !== r.member && !positions.has(m.member) && !m.member.startsWith('report/'));
    });
    expect(dropped.code).toBe(1);
    // The entry names it (subject), and the signed statement names its stream and the report's, both now short (issue 30).
    expect(dropped.j.failures).toEqual([
      { member: `receipt/${id}`, check: 'subject' },
      { member: `coverage:${reportId}`, check: 'stream_incomplete' },
      { member: `receipt:${id}`, check: 'stream_incomplete' },
    ]);
  });

  it('a changed receipt byte fails, naming the receipt', async () => {
    let name = '';
    const f = await failuresOf((ms) => {
      const r = find(ms, 'receipt/');
      name = r.member;
      r.raw = (r.raw as string).replace('"status":"ok"', '"status":"ko"');
    });
    expect(f).toEqual(expect.arrayContaining([{ member: name, check: 'manifest' }, { member: name, check: 'leaf_bytes' }]));
  });

  it('a changed entry fails, naming the entry', async () => {
    const f = await failuresOf((ms) => {
      const e = ms.find((m) => m.member === 'entry/3')!;
      e.raw = (e.raw as string).replace('"seq":3', '"seq": 3');
    });
    expect(f).toEqual(expect.arrayContaining([{ member: 'entry/3', check: 'manifest' }, { member: 'entry/3', check: 'leaf_bytes' }]));
  });

  it('a changed proof node fails the inclusion of that event', async () => {
    let name = '';
    const f = await failuresOf((ms) => {
      const e = find(ms, 'event/');
      name = e.member;
      const p = e.proof as string[];
      p[0] = Buffer.alloc(32, 7).toString('base64');
    });
    expect(f).toEqual(expect.arrayContaining([{ member: name, check: 'inclusion' }]));
  });

  it('a changed checkpoint line fails its signature', async () => {
    const f = await failuresOf((ms) => {
      const c = ms.find((m) => m.member === 'log/checkpoint')!;
      const [origin, size, ...rest] = (c.note as string).split('\n');
      c.note = [origin, String(Number(size) + 1), ...rest].join('\n');
    });
    expect(f).toEqual(expect.arrayContaining([{ member: 'log/checkpoint', check: 'checkpoint_signature' }]));
  });

  it('a changed manifest hash fails, naming the member it lists', async () => {
    const f = await failuresOf((ms) => {
      const m = ms.find((x) => x.member === 'manifest/0')!;
      const list = m.members as [string, string][];
      list[2][1] = '0'.repeat(64);
    });
    expect(f).toEqual(expect.arrayContaining([{ member: lines(packText)[2].member, check: 'manifest' }, { member: 'manifest/0', check: 'manifest' }]));
  });

  it('a changed plan fails its digest and its leaf', async () => {
    let name = '';
    const f = await failuresOf((ms) => {
      const p = find(ms, 'plan/');
      name = p.member;
      p.plan = (p.plan as string).replace('Credit limit change', 'Credit limit chang3');
    });
    expect(f).toEqual(expect.arrayContaining([{ member: name, check: 'plan_digest' }, { member: name, check: 'leaf_bytes' }, { member: name, check: 'manifest' }]));
  });

  it('a changed report fails its digest, its leaf and the manifest', async () => {
    const name = `report/${reportId}`;
    const f = await failuresOf((ms) => {
      const r = ms.find((m) => m.member === name)!;
      (r.report as { result: string }).result = 'findings';
    });
    expect(f).toEqual(expect.arrayContaining([{ member: name, check: 'manifest' }, { member: name, check: 'report_digest' }, { member: name, check: 'leaf_bytes' }]));
  });

  it('one byte changed anywhere fails and says where; a cut pack fails', async () => {
    const text = packText;
    // A byte inside the leaf of the 5th line (base64 letter swapped).
    const f = await failuresOf(
      () => undefined,
      (s) => {
        const ls = s.split('\n');
        const k = ls.findIndex((l) => l.startsWith('{"member":"event/'));
        const at = ls[k].indexOf('"leaf":"') + 20;
        ls[k] = ls[k].slice(0, at) + (ls[k][at] === 'A' ? 'B' : 'A') + ls[k].slice(at + 1);
        return ls.join('\n');
      },
    );
    const name = (JSON.parse(text.split('\n').find((l) => l.startsWith('{"member":"event/'))!) as Member).member;
    expect(f.some((x) => x.member === name)).toBe(true);
    const cut = await failuresOf(() => undefined, (s) => s.split('\n').slice(0, 10).join('\n') + '\n');
    expect(cut).toEqual(expect.arrayContaining([{ member: 'manifest', check: 'manifest' }]));
  });

  it('a cosignature line added by someone else fails the quorum when witnesses are required', async () => {
    const witness = generateSignerKey('witness.test', SIG_COSIGNATURE_V1);
    const other = generateSignerKey('witness.test', SIG_COSIGNATURE_V1);
    const ms = lines(packText);
    const c = ms.find((m) => m.member === 'log/checkpoint')!;
    const note = c.note as string;
    const body = note.slice(0, note.indexOf('\n\n') + 1);
    // A genuine cosignature verifies with the quorum; one by another key (same name) does not.
    c.note = note + cosignCheckpoint(body, witness.signer, 1_800_000_000) + '\n';
    const good = tmp.write('cosigned.jsonl', write(ms));
    // The manifest no longer matches the changed checkpoint member: the cosigned note must be what the server wrote.
    const r1 = JSON.parse((await cli(['verify-pack', good, '--vkey', vkey, '--witness', witness.verifierKey, '--json'])).out);
    expect(r1.passed.cosignatures).toBe(1);
    expect(r1.failures).toEqual([expect.objectContaining({ member: 'log/checkpoint', check: 'manifest' })]);
    c.note = note + cosignCheckpoint(body, other.signer, 1_800_000_000) + '\n';
    const bad = tmp.write('badcosig.jsonl', write(ms));
    const r2 = JSON.parse((await cli(['verify-pack', bad, '--vkey', vkey, '--witness', witness.verifierKey, '--json'])).out);
    expect(r2.failures).toEqual(expect.arrayContaining([expect.objectContaining({ member: 'log/checkpoint', check: 'cosignatures' })]));
  });

  it('a recorded receipt swapped for a "not recorded" statement (its event and the report dropped, the manifest rebuilt) is NOT VERIFIED, the member named', async () => {
    const r = find(lines(packText), 'receipt/');
    const id = r.id as string;
    const genuine = await verifyRepacked((ms) => ms);
    expect([genuine.code, genuine.j.failures, genuine.j.counts.not_recorded]).toEqual([0, [], 0]);
    const swap = (stub: Member) => (ms: Member[]): Member[] => {
      const drop = new Set(ms.filter((m) => m.member.startsWith('event/') && (leafOf(m).includes(`"receipt:${id}"`) || leafOf(m).includes('"coverage:'))).map((m) => m.member));
      return ms.filter((m) => !drop.has(m.member) && !m.member.startsWith('report/')).map((m) => (m.member === r.member ? stub : m));
    };
    const { code, j } = await verifyRepacked(swap({ member: r.member, id, recorded: false, raw: null, position: null }));
    // Issue 30: the signed stream-heads statement names the receipt's stream with its recorded head, and the report's:
    // the swap is caught offline, each missing event named (before, the stub was the server's unverifiable word).
    expect([code, j.verified, j.failures, j.counts.not_recorded]).toEqual([
      1,
      false,
      [
        { member: `coverage:${reportId}`, check: 'stream_incomplete' },
        { member: `receipt:${id}`, check: 'stream_incomplete' },
      ],
      1,
    ]);
    expect(j.failures.length).toBe(2);
    const text = await cli(['verify-pack', tmp.write('swapped.jsonl', repack(swap({ member: r.member, id, recorded: false, raw: null, position: null })(lines(packText)))), '--vkey', vkey]);
    expect(text.code).toBe(1);
    expect(text.out).toMatch(new RegExp(`✗ receipt:${id}: stream_incomplete: its stated head, the event at position \\d+, is not in the pack \\(the receipt of entry \\d+ \\(tool "[^"]+"\\)\\)`));
    expect(text.out).not.toContain('Result: VERIFIED');
    // The stub as written without its id: also refused (its name is not made from its fields; the entry's receipt is not held).
    const bare = await verifyRepacked(swap({ member: r.member, recorded: false, raw: null, position: null }));
    expect([bare.code, bare.j.verified]).toEqual([1, false]);
    expect(bare.j.failures).toEqual([
      { member: r.member, check: 'member_name' },
      { member: r.member, check: 'subject' },
      { member: `coverage:${reportId}`, check: 'stream_incomplete' },
      { member: `receipt:${id}`, check: 'stream_incomplete' },
    ]);
  });

  it("another log's key as --vkey: the one failure is the checkpoint, exit 1, nothing that depends on it listed as failed", async () => {
    const origin = vkey.split('+')[0];
    // Another log (another name), and a key under this log's name that is not its key.
    for (const other of [generateSignerKey('other-log.test'), generateSignerKey(origin)]) {
      const r = await cli(['verify-pack', packFile, '--vkey', other.verifierKey, '--json']);
      expect(r.code).toBe(1);
      const j = JSON.parse(r.out) as { verified: boolean; failures: { member: string; check: string; detail: string }[]; reports: unknown[]; passed: Record<string, number>; not_checked: string[] };
      expect([j.verified, j.failures.map((f) => [f.member, f.check]), j.reports, j.passed]).toEqual([false, [['log/checkpoint', 'checkpoint_signature']], [], {}]);
      expect(j.failures[0].detail).toContain(`the checkpoint does not verify under --vkey ${other.verifierKey}`);
      expect(j.failures[0].detail).toContain(`the pack names the log key ${vkey}. Wrong key given, or a pack of another log`);
      expect(j.not_checked).toEqual(['everything after log/checkpoint (manifest, inclusion proofs, records, verdicts, reports): the checkpoint does not verify under --vkey, and every other check depends on it']);
      const txt = await cli(['verify-pack', packFile, '--vkey', other.verifierKey]);
      expect(txt.code).toBe(1);
      expect(txt.out).toContain('Failures (1):');
      expect(txt.out).toContain('Result: NOT VERIFIED (1 failure)');
      expect(txt.out).not.toMatch(/report_digest|report_recomputed|inclusion:/);
    }
  });
});

describe('evidence packs on a SQLite file (the default deployment)', () => {
  jest.setTimeout(120_000);
  it('signs checkpoints there (the write goes through the write connection) and serves a pack that verifies', async () => {
    const tmp = new TmpDir();
    const t = await startApp('sqlite', { DATABASE_URL: `sqlite:${tmp.path('ledger.sqlite')}`, CHECKPOINT_INTERVAL_MS: '3600000' });
    try {
      const job = 'file-job';
      const tl = buildTimeline(job, [{ tool: 'a' }]);
      // Its receipt recorded: a receipt only stated not recorded would leave the pack unverified (issue 26).
      expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(receiptFor(tl[0])))).status).toBe(201);
      const r = await t.http.post(`/api/jobs/${job}/entries`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(tl[0]));
      expect(r.status).toBe(201);
      await t.app.get(CheckpointSigner).tick();
      await t.app.get(CheckpointSigner).tick();
      expect((await t.http.get('/checkpoint')).status).toBe(200);
      const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
      const p = await t.http.get(`/api/jobs/${job}/evidence`).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);
      expect(p.status).toBe(200);
      const file = tmp.write('file.jsonl', p.body as string);
      const v = await cli(['verify-pack', file, '--vkey', vkey]);
      expect([v.code, v.out.includes('Result: VERIFIED')]).toEqual([0, true]);
    } finally {
      await t.close();
      tmp.cleanup();
    }
  });
});

describe.each(DIALECTS)('a pack asked for right after its record was written, on %s (issue 27)', (dialect) => {
  jest.setTimeout(120_000);
  let t: TestApp;
  beforeAll(async () => {
    // Checkpoints are signed when the test ticks; a pack waits up to 1.5 s for one; one heavy read at a time.
    t = await startApp(dialect, { CHECKPOINT_INTERVAL_MS: '3600000', PACK_CHECKPOINT_WAIT_MS: '1500', HEAVY_READ_CONCURRENCY: '1' });
  });
  afterAll(async () => {
    await t?.close();
  });
  const entry = async (job: string): Promise<void> => {
    const tl = buildTimeline(job, [{ tool: 'a' }]);
    const r = await t.http.post(`/api/jobs/${job}/entries`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(tl[0]));
    expect(r.status).toBe(201);
  };
  const pack = (path: string) => t.http.get(path).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);

  it('waits for the checkpoint that covers the subject (writes go on meanwhile; the wait holds a heavy-read slot), then serves the pack', async () => {
    await entry('job-fresh');
    const started = Date.now();
    const asked = pack('/api/jobs/job-fresh/evidence').then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    // While it waits: a write completes (no transaction or write lock is held), and another heavy read is refused.
    await entry('job-during-wait');
    const busy = await t.http.get('/api/ledger/verify');
    expect([busy.status, busy.body.error]).toEqual([429, 'server_busy']);
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(CheckpointSigner).tick();
    const r = await asked;
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const members = lines(r.body as string);
    expect(members[0]).toMatchObject({ member: 'header', subject: { kind: 'job', id: 'job-fresh' } });
    expect(members.find((m) => m.member === 'log/checkpoint')).toBeDefined();
    expect(members[members.length - 1].member).toBe('manifest');
  });

  it('after PACK_CHECKPOINT_WAIT_MS without a covering checkpoint: 503 no_checkpoint with Retry-After, never the error saved as a pack', async () => {
    await entry('job-unsigned');
    const started = Date.now();
    const r = await t.http.get('/api/jobs/job-unsigned/evidence').set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(r.status).toBe(503);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['content-disposition']).toBeUndefined();
    expect(r.headers['retry-after']).toBe('3600');
    expect(r.body).toEqual({ error: 'no_checkpoint', message: expect.stringContaining('not yet in a signed checkpoint'), checkpoint_size: expect.any(Number), retry_after_seconds: 3600 });
    // The slot came back: the next heavy read is served.
    await new Promise((res) => setTimeout(res, 50));
    expect((await t.http.get('/api/ledger/verify')).status).toBe(200);
  });
});
