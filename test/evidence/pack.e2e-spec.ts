/**
 * Evidence packs end to end, on SQLite and PostgreSQL: a job with a plan,
 * receipts, an endpoint commitment and a coverage report is downloaded as a
 * pack, the app is closed, and `aer1 verify-pack` checks the file offline;
 * each kind of tampering fails with its member named; a job of a few
 * thousand entries arrives in many chunks; access control.
 */
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { cli, TmpDir } from '../cli/helpers';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, receiptFor } from '../coverage/fixtures';

interface Member {
  member: string;
  [k: string]: unknown;
}

const lines = (text: string): Member[] => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Member);
const write = (members: Member[]): string => members.map((m) => JSON.stringify(m)).join('\n') + '\n';

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
    await app.app.get(CheckpointSigner).tick();
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
    expect(names.filter((n) => n.startsWith('commitment/'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('plan/'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('report/'))).toEqual([`report/${reportId}`]);
    // 1 plan + 8 receipts + 8 entries + 1 commitment + 1 report events
    expect(names.filter((n) => n.startsWith('event/'))).toHaveLength(19);
    const cp = ms.find((m) => m.member === 'log/checkpoint')!;
    expect(ms.find((m) => m.member === 'header')!.as_of_position).toBe(cp.size);
    expect(ms[ms.length - 1]).toMatchObject({ member: 'manifest', member_count: ms.length - 2, chunks: [['manifest/0', expect.stringMatching(/^[0-9a-f]{64}$/)]] });
  });

  it('streams a job of 3000 entries in many chunks, and the pack verifies', async () => {
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
    expect(ms.filter((m) => m.member.startsWith('manifest/'))).toHaveLength(4);
    const file = tmp.write('big.aer1pack.jsonl', r.body as string);
    const v = await cli(['verify-pack', file, '--vkey', vkey]);
    expect([v.code, v.out.includes('Result: VERIFIED')]).toEqual([0, true]);
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
    expect(j.verdicts).toEqual({ receipts: { valid: 8 }, timeline: 'valid', workflow: null });
    expect(j.passed.inclusion).toBe(19);
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
    const { generateSignerKey, SIG_COSIGNATURE_V1, cosignCheckpoint } = await import('../../src/core/tlog');
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
});
