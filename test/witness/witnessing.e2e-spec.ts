/**
 * The ledger's side of witnessing (issue 15), all real processes: two
 * `aer1 witness serve` (separate keys and state folders) and the API server
 * (`node dist/src/main.js`) with WITNESSES and WITNESS_QUORUM=2, on SQLite
 * and PostgreSQL. `/checkpoint` carries both cosignatures and they verify
 * (c2sp.org/tlog-cosignature); a witness killed with SIGKILL leaves
 * `/checkpoint` at the last witnessed size while signing goes on and
 * /health shows its lag; restarted, it has kept its size and catches up; a
 * ledger whose history was rebuilt (same key and origin, other events) is
 * refused by both witnesses and never served as witnessed.
 * Run `npm run build` first.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNote, parseVerifierKey, verifyCheckpoint, verifyCosignatures } from '../../src/core/tlog';
import { createSigningKeyFile } from '../../src/log/log-key';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { OpenSslTsa, startOpenSslTsa } from '../helpers/openssl-tsa';
import { call, freePort, freshReceipt, killAll, ServerProcess, waitUntil } from '../reliability/helpers';
import { addCheckpoint, aer1, requireBuild, startWitnessProcess, stop, tempDir, WitnessProcess } from './helpers';

jest.setTimeout(240_000);

const ADMIN = 'witnessing-admin-key-0123456789';

interface Witness {
  key: string;
  vkey: string;
  state: string;
  listen: string;
  proc?: WitnessProcess;
}

interface WitnessRow {
  name: string;
  cosigned_size: number | null;
  lag_sizes: number;
  lag_seconds: number;
  current: boolean;
  last_error?: string;
}

async function checkpointSize(base: string, path = '/checkpoint'): Promise<number | null> {
  const r = await call(base, 'GET', path);
  if (r.status !== 200) return null;
  return Number(r.text.split('\n')[1]);
}

describe.each(DIALECTS)('witnessing with two real witnesses (%s)', (dialect) => {
  const tmp = tempDir('aer1-witnessing-');
  const witnesses: Witness[] = [];
  const drops: (() => Promise<void>)[] = [];
  let logVkey = '';
  let keyFile = '';
  let ledger: ServerProcess | undefined;
  let producer = '';
  let tsa: OpenSslTsa;
  let tsaCerts = '';

  async function databaseUrl(name: string): Promise<string> {
    if (dialect === 'sqlite') return `sqlite:${join(tmp.path, `${name}.sqlite`)}`;
    const db = await createPgDatabase();
    drops.push(db.drop);
    return db.url;
  }

  async function startLedger(url: string, stateFile?: string): Promise<{ server: ServerProcess; producer: string }> {
    const server = await ServerProcess.start({
      DATABASE_URL: url,
      LEDGER_SIGNING_KEY_FILE: keyFile,
      ...(stateFile ? { LEDGER_CHECKPOINT_STATE_FILE: stateFile } : {}),
      PUBLIC_BASE_URL: 'https://ledger.test',
      LEDGER_ADMIN_KEY: ADMIN,
      CHECKPOINT_INTERVAL_MS: '200',
      VERIFY_RATE_LIMIT: '1000000',
      LOG_LEVEL: 'warn',
      WITNESSES: JSON.stringify(witnesses.map((w) => ({ url: `http://${w.listen}`, vkey: w.vkey }))),
      WITNESS_QUORUM: '2',
      TSA_URL: tsa.url,
      TSA_CERTS: tsaCerts,
      TSA_INTERVAL_MS: '0',
    });
    const k = await call(server.url, 'POST', '/api/keys', { key: ADMIN, body: JSON.stringify({ name: 'producer', role: 'producer' }) });
    expect(k.status).toBe(201);
    return { server, producer: k.body.key as string };
  }

  async function append(base: string, key: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = freshReceipt();
      const res = await call(base, 'POST', '/api/receipts', { key, body: r.text });
      expect(res.status).toBe(201);
      ids.push(r.id);
    }
    return ids;
  }

  
async function health(base: string): Promise<{ status: string; log: { witnessing: { quorum: number; current: number; witnesses: WitnessRow[] } } }> {
    const h = await call(base, 'GET', '/health');
    return { status: h.body.status, log: h.body.details.log };
  }

  beforeAll(async () => {
    requireBuild();
    keyFile = join(tmp.path, 'log-signing.key');
    logVkey = createSigningKeyFile(keyFile, 'ledger.test').vkey;
    tsa = await startOpenSslTsa({ name: 'Witnessing TSA' });
    tsaCerts = join(tmp.path, 'tsa.pem');
    writeFileSync(tsaCerts, tsa.chainPem);
    for (const n of [1, 2]) {
      const key = join(tmp.path, `w${n}.key`);
      const r = aer1(['witness', 'create-key', '--name', `witness${n}.test`, '--out', key]);
      expect([r.code, r.err]).toEqual([0, '']);
      const w: Witness = { key, vkey: r.out.trim(), state: join(tmp.path, `w${n}-state`), listen: `127.0.0.1:${await freePort()}` };
      w.proc = await startWitnessProcess({ key: w.key, logs: [logVkey], state: w.state, listen: w.listen });
      witnesses.push(w);
    }
  });

  afterAll(async () => {
    await ledger?.stop();
    await Promise.all(witnesses.map((w) => stop(w.proc, 'SIGKILL')));
    await killAll();
    await tsa?.close();
    for (const d of drops) await d();
    tmp.cleanup();
  });

  it('serves at /checkpoint only checkpoints both witnesses cosigned, and the cosignatures verify', async () => {
    const l = await startLedger(await databaseUrl('a'));
    ledger = l.server;
    producer = l.producer;
    const ids = await append(ledger.url, producer, 3);
    await waitUntil('a witnessed checkpoint of size >= 3', 30_000, async () => ((await checkpointSize(ledger!.url)) ?? 0) >= 3);

    const note = (await call(ledger.url, 'GET', '/checkpoint')).text;
    const cp = verifyCheckpoint(note, [parseVerifierKey(logVkey)], 'ledger.test');
    const { cosignatures } = verifyCosignatures(note, witnesses.map((w) => parseVerifierKey(w.vkey)));
    expect(cosignatures.map((c) => c.name).sort()).toEqual(['witness1.test', 'witness2.test']);
    expect(parseNote(note).signatures).toHaveLength(3);
    for (const c of cosignatures) expect(Math.abs(c.timestamp - Date.now() / 1000)).toBeLessThan(120);

    // The stored checkpoint of that size carries the same cosignatures.
    const bySize = await call(ledger.url, 'GET', `/api/ledger/checkpoints/${cp.checkpoint.size}`);
    expect(bySize.status).toBe(200);
    expect(verifyCosignatures(bySize.text, witnesses.map((w) => parseVerifierKey(w.vkey))).cosignatures).toHaveLength(2);
    expect(await checkpointSize(ledger.url, '/checkpoint/latest')).toBeGreaterThanOrEqual(cp.checkpoint.size);

    // A receipt's proof file is made against a witnessed checkpoint: aer1 log verify-proof with quorum 2 accepts it.
    const proof = await call(ledger.url, 'GET', `/api/receipts/${ids[0]}/proof`);
    expect(proof.status).toBe(200);
    expect(verifyCosignatures(proof.body.checkpoint, witnesses.map((w) => parseVerifierKey(w.vkey))).cosignatures).toHaveLength(2);
    const file = join(tmp.path, `proof-${dialect}.json`);
    writeFileSync(file, proof.text);
    const ok = aer1(['log', 'verify-proof', file, '--vkey', logVkey, '--witness', witnesses[0].vkey, '--witness', witnesses[1].vkey, '--quorum', '2']);
    expect([ok.code, ok.err]).toEqual([0, '']);
    // A third, unknown witness key demanded: refused.
    const other = aer1(['witness', 'create-key', '--name', 'witness3.test', '--out', join(tmp.path, `w3-${dialect}.key`)]).out.trim();
    const refused = aer1(['log', 'verify-proof', file, '--vkey', logVkey, '--witness', other, '--quorum', '1']);
    expect(refused.code).toBe(1);

    // The witnessed checkpoint is timestamped (RFC 3161), and only witnessed ones are.
    await waitUntil('a timestamp of a witnessed checkpoint', 30_000, async () => (await call(ledger!.url, 'GET', `/api/ledger/checkpoints/${cp.checkpoint.size}/timestamp`)).status === 200);

    const h = await health(ledger.url);
    expect(h.status).toBe('ok');
    expect(h.log.witnessing.quorum).toBe(2);
    expect(h.log.witnessing.witnesses.map((w: WitnessRow) => [w.name, w.cosigned_size !== null && w.cosigned_size >= 3, w.current])).toEqual([
      ['witness1.test', true, true],
      ['witness2.test', true, true],
    ]);
  });

  it('a witness killed with SIGKILL: signing goes on, /checkpoint stays at the last witnessed size, /health shows the lag; restarted, it kept its size and catches up', async () => {
    const base = ledger!.url;
    await waitUntil('witnessed = newest signed', 30_000, async () => (await checkpointSize(base)) === (await checkpointSize(base, '/checkpoint/latest')));
    const w2 = witnesses[1];
    expect((await stop(w2.proc, 'SIGKILL'))?.signal).toBe('SIGKILL');
    const witnessed = (await checkpointSize(base)) as number;
    await append(base, producer, 2);
    await waitUntil('a newer signed checkpoint', 30_000, async () => ((await checkpointSize(base, '/checkpoint/latest')) ?? 0) >= witnessed + 2);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await checkpointSize(base)).toBe(witnessed);
    // The newest signed one carries witness1's cosignature only.
    const latest = (await call(base, 'GET', '/checkpoint/latest')).text;
    await waitUntil('witness1 cosigned the newest', 30_000, async () => {
      const t = (await call(base, 'GET', '/checkpoint/latest')).text;
      return verifyCosignatures(t, [parseVerifierKey(witnesses[0].vkey)]).cosignatures.length === 1;
    });
    expect(verifyCosignatures(latest, [parseVerifierKey(w2.vkey)]).cosignatures).toHaveLength(0);
    // Checkpoints not cosigned by 2 witnesses are never timestamped.
    expect((await call(base, 'GET', `/api/ledger/checkpoints/${Number(latest.split('\n')[1])}/timestamp`)).status).toBe(404);
    await waitUntil('the last witnessed checkpoint timestamped', 20_000, async () => (await call(base, 'GET', `/api/ledger/checkpoints/${witnessed}/timestamp`)).status === 200);
    const h = await health(base);
    const [h1, h2] = h.log.witnessing.witnesses;
    expect(h2.name).toBe('witness2.test');
    expect(h2.cosigned_size).toBe(witnessed);
    expect(h2.lag_sizes).toBeGreaterThanOrEqual(2);
    expect(h2.lag_seconds).toBeGreaterThanOrEqual(0);
    expect(h2.last_error).toMatch(/unreachable/);
    expect(h1.lag_sizes).toBe(0);

    // Restarted on the same state: it still holds the size it cosigned (a 409 with that size to old 0).
    w2.proc = await startWitnessProcess({ key: w2.key, logs: [logVkey], state: w2.state, listen: w2.listen });
    // (The ledger's coordinator, retrying, may already have brought it further: never below what it cosigned before the kill.)
    const probe = await addCheckpoint(`http://${w2.listen}`, `old 0\n\n${latest}`);
    expect(probe.status).toBe(409);
    expect(probe.body).toMatch(/^\d+\n$/);
    expect(Number(probe.body.trim())).toBeGreaterThanOrEqual(witnessed);
    await waitUntil('witness2 caught up', 60_000, async () => (await checkpointSize(base)) === (await checkpointSize(base, '/checkpoint/latest')) && ((await checkpointSize(base)) ?? 0) >= witnessed + 2);
    const after = await health(base);
    expect(after.log.witnessing.witnesses[1].lag_sizes).toBe(0);
    expect(after.log.witnessing.witnesses[1].last_error).toBeUndefined();
  });

  it('a ledger whose history was rebuilt (same key and origin, other events) is refused by both witnesses and never served as witnessed', async () => {
    const witnessedSize = (await checkpointSize(ledger!.url)) as number;
    await ledger!.stop();
    ledger = undefined;
    // Started without ledger A's state file (its own, empty): with it the ledger would refuse to sign this history at all (test/log/checkpoint-state.e2e-spec.ts).
    const b = await startLedger(await databaseUrl('b'), join(tmp.path, 'b.checkpoint'));
    ledger = b.server;
    await append(b.server.url, b.producer, witnessedSize);
    await waitUntil('ledger B signed the same size', 30_000, async () => ((await checkpointSize(b.server.url, '/checkpoint/latest')) ?? 0) === witnessedSize);
    await waitUntil('both witnesses refused it', 30_000, async () => {
      const h = await health(b.server.url);
      return h.log.witnessing.witnesses.every((w: WitnessRow) => /HTTP 422/.test(w.last_error ?? ''));
    });
    // One more event: a size the witnesses never saw, still refused (the proof from their size does not hold).
    await append(b.server.url, b.producer, 1);
    await waitUntil('ledger B signed a larger size', 30_000, async () => ((await checkpointSize(b.server.url, '/checkpoint/latest')) ?? 0) === witnessedSize + 1);
    await new Promise((r) => setTimeout(r, 2000));
    const none = await call(b.server.url, 'GET', '/checkpoint');
    expect([none.status, none.body.error]).toEqual([404, 'no_checkpoint']);
    const latest = (await call(b.server.url, 'GET', '/checkpoint/latest')).text;
    expect(verifyCosignatures(latest, witnesses.map((w) => parseVerifierKey(w.vkey))).cosignatures).toHaveLength(0);
    expect(parseNote(latest).signatures).toHaveLength(1);
    expect((await call(b.server.url, 'GET', `/api/ledger/checkpoints/${witnessedSize + 1}/timestamp`)).status).toBe(404);
    const h = await health(b.server.url);
    expect(h.status).toBe('degraded');
    for (const w of h.log.witnessing.witnesses) {
      expect(w.cosigned_size).toBeNull();
      expect(w.last_error).toMatch(/HTTP 422/);
    }
    // The witnesses still hold ledger A's size.
    for (const w of witnesses) {
      const probe = await addCheckpoint(`http://${w.listen}`, `old 0\n\n${latest}`);
      expect([probe.status, probe.body]).toEqual([409, `${witnessedSize}\n`]);
    }
  });
});

describe('two API processes on one PostgreSQL, both submitting to the same two witnesses', () => {
  const tmp = tempDir('aer1-witnessing-multi-');
  const procs: WitnessProcess[] = [];
  const servers: ServerProcess[] = [];
  let drop: (() => Promise<void>) | undefined;

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await Promise.all(procs.map((p) => stop(p, 'SIGKILL')));
    await killAll();
    await drop?.();
    tmp.cleanup();
  });

  (DIALECTS.includes('postgres') ? it : it.skip)('both serve the same witnessed checkpoints; cosignatures are stored once, none lost', async () => {
    requireBuild();
    const keyFile = join(tmp.path, 'log.key');
    const logVkey = createSigningKeyFile(keyFile, 'ledger2.test').vkey;
    const ws: { url: string; vkey: string }[] = [];
    for (const n of [1, 2]) {
      const key = join(tmp.path, `m${n}.key`);
      const r = aer1(['witness', 'create-key', '--name', `multi${n}.test`, '--out', key]);
      expect(r.code).toBe(0);
      const p = await startWitnessProcess({ key, logs: [logVkey], state: join(tmp.path, `m${n}-state`) });
      procs.push(p);
      ws.push({ url: p.url, vkey: r.out.trim() });
    }
    const db = await createPgDatabase();
    drop = db.drop;
    const env = { DATABASE_URL: db.url, LEDGER_SIGNING_KEY_FILE: keyFile, PUBLIC_BASE_URL: 'https://ledger2.test', LEDGER_ADMIN_KEY: ADMIN, CHECKPOINT_INTERVAL_MS: '100', VERIFY_RATE_LIMIT: '1000000', LOG_LEVEL: 'warn', WITNESSES: JSON.stringify(ws), WITNESS_QUORUM: '2' };
    servers.push(await ServerProcess.start(env));
    servers.push(await ServerProcess.start(env));
    const k = await call(servers[0].url, 'POST', '/api/keys', { key: ADMIN, body: JSON.stringify({ name: 'producer', role: 'producer' }) });
    for (let i = 0; i < 8; i++) {
      const res = await call(servers[i % 2].url, 'POST', '/api/receipts', { key: k.body.key as string, body: freshReceipt().text });
      expect(res.status).toBe(201);
      await new Promise((r) => setTimeout(r, 150));
    }
    const verifiers = ws.map((w) => parseVerifierKey(w.vkey));
    await waitUntil('both serve a witnessed checkpoint of size 8', 60_000, async () => (await checkpointSize(servers[0].url)) === 8 && (await checkpointSize(servers[1].url)) === 8);
    const a = (await call(servers[0].url, 'GET', '/checkpoint')).text;
    const b = (await call(servers[1].url, 'GET', '/checkpoint')).text;
    expect(a).toBe(b);
    expect(verifyCosignatures(a, verifiers).cosignatures).toHaveLength(2);
    expect(verifyCheckpoint(a, [parseVerifierKey(logVkey)], 'ledger2.test').checkpoint.size).toBe(8);
    for (const s of servers) {
      const log = s.stdout.text + s.stderr.text;
      expect(log).not.toMatch(/"context":"(WitnessCoordinator|Witnessing)".*"level":50|"level":50.*"context":"(WitnessCoordinator|Witnessing)"/);
      const h = await call(s.url, 'GET', '/health');
      expect(h.body.details.log.witnessing.witnesses.map((w: WitnessRow) => [w.cosigned_size, w.lag_sizes])).toEqual([
        [8, 0],
        [8, 0],
      ]);
    }
  });
});
