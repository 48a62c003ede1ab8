/**
 * `aer1 witness create-key` and `aer1 witness serve` as real processes,
 * driven with an in-memory log over c2sp.org/tlog-witness add-checkpoint:
 * cosignatures that verify (tlog-cosignature), 409/422/400/403/404/413,
 * refused rewrites and forks, SIGKILL and restart, two witnesses side by
 * side, concurrent conflicting requests, and the client helper.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  EMPTY_ROOT,
  formatAddCheckpointRequest,
  generateSignerKey,
  originHash,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  verifyCheckpoint,
  verifyCosignature,
  verifyCosignatures,
} from '../../src/core/tlog';
import { submitToWitness } from '../../src/witness/client';
import { addCheckpoint, aer1, requireBuild, startWitnessProcess, stop, tempDir, TestLog, WitnessProcess } from './helpers';

jest.setTimeout(60_000);

const nowSec = (): number => Math.floor(Date.now() / 1000);

/** The body of a 200 parsed as this witness's cosignature over `checkpoint`; returns its timestamp. */
function expectCosigned(res: { status: number; type: string; body: string }, checkpoint: string, witnessVkey: string): number {
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expect.stringMatching(/^— \S+ [A-Za-z0-9+/=]+\n$/) });
  const w = parseVerifierKey(witnessVkey);
  const { checkpoint: cp, cosignatures } = verifyCosignatures(checkpoint + res.body, [w]);
  expect(cosignatures).toHaveLength(1);
  const sig = parseNote(checkpoint + res.body).signatures.at(-1)!;
  const c = verifyCosignature(parseNote(checkpoint).text, sig, w);
  expect(c.name).toBe(w.name);
  expect(cp.size).toBeGreaterThanOrEqual(0);
  return c.timestamp;
}

