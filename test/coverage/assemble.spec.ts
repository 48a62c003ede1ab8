/**
 * The one assembler of a report's input (src/core/coverage/assemble.ts): on
 * a job's events recorded from a real server run
 * (test/vectors/coverage/report-job.json: what the server's reader fetched
 * and passed to it, with the recorders and other jobs the server read), the
 * report has exactly the digest the server answered.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assembleReportInput, correctionChains, LedgerEvent, ReportRecorders } from '../../src/core/coverage/assemble';
import { reconcile, Recorders, reportDigest } from '../../src/core/coverage/reconcile';
import type { PlanSubject } from '../../src/core/coverage/plan';

interface Recorded {
  digest: string;
  result: string;
  subject: PlanSubject;
  as_of_position: number;
  trust: { log_vkey: string | null; trusted: string[] };
  recorders: { record: Recorders | null; receipts: Record<string, Recorders> };
  other_jobs: Record<string, string[]> | null;
  events: LedgerEvent[];
}

const recorded = JSON.parse(readFileSync(path.join(__dirname, '../vectors/coverage/report-job.json'), 'utf8')) as Recorded;
const recorders: ReportRecorders = { record: recorded.recorders.record, receipts: new Map(Object.entries(recorded.recorders.receipts)) };
const ctx = {
  subject: recorded.subject,
  asOf: recorded.as_of_position,
  trust: { log_vkey: recorded.trust.log_vkey, trusted: [] },
  recorders,
  ...(recorded.other_jobs ? { otherJobs: new Map(Object.entries(recorded.other_jobs)) } : {}),
};

describe('assembleReportInput on a recorded job', () => {
  it('gives the report the server issued: the same digest', () => {
    expect(recorded.trust.trusted).toEqual([]);
    const a = assembleReportInput(recorded.events, ctx);
    if (!a.ok) throw new Error(`not assembled: ${a.code}`);
    const report = reconcile(a.input);
    expect(reportDigest(report)).toBe('6b816b294ff6884b03fff647052730b59a86f91548c5b41a21cf4bd479870857');
    expect(reportDigest(report)).toBe(recorded.digest);
    expect(report.result).toBe('full_coverage');
  });

  it('reads the plan, the first event, the receipts, the commitments and the outcome from the events', () => {
    const a = assembleReportInput(recorded.events, ctx);
    if (!a.ok) throw new Error(a.code);
    const { input } = a;
    expect(input.plan_meta).toMatchObject({ version: 1, registered_position: 1, execution_first_position: 2, superseded_versions: [] });
    expect(a.receipt_ids).toEqual(['a0039dd3-bba1-54a1-89ba-8926732026b9', '9b12cfb7-139a-5081-84ca-dd887042be61']);
    expect([...input.receipts.keys()]).toEqual(a.receipt_ids);
    expect(input.record.kind === 'timeline' && [input.record.entries?.length, input.record.commitments.map((c) => c.recorded_position)]).toEqual([2, [6, 7]]);
    expect(input.outcomes?.map((o) => [o.outcome_id, o.result])).toEqual([['676af3f5-a3dc-51fa-a2fa-c4ba12b96149', 'confirmed']]);
    expect(input.as_of_position).toBe(8);
  });

  it('ignores events above the position, and answers no_plan below the plan', () => {
    const a = assembleReportInput(recorded.events, { ...ctx, asOf: 7 });
    expect(a.ok && [a.input.outcomes, a.input.as_of_position]).toEqual([[], 7]);
    expect(assembleReportInput(recorded.events.slice(1), ctx)).toEqual({ ok: false, code: 'no_plan' });
  });
});

describe('correctionChains', () => {
  const corrected = (position: number, from: string, to: string): LedgerEvent => ({ position, stream_id: `receipt:${from}`, type: 'ReceiptCorrected', key_name: null, data: JSON.stringify({ superseded_by: to }) });
  it('follows corrections of corrections, the later correction of a receipt counts, and a cycle stops', () => {
    const events = [corrected(1, 'a', 'B'), corrected(2, 'b', 'c'), corrected(3, 'd', 'e'), corrected(4, 'd', 'f'), corrected(5, 'f', 'd')];
    expect([...correctionChains(events, ['A', 'd', 'x'])]).toEqual([
      ['a', ['b', 'c']],
      ['d', ['f']],
    ]);
  });
});
