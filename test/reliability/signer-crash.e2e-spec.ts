/**
 * The checkpoint signer under SIGKILL (issue 26): the compiled server signs
 * every 10 ms while receipts stream in, and is killed again and again (so
 * kills land just after the state file was written, and between it and the
 * stored checkpoint). Each restart on the same database, key and state file
 * must sign on (never `stopped`), the state file must always hold a
 * checkpoint signed by the key that the database's tree extends (checked
 * with a consistency proof), and the whole tree with every stored
 * checkpoint must verify: no two inconsistent checkpoints.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseVerifierKey, verifyCheckpoint, verifyConsistency } from '../../src/core/tlog';
import { createSigningKeyFile } from '../../src/log/log-key';
import { createPgDatabase, DIALECTS } from '../helpers/app';
import { adminKey, call, freshReceipt, killAll, requireBuild, ServerProcess, waitUntil } from './helpers';

const ROUNDS = 4;

describe.each(DIALECTS)('checkpoint signer under SIGKILL on %s', (dialect) => {
  jest.setTimeout(240_000);
  let dir: string;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'aer1-signer-crash-'));
  });
  afterAll(async () => {
    await killAll();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('restarts cleanly after every kill and never signs an inconsistent checkpoint', async () => {
    const admin = adminKey();
    let env: Record<string, string>;
    let stateFile: string;
    if (dialect === 'sqlite') {
      env = { DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}` };
      stateFile = join(dir, 'ledger.log-signing.checkpoint');
    } else {
      const db = await createPgDatabase();
      drop = db.drop;
      const keyFile = join(dir, 'log-signing.key');
      createSigningKeyFile(keyFile, 'ledger.test');
      env = { DATABASE_URL: db.url, LEDGER_SIGNING_KEY_FILE: keyFile };
      stateFile = join(dir, 'log-signing.checkpoint');
    }
    env = { ...env, LEDGER_ADMIN_KEY: admin, PUBLIC_BASE_URL: 'https://ledger.test', LOG_LEVEL: 'warn', VERIFY_RATE_LIMIT: '1000000', CHECKPOINT_INTERVAL_MS: '10' };
    let server = await ServerProcess.start(env);
    const vkey = (await call(server.url, 'GET', '/.well-known/aer1')).body.log_vkey as string;
    const created = await call(server.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name: 'signer-crash', role: 'producer' }) });
    expect(created.status).toBe(201);
    const producer = created.body.key as string;
    // The first checkpoint (size 0) is signed before the first kill: from then on the state file always exists.
    await waitUntil('the first checkpoint', 30_000, () => existsSync(stateFile));
    const sizes: number[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      const base = server.url;
      let stop = false;
      const writer = async (): Promise<void> => {
        while (!stop) {
          try {
            await call(base, 'POST', '/api/receipts', { key: producer, body: freshReceipt().text, timeoutMs: 5000 });
          } catch {
            return; // killed
          }
        }
      };
      const writers = [writer(), writer(), writer()];
      await new Promise((r) => setTimeout(r, 300 + 150 * round));
      await server.kill();
      stop = true;
      await Promise.all(writers);

      server = await ServerProcess.start(env);
      const h = (await call(server.url, 'GET', '/health')).body.details.log;
      expect([h.signing, h.reason_code, h.reason]).toEqual(['active', undefined, undefined]);
      const head = Number((await call(server.url, 'GET', '/api/ledger/head')).body.position);
      expect(head).toBeGreaterThan(0);
      // The state file: a checkpoint signed by the key, within the database.
      const st = JSON.parse(readFileSync(stateFile, 'utf8')) as { size: number; root_hash: string; note: string };
      expect(verifyCheckpoint(st.note, [parseVerifierKey(vkey)], 'ledger.test').checkpoint.size).toBe(st.size);
      expect(st.size).toBeLessThanOrEqual(head);
      sizes.push(st.size);
      // The restarted signer signs the whole ledger, and that checkpoint extends the state's (proof from the server, checked here).
      await waitUntil('the restarted server signed its head', 30_000, async () => Number((await call(server.url, 'GET', '/checkpoint/latest')).text.split('\n')[1]) === head);
      const latest = verifyCheckpoint((await call(server.url, 'GET', '/checkpoint/latest')).text, [parseVerifierKey(vkey)], 'ledger.test').checkpoint;
      if (st.size > 0 && st.size < head) {
        const p = await call(server.url, 'GET', `/api/ledger/proof/consistency?first=${st.size}&second=${head}`);
        expect(p.status).toBe(200);
        expect(() => verifyConsistency(st.size, head, (p.body.proof as string[]).map((x) => Buffer.from(x, 'base64')), Buffer.from(st.root_hash, 'base64'), latest.rootHash)).not.toThrow();
      } else if (st.size === head) expect(latest.rootHash.toString('base64')).toBe(st.root_hash);
      const after = JSON.parse(readFileSync(stateFile, 'utf8')) as { size: number; root_hash: string };
      expect([after.size, after.root_hash]).toEqual([head, latest.rootHash.toString('base64')]);
    }
    // Every stored checkpoint, whichever process life signed it, is the root of the one tree rebuilt from the events.
    const v = await call(server.url, 'GET', '/api/ledger/verify', { key: admin, timeoutMs: 60_000 });
    expect([v.status, v.body.verdict, v.body.tree.checkpoint_failure]).toEqual([200, 'valid', null]);
    expect(v.body.tree.checkpoints_checked).toBeGreaterThan(ROUNDS);
    expect(sizes.every((s, i) => i === 0 || s >= sizes[i - 1])).toBe(true);
    await server.stop();
  });
});
