/**
 * Retention periods (issue 29): ISO 8601 durations such as `P180D`, `P6M`,
 * `P1Y2M`, `P2W`, `PT30S`. Strict: `P`, then integer components in the
 * order Y M W D, then optionally `T` and H M S; at least one component, no
 * fractions, no sign, not all zero. Years and months are calendar units
 * (applied to a date in UTC), the rest fixed lengths.
 */
export interface RetentionPeriod {
  /** The text as given (`P180D`). */
  text: string;
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

const DURATION = /^P(?:(\d{1,6})Y)?(?:(\d{1,6})M)?(?:(\d{1,6})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,12})S)?)?$/;

/** Parse `text` as a retention period; throws an Error saying what is expected. */
export function parseRetentionPeriod(text: string): RetentionPeriod {
  const m = DURATION.exec(text);
  const expected = `a retention period is an ISO 8601 duration such as P180D, P6M, P1Y or PT30S (got ${JSON.stringify(text.slice(0, 40))})`;
  if (!m || text.endsWith('T')) throw new Error(expected);
  const [years, months, weeks, days, hours, minutes, seconds] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
  if (m.slice(1).every((v) => v === undefined)) throw new Error(expected);
  if (years + months + weeks + days + hours + minutes + seconds === 0) throw new Error(`a retention period is longer than zero (got ${text})`);
  return { text, years, months, weeks, days, hours, minutes, seconds };
}

/** The instant `period` before `now`: events recorded before it are past their retention. */
export function retentionCutoff(period: RetentionPeriod, now: Date): Date {
  const d = new Date(now.getTime());
  if (period.years !== 0 || period.months !== 0) {
    // Calendar months in UTC; a day past the target month's end is clamped to it (31 March - P1M = 28/29 February).
    const day = d.getUTCDate();
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() - (period.years * 12 + period.months));
    const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
    d.setUTCDate(Math.min(day, last));
  }
  const ms = (((period.weeks * 7 + period.days) * 24 + period.hours) * 60 + period.minutes) * 60_000 + period.seconds * 1000;
  return new Date(d.getTime() - ms);
}

/** Six months: the least the EU AI Act (Art. 12 and 19) asks logs to be kept. */
export const SIX_MONTHS_DAYS = 183;

/**
 * True when `period` is shorter than six months: fewer than 6 calendar
 * months and, counting a month as 30.5 days, fewer than {@link SIX_MONTHS_DAYS} days.
 */
export function shorterThanSixMonths(period: RetentionPeriod): boolean {
  const months = period.years * 12 + period.months;
  if (months >= 6) return false;
  const days = months * 30.5 + period.weeks * 7 + period.days + (period.hours * 3600 + period.minutes * 60 + period.seconds) / 86_400;
  return days < SIX_MONTHS_DAYS;
}
