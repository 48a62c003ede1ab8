/** The outcome stream's rule, given / when / then (issue 18): recorded once, never edited. */
import { LedgerError } from '../../src/core/errors';
import { decideReport } from '../../src/outcomes/outcomes.decider';
import type { OutcomeReportedData } from '../../src/outcomes/outcomes.events';
import type { OutcomeRow } from '../../src/outcomes/outcomes.repository';

const data: OutcomeReportedData = {
  outcome_id: 'AAAAAAAA-0000-4000-8000-000000000001',
  raw: '{"a":1}',
  job_id: 'job-1',
  receipt_id: 'bbbbbbbb-0000-4000-8000-000000000002',
  effect: 'payment.settled',
  result: 'confirmed',
  observed_at: '2026-10-01T12:00:00Z',
  system: 'PAYMENTS',
  output_hash: 'sha256:' + '1'.repeat(64),
  publication: 'full',
};
const row = (raw: string): OutcomeRow => ({ ...data, outcome_id: data.outcome_id.toLowerCase(), id_as_given: data.outcome_id, raw, position: 7, recorded_at: 'x' });

describe('decideReport', () => {
  it('given nothing recorded under the id, when reported, then one OutcomeReported with the data as given', () => {
    expect(decideReport(null, data)).toEqual({ events: [{ type: 'OutcomeReported', data }] });
  });
  it('given the same bytes recorded, when reported again, then the record answers (nothing appended)', () => {
    const existing = row('{"a":1}');
    expect(decideReport(existing, data)).toEqual({ existing });
  });
  it('given other bytes recorded under the id, when reported, then 409 outcome_id_conflict naming the id (lowercase)', () => {
    let error: unknown;
    try {
      decideReport(row('{"a":2}'), data);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LedgerError);
    expect(error).toMatchObject({ status: 409, code: 'outcome_id_conflict', details: { outcome_id: data.outcome_id.toLowerCase() } });
  });
});
