/** Retention periods (src/erasure/retention-period.ts): strict ISO 8601 durations, cutoffs, the six-month warning. */
import { parseRetentionPeriod, retentionCutoff, shorterThanSixMonths } from '../../src/erasure/retention-period';

describe('retention periods', () => {
  it('parses ISO 8601 durations into their components', () => {
    expect(parseRetentionPeriod('P180D')).toEqual({ text: 'P180D', years: 0, months: 0, weeks: 0, days: 180, hours: 0, minutes: 0, seconds: 0 });
    expect(parseRetentionPeriod('PT30S')).toMatchObject({ seconds: 30, days: 0 });
    expect(parseRetentionPeriod('P1Y2M3DT4H5M6S')).toMatchObject({ years: 1, months: 2, weeks: 0, days: 3, hours: 4, minutes: 5, seconds: 6 });
    expect(parseRetentionPeriod('P2W')).toMatchObject({ weeks: 2 });
    expect(parseRetentionPeriod('P6M')).toMatchObject({ months: 6, minutes: 0 });
    expect(parseRetentionPeriod('PT5M')).toMatchObject({ months: 0, minutes: 5 });
  });

  it.each(['', 'P', 'PT', 'P1DT', '180D', 'p180d', 'P-1D', 'P1.5D', 'PT0.5S', 'P1D2Y', 'P0D', 'PT0S', 'P1M1Y', ' P1D', 'P1D ', 'P1H', 'PT1D', 'P1Y1Y', 'P9999999Y'])('refuses %j', (text) => {
    expect(() => parseRetentionPeriod(text)).toThrow(/retention period/);
  });

  it('computes cutoffs: calendar years and months, fixed days and times', () => {
    const now = new Date('2026-03-31T12:00:00.000Z');
    expect(retentionCutoff(parseRetentionPeriod('PT30S'), now).toISOString()).toBe('2026-03-31T11:59:30.000Z');
    expect(retentionCutoff(parseRetentionPeriod('P1D'), now).toISOString()).toBe('2026-03-30T12:00:00.000Z');
    expect(retentionCutoff(parseRetentionPeriod('P2W'), now).toISOString()).toBe('2026-03-17T12:00:00.000Z');
    expect(retentionCutoff(parseRetentionPeriod('P1M'), now).toISOString()).toBe('2026-02-28T12:00:00.000Z'); // clamped to the month's end
    expect(retentionCutoff(parseRetentionPeriod('P6M'), now).toISOString()).toBe('2025-09-30T12:00:00.000Z');
    expect(retentionCutoff(parseRetentionPeriod('P1Y'), new Date('2028-02-29T00:00:00.000Z')).toISOString()).toBe('2027-02-28T00:00:00.000Z');
    expect(retentionCutoff(parseRetentionPeriod('P1Y1DT1H'), now).toISOString()).toBe('2025-03-30T11:00:00.000Z');
  });

  it('warns below six months (EU AI Act Art. 12/19): P6M and 183 days are enough', () => {
    const short = ['PT30S', 'P30D', 'P182D', 'P5M', 'P5M30D', 'P26W'];
    const enough = ['P6M', 'P183D', 'P1Y', 'P5M31D', 'P27W', 'P180DT72H'];
    expect(short.filter((p) => !shorterThanSixMonths(parseRetentionPeriod(p)))).toEqual([]);
    expect(enough.filter((p) => shorterThanSixMonths(parseRetentionPeriod(p)))).toEqual([]);
  });
});
