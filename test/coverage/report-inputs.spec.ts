/** The report inputs the server and `aer1 verify-pack` build alike (src/core/coverage/report-inputs.ts). */
import { outcomeInputs, OutcomeSource, planInForce, planMeta, PlanVersionInput } from '../../src/core/coverage/report-inputs';

const R1 = '8850d953-adc3-5fa5-be6b-3b4e54a01d07';
const R2 = 'a628cd8d-0791-560d-9050-ff247a834928';

function outcome(position: number, id: string, receipt: string, result = 'confirmed'): OutcomeSource {
  return { position, outcome_id: id, job_id: 'job', receipt_id: receipt, effect: 'payment.settled', result, observed_at: '2026-10-01T12:01:00Z', system: 'PAYMENTS', output_hash: 'sha256:' + '0'.repeat(64) };
}

describe('outcomeInputs', () => {
  it('keeps the outcomes of the named receipts at or below the position, in ledger order, ids lowercased', () => {
    const found = [outcome(12, 'CE0EFB29-1348-5BF2-ABF8-26EB4BF7BC8B', R1, 'reversed'), outcome(9, '046eb747-98eb-5bbd-bd14-4828f8265fb0', R1), outcome(10, '11111111-1111-4111-8111-111111111111', R2), outcome(11, '22222222-2222-4222-8222-222222222222', R1.toUpperCase())];
    expect(outcomeInputs(found, [R1.toUpperCase()], 11).map((o) => [o.outcome_id, o.receipt_id, o.result])).toEqual([
      ['046eb747-98eb-5bbd-bd14-4828f8265fb0', R1, 'confirmed'],
      ['22222222-2222-4222-8222-222222222222', R1, 'confirmed'],
    ]);
    expect(outcomeInputs(found, [R1], 12).map((o) => o.outcome_id)).toEqual(['046eb747-98eb-5bbd-bd14-4828f8265fb0', '22222222-2222-4222-8222-222222222222', 'ce0efb29-1348-5bf2-abf8-26eb4bf7bc8b']);
    expect(outcomeInputs(found, [], 12)).toEqual([]);
    expect(Object.keys(outcomeInputs(found, [R2], 12)[0]).sort()).toEqual(['effect', 'job_id', 'observed_at', 'outcome_id', 'output_hash', 'receipt_id', 'result', 'system']);
  });
});

describe('planInForce and planMeta', () => {
  const v = (version: number, position: number): PlanVersionInput => ({ plan_id: 'p', version, plan: JSON.stringify({ v: version }), digest: `d${version}`, registered_at: `t${version}`, position });
  it('takes the last version at or below the position (by position), the earlier ones superseded', () => {
    const versions = [v(3, 30), v(1, 5), v(2, 20)];
    const f = planInForce(versions, 25)!;
    expect([f.used.version, f.usable.map((x) => x.version), f.plan]).toEqual([2, [1, 2], { v: 2 }]);
    expect(planMeta(f.usable, 7)).toEqual({ plan_id: 'p', version: 2, digest: 'd2', registered_at: 't2', registered_position: 20, execution_first_position: 7, superseded_versions: [1] });
    expect(planInForce(versions, 4)).toBeNull();
    expect(versions.map((x) => x.version)).toEqual([3, 1, 2]);
  });
});