describe('aer1 witness (real processes)', () => {
  const tmp = tempDir();
  const running: WitnessProcess[] = [];
  let n = 0;

  beforeAll(() => requireBuild());
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => stop(w, 'SIGKILL')));
  });
  afterAll(() => tmp.cleanup());

  /** A fresh witness key (via the CLI) and state dir. */
  function newWitness(name = `witness.test/w${++n}`): { key: string; vkey: string; state: string } {
    const key = join(tmp.path, `w${n}-${Math.random().toString(36).slice(2)}.key`);
    const r = aer1(['witness', 'create-key', '--name', name, '--out', key]);
    expect([r.code, r.err]).toEqual([0, '']);
    return { key, vkey: r.out.trim(), state: join(tmp.path, `state-${n}-${Math.random().toString(36).slice(2)}`) };
  }

  async function serve(w: { key: string; state: string }, logs: string[]): Promise<WitnessProcess> {
    const p = await startWitnessProcess({ key: w.key, state: w.state, logs });
    running.push(p);
    return p;
  }

  it('create-key writes a 0600 type 0x04 key that pairs with the printed vkey, and never overwrites', () => {
    const key = join(tmp.path, 'ck.key');
    const r = aer1(['witness', 'create-key', '--name', 'auditor.example/w', '--out', key]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    const text = readFileSync(key, 'utf8');
    expect(text).toMatch(/^PRIVATE\+KEY\+auditor\.example\/w\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+\n$/);
    const signer = parseSignerKey(text.trim());
    const vkey = parseVerifierKey(r.out.trim());
    expect(r.out).toBe(`${signer.vkey}\n`);
    expect([vkey.type, vkey.name, vkey.publicKey.equals(signer.publicKey)]).toEqual([SIG_COSIGNATURE_V1, 'auditor.example/w', true]);
    const again = aer1(['witness', 'create-key', '--name', 'auditor.example/w', '--out', key]);
    expect([again.code, again.out, again.err]).toEqual([2, '', `aer1: ${key} already exists; not overwriting a key\n`]);
    expect(readFileSync(key, 'utf8')).toBe(text);
    expect(aer1(['witness', 'create-key', '--name', 'bad name', '--out', join(tmp.path, 'x.key')]).code).toBe(2);
  });

  it('serve refuses bad arguments with one line and exit 2', () => {
    const w = newWitness();
    const logKey = generateSignerKey('log.example/args').verifierKey;
    const cases: [string[], RegExp][] = [
      [['--listen', '127.0.0.1', '--log', logKey], /--listen is HOST:PORT/],
      [['--listen', '127.0.0.1:70000', '--log', logKey], /above 65535/],
      [['--listen', '127.0.0.1:0', '--log', 'not-a-vkey'], /is not a vkey/],
      [['--listen', '127.0.0.1:0', '--log', w.vkey], /is not a log key \(type 0x01\)/],
      [['--listen', '127.0.0.1:0'], /--log/],
    ];
    for (const [args, re] of cases) {
      const r = aer1(['witness', 'serve', '--key', w.key, '--state', w.state, ...args]);
      expect([r.code, r.err.split('\n').length, r.err]).toEqual([2, 2, expect.stringMatching(re)]);
    }
    const logKeyFile = join(tmp.path, 'log-as-witness.key');
    writeFileSync(logKeyFile, generateSignerKey('log.example/args').signerKey + '\n', { mode: 0o600 });
    const r = aer1(['witness', 'serve', '--key', logKeyFile, '--state', w.state, '--listen', '127.0.0.1:0', '--log', logKey]);
    expect([r.code, r.err]).toEqual([2, `aer1: ${logKeyFile} is not a witness key (type 0x04); make one with "aer1 witness create-key"\n`]);
  });

  it('cosigns from 0, then growth with a valid proof; 409 with its size, 422 for a bad proof, 400/403/404/405/413', async () => {
    const log = new TestLog('log.example/main');
    const w = newWitness();
    const p = await serve(w, [log.vkey]);
    log.grow(5);
    const before = nowSec();
    const first = await addCheckpoint(p.url, log.request(0));
    const ts = expectCosigned(first, log.checkpoint(), w.vkey);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(nowSec());
    expect(first.type).toBe('text/plain; charset=utf-8');

    log.grow(12); // 17
    expectCosigned(await addCheckpoint(p.url, log.request(5)), log.checkpoint(), w.vkey);

    // Wrong old size: 409, text/x.tlog.size, the witness's size.
    log.grow(3); // 20
    for (const old of [0, 5, 16, 18]) {
      const r = await addCheckpoint(p.url, log.request(old));
      expect(r).toEqual({ status: 409, type: 'text/x.tlog.size', body: '17\n' });
    }
    // Bad consistency proof: 422, not cosigned.
    const proof = log.proof(17);
    proof[0] = Buffer.from(proof[0]).fill(7);
    const bad = await addCheckpoint(p.url, formatAddCheckpointRequest({ oldSize: 17, proof, checkpoint: log.checkpoint() }));
    expect([bad.status, JSON.parse(bad.body).error]).toEqual([422, 'root_mismatch']);
    const short = await addCheckpoint(p.url, formatAddCheckpointRequest({ oldSize: 17, proof: log.proof(17).slice(1), checkpoint: log.checkpoint() }));
    expect(short.status).toBe(422);
    // A proof from 0 must be empty; a size-0 checkpoint must have the empty root (422 either way).
    const fresh = new TestLog('log.example/fresh');
    const p2 = await serve(newWitness(), [fresh.vkey]);
    fresh.grow(2);
    expect((await addCheckpoint(p2.url, formatAddCheckpointRequest({ oldSize: 0, proof: [EMPTY_ROOT], checkpoint: fresh.checkpoint() }))).status).toBe(422);
    expect((await addCheckpoint(p2.url, formatAddCheckpointRequest({ oldSize: 0, proof: [], checkpoint: fresh.checkpoint(0, undefined, fresh.root(2)) }))).status).toBe(422);

    // old above the checkpoint size: 400. Malformed: 400.
    const above = await addCheckpoint(p.url, formatAddCheckpointRequest({ oldSize: 21, proof: [], checkpoint: log.checkpoint() }));
    expect([above.status, JSON.parse(above.body).error]).toEqual([400, 'witness_old_size_too_large']);
    for (const body of ['old 017\n\n' + log.checkpoint(), 'old 17\nnot base64\n\n' + log.checkpoint(), 'hello', `old 17\n\n${log.origin}\n20\n`]) {
      const r = await addCheckpoint(p.url, body);
      expect([r.status, r.type, JSON.parse(r.body).error]).toEqual([400, 'application/json', 'witness_request_malformed']);
    }
    // Unknown origin: 404. Signed by another key of the same name, or a broken signature by the log key: 403.
    const stranger = new TestLog('log.example/stranger');
    stranger.grow(1);
    expect((await addCheckpoint(p.url, stranger.request(0))).status).toBe(404);
    const impostor = generateSignerKey(log.origin).signer;
    const forged = await addCheckpoint(p.url, formatAddCheckpointRequest({ oldSize: 17, proof: log.proof(17), checkpoint: log.checkpoint(20, [impostor]) }));
    expect([forged.status, JSON.parse(forged.body).error]).toEqual([403, 'note_no_trusted_signature']);
    const cp = log.checkpoint();
    const broken = cp.replace(/ ([A-Za-z0-9+/]{8})([A-Za-z0-9+/])/, (_m, a: string, b: string) => ` ${a}${b === 'A' ? 'B' : 'A'}`);
    expect(broken).not.toBe(cp);
    const brokenRes = await addCheckpoint(p.url, formatAddCheckpointRequest({ oldSize: 17, proof: log.proof(17), checkpoint: broken }));
    expect([brokenRes.status, JSON.parse(brokenRes.body).error]).toEqual([403, 'note_signature_invalid']);
    // Wrong method, unknown path, body too large.
    expect((await fetch(`${p.url}/add-checkpoint`)).status).toBe(405);
    expect((await fetch(`${p.url}/nothing`)).status).toBe(404);
    const huge = await addCheckpoint(p.url, 'old 0\n\n' + 'x'.repeat(200 * 1024));
    expect([huge.status, JSON.parse(huge.body).error]).toEqual([413, 'body_too_large']);

    // Nothing above moved the witness: it still holds 17 and cosigns 17 -> 20.
    expectCosigned(await addCheckpoint(p.url, log.request(17)), log.checkpoint(), w.vkey);
    // The same checkpoint again (old = size, same root) is cosigned again.
    expectCosigned(await addCheckpoint(p.url, log.request(20)), log.checkpoint(), w.vkey);

    // Monitoring: GET /<sha256(origin)>/checkpoint serves the log signature and the cosignature.
    const mon = await fetch(`${p.url}/${originHash(log.origin)}/checkpoint`);
    const monText = await mon.text();
    expect(mon.status).toBe(200);
    expect(verifyCheckpoint(monText, [parseVerifierKey(log.vkey)]).checkpoint.size).toBe(20);
    expect(verifyCosignatures(monText, [parseVerifierKey(w.vkey)]).cosignatures).toHaveLength(1);
    expect((await fetch(`${p.url}/${originHash(stranger.origin)}/checkpoint`)).status).toBe(404);

    // One stderr line per request, no key material.
    const requestLines = (): string[] => p.stderr().split('\n').filter((l) => / (POST|GET) /.test(l));
    for (let i = 0; i < 50 && requestLines().length < 23; i++) await new Promise((r) => setTimeout(r, 20)); // the line follows the answer
    expect(requestLines()).toHaveLength(23);
    expect(p.stderr()).not.toContain('PRIVATE');
    expect(p.stderr()).toMatch(/POST "\/add-checkpoint" 409 origin="log.example\/main" old=0 error=witness_old_size_mismatch size=17/);
  });

  it('a rewritten history (same size, other root) or a fork is refused and never cosigned; the refused checkpoint is kept as evidence', async () => {
    const log = new TestLog('log.example/rewrite', 'honest');
    const w = newWitness();
    const p = await serve(w, [log.vkey]);
    log.grow(10);
    expectCosigned(await addCheckpoint(p.url, log.request(0)), log.checkpoint(), w.vkey);
    // The same log key signs another history of the same size.
    const rewritten = new TestLog(log.origin, 'rewritten', { signer: log.signer, verifierKey: log.vkey });
    rewritten.grow(10);
    const same = await addCheckpoint(p.url, rewritten.request(10));
    expect([same.status, JSON.parse(same.body).error]).toEqual([422, 'root_mismatch']);
    // From 0 it is a 409 (the witness holds 10), never a cosignature.
    expect(await addCheckpoint(p.url, rewritten.request(0))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '10\n' });
    // A fork: the first 6 leaves shared, then other leaves, grown to 14; its own proof from 10 does not match what the witness holds.
    const fork = new TestLog(log.origin, 'honest', { signer: log.signer, verifierKey: log.vkey });
    fork.grow(6);
    fork.grow(8, 'fork');
    const forked = await addCheckpoint(p.url, fork.request(10));
    expect(forked.status).toBe(422);
    // The honest log still extends.
    log.grow(4);
    expectCosigned(await addCheckpoint(p.url, log.request(10)), log.checkpoint(), w.vkey);
    expect(p.stderr()).toMatch(/422 origin="log.example\/rewrite" old=10 error=root_mismatch evidence=[0-9a-f]{64}-[0-9a-f]{64}\.txt/);
    const { readdirSync } = await import('node:fs');
    const evidence = readdirSync(join(w.state, 'evidence')).map((f) => readFileSync(join(w.state, 'evidence', f), 'utf8'));
    expect(evidence.sort()).toEqual([rewritten.request(10), fork.request(10)].sort());
  });

  it('SIGKILL right after a 200: restarted on the same state, it keeps its size', async () => {
    const log = new TestLog('log.example/crash');
    const w = newWitness();
    let p = await serve(w, [log.vkey]);
    log.grow(8);
    expectCosigned(await addCheckpoint(p.url, log.request(0)), log.checkpoint(), w.vkey);
    log.grow(5); // 13
    expectCosigned(await addCheckpoint(p.url, log.request(8)), log.checkpoint(), w.vkey);
    expect(await stop(p, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    p = await serve(w, [log.vkey]);
    expect(p.stderr()).toContain('log "log.example/crash": latest cosigned size 13');
    for (const old of [0, 8]) expect(await addCheckpoint(p.url, log.request(old))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '13\n' });
    const rewritten = new TestLog(log.origin, 'other', { signer: log.signer, verifierKey: log.vkey });
    rewritten.grow(13);
    expect((await addCheckpoint(p.url, rewritten.request(13))).status).toBe(422);
    log.grow(1);
    expectCosigned(await addCheckpoint(p.url, log.request(13)), log.checkpoint(), w.vkey);
    // SIGTERM stops it cleanly (exit 0), and it starts again.
    expect(await stop(p, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(p.stderr()).toMatch(/stopped\n$/);
    p = await serve(w, [log.vkey]);
    expect(await addCheckpoint(p.url, log.request(0))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '14\n' });
    // A second process on the same state directory is refused while the first runs.
    const second = aer1(['witness', 'serve', '--key', w.key, '--state', w.state, '--listen', '127.0.0.1:0', '--log', log.vkey]);
    expect([second.code, second.err]).toEqual([2, expect.stringMatching(/^aer1: state directory .*: the state directory is in use by process \d+/)]);
  });

  it('two witnesses with their own keys and state, several logs each: both cosignatures verify on one checkpoint', async () => {
    const a = new TestLog('log.example/a');
    const b = new TestLog('log.example/b');
    const w1 = newWitness('witness.one/w');
    const w2 = newWitness('witness.two/w');
    const [p1, p2] = await Promise.all([serve(w1, [a.vkey, b.vkey]), serve(w2, [a.vkey, b.vkey])]);
    a.grow(7);
    b.grow(3);
    const cosigned = async (log: TestLog, old: number): Promise<string> => {
      const cp = log.checkpoint();
      const [r1, r2] = await Promise.all([p1, p2].map((p) => addCheckpoint(p.url, log.request(old))));
      expectCosigned(r1, cp, w1.vkey);
      expectCosigned(r2, cp, w2.vkey);
      return cp + r1.body + r2.body;
    };
    const noteA = await cosigned(a, 0);
    await cosigned(b, 0);
    a.grow(2);
    const noteA9 = await cosigned(a, 7);
    const keys = [parseVerifierKey(w1.vkey), parseVerifierKey(w2.vkey)];
    expect(verifyCosignatures(noteA, keys).cosignatures.map((c) => c.name)).toEqual(['witness.one/w', 'witness.two/w']);
    expect(verifyCosignatures(noteA9, keys).checkpoint.size).toBe(9);
    // Each witness's state is its own: w1 learns a newer checkpoint of b, w2 does not.
    b.grow(1);
    expectCosigned(await addCheckpoint(p1.url, b.request(3)), b.checkpoint(), w1.vkey);
    expect(await addCheckpoint(p2.url, b.request(4))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '3\n' });
    // A cosignature by w1 does not verify as w2's.
    const sig = parseNote(noteA).signatures.find((s) => s.name === 'witness.one/w')!;
    expect(() => verifyCosignature(parseNote(noteA).text, sig, keys[1])).toThrow();
  });

  it('concurrent add-checkpoint requests for conflicting checkpoints: exactly one is cosigned', async () => {
    const w = newWitness();
    const base = new TestLog('log.example/race', 'base');
    const p = await serve(w, [base.vkey]);
    base.grow(10);
    expectCosigned(await addCheckpoint(p.url, base.request(0)), base.checkpoint(), w.vkey);
    // Eight histories, each extending the cosigned 10 consistently, but pairwise inconsistent.
    const forks = Array.from({ length: 8 }, (_, i) => {
      const f = new TestLog(base.origin, 'base', { signer: base.signer, verifierKey: base.vkey });
      f.grow(10);
      f.grow(1 + (i % 3), `fork${i}`);
      return f;
    });
    const results = await Promise.all(forks.map((f) => addCheckpoint(p.url, f.request(10))));
    const ok = results.map((r, i) => ({ r, i })).filter((x) => x.r.status === 200);
    expect(ok).toHaveLength(1);
    const winner = forks[ok[0].i];
    expectCosigned(ok[0].r, winner.checkpoint(), w.vkey);
    for (const r of results) if (r.status !== 200) expect(r).toEqual({ status: 409, type: 'text/x.tlog.size', body: `${winner.size}\n` });
    // Same size, different roots, sent together from the winner's size: none is cosigned unless it is the winner's.
    const monitor = await (await fetch(`${p.url}/${originHash(base.origin)}/checkpoint`)).text();
    expect(verifyCheckpoint(monitor, [parseVerifierKey(base.vkey)]).checkpoint.rootHash.equals(winner.root())).toBe(true);
  });

  it('submitToWitness: cosigned (verified), conflict with the size, rejected, unreachable', async () => {
    const log = new TestLog('log.example/client');
    const w = newWitness();
    const p = await serve(w, [log.vkey]);
    const wkey = parseVerifierKey(w.vkey);
    log.grow(6);
    const r1 = await submitToWitness(`${p.url}/`, 0, [], log.checkpoint(), { witness: wkey });
    expect(r1.status).toBe('cosigned');
    const lines = (r1 as { cosignatureLines: string[] }).cosignatureLines;
    expect(lines).toHaveLength(1);
    expect(verifyCosignatures(`${log.checkpoint()}${lines[0]}\n`, [wkey]).cosignatures).toHaveLength(1);
    log.grow(3);
    expect(await submitToWitness(p.url, 0, [], log.checkpoint())).toEqual({ status: 'conflict', size: 6 });
    expect(await submitToWitness(p.url, 6, log.proof(6), log.checkpoint(), { witness: wkey })).toEqual({ status: 'cosigned', cosignatureLines: [expect.stringMatching(/^— witness\.test\/w\d+ /)] });
    const rewritten = new TestLog(log.origin, 'x', { signer: log.signer, verifierKey: log.vkey });
    rewritten.grow(9);
    const rej = await submitToWitness(p.url, 9, [], rewritten.checkpoint());
    expect(rej).toEqual({ status: 'rejected', http: 422, body: expect.stringContaining('"error":"root_mismatch"') });
    // The right witness, the wrong expected key: a 200 whose lines are not by that key is rejected.
    log.grow(1);
    const other = parseVerifierKey(generateSignerKey('witness.test/other', SIG_COSIGNATURE_V1).verifierKey);
    expect(await submitToWitness(p.url, 9, log.proof(9), log.checkpoint(), { witness: other })).toEqual({ status: 'rejected', http: 200, body: 'no cosignature by witness.test/other' });
    await stop(p, 'SIGTERM');
    const down = await submitToWitness(p.url, 10, [], log.checkpoint(), { timeoutMs: 2000 });
    expect(down).toEqual({ status: 'unreachable', error: 'ECONNREFUSED' });
  });
});
