/**
 * OutcomesService on its real repositories (issue 18), SQLite and
 * PostgreSQL, without HTTP: recorded exactly as sent, verified and the
 * speaker checked before the write transaction, supersession by ledger order.
 */
import { ReceiptsService } from '../../src/receipts/receipts.service';
import { OutcomesService } from '../../src/outcomes/outcomes.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { TimelinesService } from '../../src/timelines/timelines.service';
import { Medium, startMedium, DIALECTS, body } from './harness';
import { buildTimeline, receiptFor } from '../coverage/fixtures';
import { outcomeFor, PAYMENT_STEPS } from '../outcomes/fixtures';

describe.each(DIALECTS)('OutcomesService on %s', (dialect) => {
  jest.setTimeout(60_000);
  let m: Medium;
  beforeAll(async () => {
    m = await startMedium(dialect);
  });
  afterAll(async () => {
    await m.close();
  });

  it('records a report byte for byte; a later report of the same system and effect supersedes it; refusals write nothing', async () => {
    const producer = await m.principal('producer');
    const payments = await m.principal('outcome', { systems: ['PAYMENTS'] });
    const tl = buildTimeline('job-medium-out', PAYMENT_STEPS);
    await m.get(ReceiptsService).ingest(body(receiptFor(tl[1])), producer);
    // An outcome counts only for a job whose entries name its receipt (issue 26): the job's timeline first.
    await m.get(TimelinesService).import('job-medium-out', body(tl), producer);
    const svc = m.get(OutcomesService);
    await expect(svc.report(body(outcomeFor({ name: 'm-other-job', job_id: 'job-medium-other', receipt_id: tl[1].id })), payments)).rejects.toMatchObject({ status: 422, code: 'receipt_not_in_job' });
    const settled = outcomeFor({ name: 'm-settled', job_id: 'job-medium-out', receipt_id: tl[1].id });
    const text = JSON.stringify(settled, null, 1);
    const a = await svc.report(body(text), payments);
    expect(a).toMatchObject({ outcome: 'created', system: 'PAYMENTS', result: 'confirmed' });
    expect((await svc.get(settled.outcome_id)).raw).toBe(text);
    const head = async () => (await m.db.write((tx) => m.get(LedgerService).head(tx)))?.position;
    const before = await head();
    await expect(svc.report(body({ ...settled, system: 'CRM' }), payments)).rejects.toMatchObject({ status: 403, code: 'system_not_permitted' });
    await expect(svc.report(body({ ...settled, output_hash: 'sha256:' + 'a'.repeat(64) }), payments)).rejects.toMatchObject({ status: 422, code: 'verification_failed', details: { reasons: ['output_hash_mismatch'] } });
    expect(await head()).toBe(before);
    const reversed = outcomeFor({ name: 'm-reversed', job_id: 'job-medium-out', receipt_id: tl[1].id, result: 'reversed', observed_at: '2026-10-02T00:00:00Z' });
    await svc.report(body(reversed), payments);
    const list = await svc.ofReceipt(tl[1].id.toLowerCase());
    expect(list.map((o) => [o.row.result, o.superseded_by, o.reported_by?.name])).toEqual([
      ['confirmed', reversed.outcome_id.toLowerCase(), payments.name],
      ['reversed', null, payments.name],
    ]);
  });
});
