/**
 * RFC 3339 section 5.6 `date-time` with real calendar checks (S3; spec
 * README reading 3): `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`, `T` and
 * `Z` in either case, no space separator; month 01-12, day within the month
 * (Gregorian leap years), hour 00-23, minute 00-59, second 00-59, offset hour
 * 00-23 and minute 00-59. February 30 and hour 24 are rejected, never rolled over.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** True when `year` is a Gregorian leap year. */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Days in `month` (1-12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** True when `s` is an RFC 3339 date-time denoting a real calendar date and time. */
export function isRfc3339(s: unknown): boolean {
  if (typeof s !== 'string') return false;
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const year = +m[1];
  const month = +m[2];
  const day = +m[3];
  if (month < 1 || month > 12) return false;
  if (day < 1 || day > daysInMonth(year, month)) return false;
  if (+m[4] > 23 || +m[5] > 59 || +m[6] > 59) return false;
  if (m[7] !== undefined && (+m[7] > 23 || +m[8] > 59)) return false;
  return true;
}
