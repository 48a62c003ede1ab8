/**
 * Erasure under witnesses (issue 29), all real processes, on SQLite and
 * PostgreSQL: the API server (`node dist/src/main.js`) with two
 * `aer1 witness serve` at WITNESS_QUORUM=2. A receipt is recorded, witnessed
 * and monitored, then erased by a privacy key; afterwards the log goes on:
 * both witnesses cosign the checkpoints that cover the erasure (so
 * `/checkpoint` grows), `aer1 log monitor` with both witnesses required finds
 * the log consistent with the checkpoint it saved before, and the erased
 * receipt's proof file (same leaf, same leaf hash as before: a format 3 leaf
 * holds no content) verifies against the witnessed checkpoint.
 * Run `npm run build` first.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseVerifierKey, verifyCosignatures } from '../../src/core/tlog';
import { createSigningKeyFile } from '../../src/log/log-key';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { call, freePort, freshReceipt, killAll, ServerProcess, waitUntil } from '../reliability/helpers';
import { cli } from '../cli/helpers';
import { aer1, requireBuild, startWitnessProcess, stop, tempDir, WitnessProcess } from '../witness/helpers';

jest.setTimeout(240_000);

const ADMIN = 'erasure-witnessed-admin-key-0123456789';

describe.each(DIALECTS)('erasure with two witnesses at quorum (%s)', (dialect) => {
  const tmp = tempDir('aer1-erasure-witnessed-');
  const witnesses: { vkey: string; proc: WitnessProcess }[] = [];
  let drop: (() => Promise<void>) | undefined;
  let ledger: ServerProcess | undefined;
  let logVkey = '';

  const size = async (): Promise<number> => {
    const r = await call(ledger!.url, 'GET', '/checkpoint');
    return r.status === 200 ? Number(r.text.split('\n')[1]) : 0;
  };
  const witnessArgs = (): string[] => [...witnesses.flatMap((w) => ['--witness', w.vkey]), '--quorum', '2'];

  beforeAll(async () => {
    requireBuild();
    const keyFile = join(tmp.path, 'log-signing.key');
    logVkey = createSigningKeyFile(keyFile, 'ledger.test').vkey;
    for (const n of [1, 2]) {
      const key = join(tmp.path, `w${n}.key`);
      const r = aer1(['witness', 'create-key', '--name', `witness${n}.test`, '--out', key]);
      expect([r.code, r.err]).toEqual([0, '']);
      const listen = `127.0.0.1:${await freePort()}`;
      witnesses.push({ vkey: r.out.trim(), proc: await startWitnessProcess({ key, logs: [logVkey], state: join(tmp.path, `w${n}-state`), listen }) });
    }
    let url = `sqlite:${join(tmp.path, 'ledger.sqlite')}`;
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      drop = db.drop;
    }
    ledger = await ServerProcess.start({
      DATABASE_URL: url,
      LEDGER_SIGNING_KEY_FILE: keyFile,
      PUBLIC_BASE_URL: 'https://ledger.test',
      LEDGER_ADMIN_KEY: ADMIN,
      CHECKPOINT_INTERVAL_MS: '200',
      VERIFY_RATE_LIMIT: '1000000',
      LOG_LEVEL: 'warn',
      WITNESSES: JSON.stringify(witnesses.map((w) => ({ url: w.proc.url, vkey: w.vkey }))),
      WITNESS_QUORUM: '2',
    });
  });

  afterAll(async () => {
    await ledger?.stop();
    await Promise.all(witnesses.map((w) => stop(w.proc, 'SIGKILL')));
    await killAll();
    if (drop) await drop();
    tmp.cleanup();
  });

  it('a witnessed, monitored receipt is erased; the witnesses cosign on, the monitor finds the log consistent, the proof still verifies', async () => {
    const base = ledger!.url;
    const keyOf = async (role: string): Promise<string> => {
      const k = await call(base, 'POST', '/api/keys', { key: ADMIN, body: JSON.stringify({ name: `erasure-${role}`, role }) });
      expect(k.status).toBe(201);
      return k.body.key as string;
    };
    const producer = await keyOf('producer');
    const privacy = await keyOf('privacy');
    const receipts = [freshReceipt(), freshReceipt(), freshReceipt()];
    for (const r of receipts) expect((await call(base, 'POST', '/api/receipts', { key: producer, body: r.text })).status).toBe(201);
    await waitUntil('a checkpoint of size 3 cosigned by both witnesses', 60_000, async () => (await size()) >= 3);

    const state = join(tmp.path, `monitor-${dialect}`);
    // In process (async): a child run with spawnSync would hold the event loop while fetch's idle keep-alive sockets are closed by the server.
    const monitor = () => cli(['log', 'monitor', '--url', base, '--vkey', logVkey, '--state', state, ...witnessArgs(), '--json']);
    const first = await monitor();
    expect([first.code, JSON.parse(first.out).result]).toEqual([0, 'first_use']);
    const target = receipts[0];
    const before = await call(base, 'GET', `/api/receipts/${target.id}/proof`);
    expect(before.status).toBe(200);

    const e = await call(base, 'POST', '/api/erasures', { key: privacy, body: JSON.stringify({ receipt_ids: [target.id], reason: 'erasure request 2026-118', legal_basis: 'GDPR Art. 17(1)(a)' }) });
    expect([e.status, e.body.positions]).toEqual([201, [1]]);
    expect(e.body.erasure_position).toBe(4);
    expect((await call(base, 'POST', '/api/receipts', { key: producer, body: freshReceipt().text })).status).toBe(201);

    // The witnesses cosign the checkpoints that cover the erasure and what came after it.
    await waitUntil('a checkpoint of size 5 cosigned by both witnesses', 60_000, async () => (await size()) >= 5);
    const note = (await call(base, 'GET', '/checkpoint')).text;
    expect(verifyCosignatures(note, witnesses.map((w) => parseVerifierKey(w.vkey))).cosignatures.map((c) => c.name).sort()).toEqual(['witness1.test', 'witness2.test']);
    const health = await call(base, 'GET', '/health');
    expect(health.body.status).toBe('ok');
    expect((health.body.details.log.witnessing.witnesses as { current: boolean }[]).map((w) => w.current)).toEqual([true, true]);

    // The monitor, both witnesses required: the log only grew from the checkpoint saved before the erasure.
    const after = await monitor();
    expect(after.code).toBe(0);
    expect(JSON.parse(after.out)).toMatchObject({ result: 'consistent', fetched: { size: 5 } });

    // The erased receipt's leaf is the same; its proof against the witnessed checkpoint verifies with quorum 2.
    const proof = await call(base, 'GET', `/api/receipts/${target.id}/proof`);
    expect(proof.status).toBe(200);
    expect([proof.body.leaf, proof.body.leaf_hash]).toEqual([before.body.leaf, before.body.leaf_hash]);
    expect(proof.body.tree_size).toBeGreaterThanOrEqual(5);
    expect(Buffer.from(proof.body.leaf as string, 'base64').toString('utf8')).not.toContain(target.text.slice(1, 40));
    const file = join(tmp.path, `proof-${dialect}.json`);
    writeFileSync(file, proof.text);
    const v = await cli(['log', 'verify-proof', file, '--vkey', logVkey, ...witnessArgs(), '--receipt', target.id]);
    expect([v.code, v.err]).toEqual([0, '']);

    // The ledger's own checks: valid, the erased position named.
    const chain = await call(base, 'GET', '/api/ledger/verify');
    expect([chain.status, chain.body.verdict, chain.body.erased.payload_erased]).toEqual([200, 'valid', { count: 1, positions: [1] }]);
  });
});
