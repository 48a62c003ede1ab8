/** The receipt decider, pure: given what is recorded, when a receipt or a correction is recorded, then events or a 409 (S9). */
import { thrown } from '../helpers/errors';
import { assertCorrectionId, decideCorrect, decideRecord } from '../../src/receipts/receipts.decider';
import { ReceiptRecordedData } from '../../src/receipts/receipts.events';

const data = (over: Partial<ReceiptRecordedData> = {}): ReceiptRecordedData => ({
  id: 'AB-1',
  raw: '{"x":1}',
  form: 'core',
  wrapped_in: null,
  verdict: 'valid',
  reasons: [],
  provenance_class: null,
  tool: null,
  status: null,
  output_hash: null,
  created_at: null,
  supersedes: null,
  ...over,
});

describe('decideRecord', () => {
  it('given nothing recorded under the id, then ReceiptRecorded', () => {
    expect(decideRecord(null, data())).toEqual({ events: [{ type: 'ReceiptRecorded', data: data() }] });
  });

  it('given the same bytes recorded in the same role, then existing', () => {
    const existing = { id: 'ab-1', raw: '{"x":1}', verdict: 'valid', provenance_class: null, supersedes: null, position: 4 };
    expect(decideRecord(existing, data())).toEqual({ existing });
  });

  it('given other bytes under the id, then 409 receipt_id_conflict naming the lowercase id', () => {
    const e = thrown(() => decideRecord({ id: 'ab-1', raw: '{}', verdict: 'valid', provenance_class: null, supersedes: null, position: 4 }, data()));
    expect([e.status, e.code, e.details]).toEqual([409, 'receipt_id_conflict', { id: 'ab-1' }]);
    expect(e.message).toContain('with different bytes');
  });

  it('given the same bytes recorded as a correction, when recorded as a receipt of its own, then 409 receipt_id_conflict', () => {
    const e = thrown(() => decideRecord({ id: 'ab-1', raw: '{"x":1}', verdict: 'valid', provenance_class: null, supersedes: 'old', position: 4 }, data()));
    expect(e.message).toBe('receipt ab-1 is already recorded as the correction of old; a correction is a new receipt with an id not recorded before (S9)');
  });
});

describe('decideCorrect', () => {
  it('given an original not superseded, then ReceiptCorrected for its stream', () => {
    expect(decideCorrect({ id: 'old', superseded_by: null, same_correction_raw: null }, 'new', '{}')).toEqual({ events: [{ type: 'ReceiptCorrected', data: { id: 'old', superseded_by: 'new' } }] });
  });

  it('given exactly this correction recorded, then existing; another, then 409 already_superseded', () => {
    expect(decideCorrect({ id: 'old', superseded_by: 'new', same_correction_raw: '{}' }, 'new', '{}')).toEqual({ existing: true });
    const e = thrown(() => decideCorrect({ id: 'old', superseded_by: 'new', same_correction_raw: null }, 'other', '{}'));
    expect([e.code, e.details]).toEqual(['already_superseded', { superseded_by: 'new' }]);
  });

  it('when the correction reuses the original id, then 409 correction_same_id', () => {
    expect(thrown(() => assertCorrectionId('old', 'old')).code).toBe('correction_same_id');
    expect(() => assertCorrectionId('old', 'new')).not.toThrow();
  });
});
