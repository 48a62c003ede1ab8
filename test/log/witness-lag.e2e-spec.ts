/**
 * A witness that falls behind (issue 15): with WITNESSES naming a witness
 * that never answers, the ledger keeps signing, serves no witnessed
 * checkpoint, reports the lag in /health, turns `degraded` once the newest
 * checkpoint has waited more than WITNESS_LAG_SECONDS (60) for it, and emits
 * `ledger.checkpoint.witness_lag` once per witness and cosigned size. The
 * clock is moved forward (Date.now) instead of waiting a minute.
 */
import { generateSignerKey, SIG_COSIGNATURE_V1 } from '../../src/core/tlog';
import { WitnessCoordinator, WITNESS_LAG_SECONDS } from '../../src/log/witnesses';
import { WebhookDispatcher } from '../../src/webhooks/webhook.dispatcher';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { freePort, freshReceipt, waitUntil } from '../reliability/helpers';

jest.setTimeout(60_000);

describe.each(DIALECTS)('a lagging witness (%s)', (dialect) => {
  let t: TestApp;
  const witness = generateSignerKey('lagging.witness.test', SIG_COSIGNATURE_V1).verifierKey;

  beforeAll(async () => {
    const port = await freePort(); // nothing listens there
    t = await startApp(dialect, { WITNESSES: JSON.stringify([{ url: `http://127.0.0.1:${port}`, vkey: witness }]), CHECKPOINT_INTERVAL_MS: '50' });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
  });

  it('keeps signing, serves no witnessed checkpoint, reports the lag, then degrades and emits witness_lag once', async () => {
    const r = freshReceipt();
    expect((await t.http.post('/api/receipts').set('authorization', `Bearer ${t.keys.producer}`).set('content-type', 'application/json').send(r.text)).status).toBe(201);
    await waitUntil('a signed checkpoint of size 1', 20_000, async () => (await t.http.get('/checkpoint/latest')).status === 200 && (await t.http.get('/checkpoint/latest')).text.split('\n')[1] === '1');
    const none = await t.http.get('/checkpoint');
    expect([none.status, none.body.error]).toEqual([404, 'no_checkpoint']);
    expect(none.body.message).toMatch(/cosigned by 1 of the 1 configured witnesses/);
    const proof = await t.http.get(`/api/receipts/${r.id}/proof`);
    expect([proof.status, proof.body.error]).toEqual([404, 'no_checkpoint']);

    const coordinator = t.app.get(WitnessCoordinator);
    // A failed submission of the checkpoint of size 1 (the coordinator may still be on size 0's first round).
    await waitUntil('a failed submission of size 1', 20_000, () => {
      const w = coordinator.health();
      return w?.newest_signed_size === 1 && /unreachable/.test(w.witnesses[0].last_error ?? '');
    });
    let h = await t.http.get('/health');
    expect(h.body.status).toBe('ok');
    expect(h.body.details.log.witnessing).toMatchObject({ quorum: 1, current: 1, newest_signed_size: 1, witnesses: [{ name: 'lagging.witness.test', cosigned_size: null, lag_sizes: 1, current: true }] });

    const emit = jest.spyOn(t.app.get(WebhookDispatcher), 'emit').mockResolvedValue(null);
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + (WITNESS_LAG_SECONDS + 5) * 1000);
    await coordinator.tick();
    await coordinator.tick();
    expect(emit).toHaveBeenCalledTimes(1);
    expect(emit).toHaveBeenCalledWith(
      'ledger.checkpoint.witness_lag',
      { origin: 'ledger.test', witness: 'lagging.witness.test', checkpoint_size: 1, cosigned_size: null, lag_seconds: expect.any(Number), threshold_seconds: WITNESS_LAG_SECONDS },
      'lagging.witness.test@0',
    );
    expect((emit.mock.calls[0][1] as { lag_seconds: number }).lag_seconds).toBeGreaterThan(WITNESS_LAG_SECONDS);
    h = await t.http.get('/health');
    expect(h.body.status).toBe('degraded');
    expect(h.body.details.log.status).toBe('down');
    expect(h.body.details.log.witnessing.current).toBe(0);
    expect(h.body.details.log.witnessing.witnesses[0].lag_seconds).toBeGreaterThan(WITNESS_LAG_SECONDS);
  });
});
