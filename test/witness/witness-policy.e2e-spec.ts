/**
 * WITNESS_POLICY_FILE end to end (issue 32), on SQLite and PostgreSQL: the
 * app with a Sigsum-format policy of one required group (`group auditors all
 * A1 A2`) and one optional witness that is down, against two witnesses run in
 * process (src/witness/server.ts). The quorum is reached with the optional
 * one down: /checkpoint carries the two required cosignatures, /health says
 * each witness's part and the policy's state. With A2 stopped, newer
 * checkpoints do not reach the quorum and /checkpoint stays where it was;
 * so it does when one group of a group of groups is down for many
 * checkpoints that the other group's witnesses all cosigned.
 * A policy naming another log, or a malformed one, stops the start (an
 * in-memory database there: the start fails before it is used).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSignerKey, parseVerifierKey, SIG_COSIGNATURE_V1, verifyCheckpoint, verifyCosignatures } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { createSigningKeyFile } from '../../src/log/log-key';
import { WitnessCoordinator, WITNESS_LAG_SECONDS } from '../../src/log/witnesses';
import { RunningWitness, startWitness } from '../../src/witness/server';
import { WitnessStateStore } from '../../src/witness/state';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { freePort, freshReceipt, waitUntil } from '../reliability/helpers';
import { tempDir } from './helpers';

jest.setTimeout(120_000);

describe.each(DIALECTS)('a witness policy file (%s)', (dialect) => {
  const tmp = tempDir('aer1-witness-policy-');
  let t: TestApp | undefined;
  const running: RunningWitness[] = [];
  let logVkey = '';
  let keyFile = '';
  const a1 = generateSignerKey('a1.auditor.test', SIG_COSIGNATURE_V1);
  const a2 = generateSignerKey('a2.auditor.test', SIG_COSIGNATURE_V1);
  const optional = generateSignerKey('optional.witness.test', SIG_COSIGNATURE_V1);

  async function witness(signer: typeof a1, name: string): Promise<RunningWitness> {
    const w = await startWitness({ signer: signer.signer, logs: [parseVerifierKey(logVkey)], store: await WitnessStateStore.open(join(tmp.path, `${name}-state`)) }, '127.0.0.1', 0);
    running.push(w);
    return w;
  }

  function policyFile(name: string, text: string): string {
    const f = join(tmp.path, name);
    writeFileSync(f, text);
    return f;
  }

  async function append(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const r = freshReceipt();
      expect((await t!.http.post('/api/receipts').set('authorization', `Bearer ${t!.keys.producer}`).set('content-type', 'application/json').send(r.text)).status).toBe(201);
    }
  }

  const size = (note: string) => Number(note.split('\n')[1]);

  beforeAll(() => {
    keyFile = join(tmp.path, 'log-signing.key');
    logVkey = createSigningKeyFile(keyFile, 'ledger.test').vkey;
  });

  afterAll(async () => {
    await t?.close();
    for (const w of running) await w.close();
    tmp.cleanup();
  });

  it('reaches the quorum of the required group with the optional witness down, and /health says so', async () => {
    const w1 = await witness(a1, 'a1');
    const w2 = await witness(a2, 'a2');
    const dead = await freePort(); // nothing listens there
    const file = policyFile(
      'policy',
      `# The auditors must both cosign; the partner's witness is asked but optional.
log ${logVkey}
witness A1 ${a1.verifierKey} ${w1.url}
witness A2 ${a2.verifierKey} ${w2.url}
group auditors all A1 A2
witness partner ${optional.verifierKey} http://127.0.0.1:${dead}
quorum auditors
`,
    );
    t = await startApp(dialect, { LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_CHECKPOINT_STATE_FILE: join(tmp.path, 'log.checkpoint'), WITNESS_POLICY_FILE: file, CHECKPOINT_INTERVAL_MS: '100' });
    const signer = t.app.get(CheckpointSigner);
    const coordinator = t.app.get(WitnessCoordinator);
    await append(3);
    await signer.tick();
    await waitUntil('a witnessed checkpoint of size 3', 30_000, async () => {
      await coordinator.tick();
      const r = await t!.http.get('/checkpoint');
      return r.status === 200 && size(r.text) === 3;
    });
    const note = (await t.http.get('/checkpoint')).text;
    verifyCheckpoint(note, [parseVerifierKey(logVkey)], 'ledger.test');
    const { cosignatures } = verifyCosignatures(note, [a1, a2, optional].map((k) => parseVerifierKey(k.verifierKey)));
    expect(cosignatures.map((c) => c.name).sort()).toEqual(['a1.auditor.test', 'a2.auditor.test']);

    await waitUntil('the optional witness tried and found unreachable', 20_000, () => coordinator.health()?.witnesses[2].reachable === false);
    const h = await t.http.get('/health');
    expect(h.body.status).toBe('ok');
    const w = h.body.details.log.witnessing;
    expect(w.policy).toEqual({ source: 'WITNESS_POLICY_FILE', rule: 'all of (A1, A2)', quorum_reached: true, current_quorum: true });
    expect([w.quorum, w.newest_signed_size]).toEqual([2, 3]);
    expect(w.witnesses.map((x: Record<string, unknown>) => [x.name, x.key_name, x.required, x.reachable, x.cosigned_size])).toEqual([
      ['A1', 'a1.auditor.test', true, true, 3],
      ['A2', 'a2.auditor.test', true, true, 3],
      ['partner', 'optional.witness.test', false, false, null],
    ]);
    expect(w.witnesses[2].last_error).toMatch(/^unreachable: /);
    // A minute on, the optional witness is behind (not current) and /health is still ok: it never counts.
    const now = Date.now();
    const later = jest.spyOn(Date, 'now').mockReturnValue(now + (WITNESS_LAG_SECONDS + 5) * 1000);
    await coordinator.tick();
    const behind = await t.http.get('/health');
    later.mockRestore();
    expect([behind.body.status, behind.body.details.log.witnessing.policy.current_quorum, behind.body.details.log.witnessing.witnesses.map((x: Record<string, unknown>) => x.current)]).toEqual(['ok', true, [true, true, false]]);

    // A required witness down: newer checkpoints do not reach the quorum; /checkpoint stays at 3.
    await w2.close();
    await append(2);
    await signer.tick();
    await waitUntil('A2 found unreachable on the checkpoint of size 5', 20_000, async () => {
      await coordinator.tick();
      const x = coordinator.health();
      return x?.newest_signed_size === 5 && x.witnesses[0].cosigned_size === 5 && x.witnesses[1].reachable === false;
    });
    const after = (await t.http.get('/health')).body.details.log.witnessing;
    expect([after.policy.quorum_reached, after.witnesses.map((x: Record<string, unknown>) => x.cosigned_size)]).toEqual([false, [5, 3, null]]);
    expect(size((await t.http.get('/checkpoint')).text)).toBe(3);
    const latest = await t.http.get('/checkpoint/latest');
    expect(size(latest.text)).toBe(5);
    // A minute on, the required A2 is behind: the rule cannot be met by the current witnesses, /health degrades.
    const then = Date.now();
    const minute = jest.spyOn(Date, 'now').mockReturnValue(then + (WITNESS_LAG_SECONDS + 5) * 1000);
    await coordinator.tick();
    const degraded = await t.http.get('/health');
    minute.mockRestore();
    expect([degraded.body.status, degraded.body.details.log.status, degraded.body.details.log.witnessing.policy]).toEqual([
      'degraded',
      'down',
      { source: 'WITNESS_POLICY_FILE', rule: 'all of (A1, A2)', quorum_reached: false, current_quorum: false },
    ]);
  });

  it('a group down for many checkpoints: /checkpoint stays at the newest one that met the rule', async () => {
    await t?.close();
    t = undefined;
    const a = [await witness(a1, 'g-a1'), await witness(a2, 'g-a2')];
    const b = await witness(optional, 'g-b');
    const file = policyFile(
      'groups',
      `witness A1 ${a1.verifierKey} ${a[0].url}
witness A2 ${a2.verifierKey} ${a[1].url}
group A any A1 A2
witness B ${optional.verifierKey} ${b.url}
group both all A B
quorum both
`,
    );
    t = await startApp(dialect, { LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_CHECKPOINT_STATE_FILE: join(tmp.path, 'groups.checkpoint'), WITNESS_POLICY_FILE: file });
    const signer = t.app.get(CheckpointSigner);
    const coordinator = t.app.get(WitnessCoordinator);
    /** Append one record, sign, and wait until the witnesses `up` (indexes into the health list) cosigned the new size. */
    const step = async (n: number, up: number[]): Promise<void> => {
      await append(1);
      await signer.tick();
      await waitUntil(`size ${n} cosigned by witnesses ${up.join(', ')}`, 20_000, async () => {
        await coordinator.tick();
        const h = coordinator.health();
        return h?.newest_signed_size === n && up.every((i) => h.witnesses[i].cosigned_size === n);
      });
    };
    await step(1, [0, 1, 2]);
    expect(size((await t.http.get('/checkpoint')).text)).toBe(1);
    await b.close();
    // 12 checkpoints cosigned by both A witnesses (2 cosignatures, the rule's minimum) but not by B: more than
    // one query's worth of candidates that do not meet the rule above the one that does.
    for (let n = 2; n <= 13; n++) await step(n, [0, 1]);
    const h = (await t.http.get('/health')).body.details.log.witnessing;
    expect([h.quorum, h.policy.rule, h.policy.quorum_reached]).toEqual([2, 'all of (A: any of (A1, A2), B)', false]);
    expect(h.witnesses.map((x: Record<string, unknown>) => [x.name, x.required, x.cosigned_size])).toEqual([
      ['A1', true, 13],
      ['A2', true, 13],
      ['B', true, 1],
    ]);
    expect(size((await t.http.get('/checkpoint')).text)).toBe(1);
    expect(size((await t.http.get('/checkpoint/latest')).text)).toBe(13);
  });

  it('does not start with a policy naming another log, or a malformed one (the line named)', async () => {
    const other = generateSignerKey('other.test').verifierKey;
    const wrongLog = policyFile('wrong-log', `log ${other}\nwitness A1 ${a1.verifierKey} http://127.0.0.1:1\nquorum A1\n`);
    await expect(startApp(dialect, { DATABASE_URL: 'sqlite::memory:', LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_CHECKPOINT_STATE_FILE: join(tmp.path, 'other.checkpoint'), WITNESS_POLICY_FILE: wrongLog })).rejects.toThrow(
      `its log line names ${other}, but this log's key is ${logVkey}`,
    );
    const bad = policyFile('bad', `witness A1 ${a1.verifierKey} http://127.0.0.1:1\ngroup G 3 A1\nquorum G\n`);
    await expect(startApp(dialect, { DATABASE_URL: 'sqlite::memory:', LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_CHECKPOINT_STATE_FILE: join(tmp.path, 'bad.checkpoint'), WITNESS_POLICY_FILE: bad })).rejects.toThrow(
      `WITNESS_POLICY_FILE ${bad}: line 2: the threshold 3 is outside 1..1`,
    );
  });
});
