/**
 * "A JSON integer" decided by the JSON text, not the parsed number (spec
 * README reading 9: a commitment's `entry_count`). `JSON.parse` turns `7`,
 * `7.0` and `7e0` into the same number; only the first is written as an
 * integer (RFC 8259 section 6: `-?(0|[1-9][0-9]*)`, no fraction, no exponent).
 *
 * Pure functions over the exact text a caller already parsed as JSON; they
 * never throw on it and answer null when the text does not hold what is
 * asked for (not an object along the path, member absent, not JSON).
 */
import { isJsonSpace } from '../json/text';

/** RFC 8259 `int` with its optional minus: the whole token. */
const INTEGER_TOKEN = /^-?(?:0|[1-9][0-9]*)$/;
/** One JSON number token at a position (sticky). */
const NUMBER_AT = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** True when `token` (the text of one JSON number) is written as an integer. */
export function isIntegerToken(token: string): boolean {
  return INTEGER_TOKEN.test(token);
}


/** A cursor over JSON text; every step returns -1 when the text is not what JSON allows there. */
class Cursor {
  constructor(
    readonly s: string,
    public i = 0,
  ) {}

  ws(): void {
    while (this.i < this.s.length && isJsonSpace(this.s.charCodeAt(this.i))) this.i++;
  }

  /** Skip one string (the cursor on its opening quote); returns its end (after the closing quote) or -1. */
  string(): number {
    if (this.s[this.i] !== '"') return -1;
    for (let j = this.i + 1; j < this.s.length; j++) {
      const c = this.s[j];
      if (c === '\\') j++;
      else if (c === '"') return (this.i = j + 1);
    }
    return -1;
  }

  /** Skip one value of any kind (containers iteratively: no recursion however deep); returns its end or -1. */
  value(): number {
    const c = this.s[this.i];
    if (c === '"') return this.string();
    if (c !== '{' && c !== '[') {
      if (c === '-' || (c >= '0' && c <= '9')) {
        NUMBER_AT.lastIndex = this.i;
        const m = NUMBER_AT.exec(this.s);
        return m ? (this.i += m[0].length) : -1;
      }
      for (const lit of ['true', 'false', 'null']) if (this.s.startsWith(lit, this.i)) return (this.i += lit.length);
      return -1;
    }
    let depth = 0;
    while (this.i < this.s.length) {
      const d = this.s[this.i];
      if (d === '"') {
        if (this.string() < 0) return -1;
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') depth--;
      this.i++;
      if (depth === 0) return this.i;
    }
    return -1;
  }
}

/**
 * The exact text of the value at `path`: member names from the top-level
 * object down (names compared after unescaping, so `"entry\u005fcount"` is
 * `entry_count`; when a name appears twice the last counts, as in
 * `JSON.parse`). Null when a step is not an object or lacks the member, or
 * the text is not JSON there. An empty path is the whole top-level value.
 */
export function memberText(text: string, path: readonly string[]): string | null {
  const cur = new Cursor(text);
  cur.ws();
  let start = cur.i;
  let end = -1;
  for (const name of path) {
    if (text[cur.i] !== '{') return null;
    cur.i++;
    let found: [number, number] | null = null;
    for (let first = true; ; first = false) {
      cur.ws();
      if (first && text[cur.i] === '}') break;
      const ks = cur.i;
      const ke = cur.string();
      if (ke < 0) return null;
      let key: unknown;
      try {
        key = JSON.parse(text.slice(ks, ke));
      } catch {
        return null;
      }
      cur.ws();
      if (text[cur.i] !== ':') return null;
      cur.i++;
      cur.ws();
      const vs = cur.i;
      const ve = cur.value();
      if (ve < 0) return null;
      if (key === name) found = [vs, ve];
      cur.ws();
      if (text[cur.i] === ',') {
        cur.i++;
        continue;
      }
      if (text[cur.i] === '}') break;
      return null;
    }
    if (!found) return null;
    [start, end] = found;
    cur.i = start;
  }
  if (path.length === 0) {
    end = cur.value();
    if (end < 0) return null;
  }
  return text.slice(start, end);
}

/**
 * Whether the member at `path` is written as a JSON integer: true (`7`,
 * `-0`), false (a number with a fraction or an exponent: `7.0`, `7e0`), null
 * when it is absent or not a number (the parsed-value checks judge those).
 */
export function isIntegerMember(text: string, path: readonly string[]): boolean | null {
  const token = memberText(text, path);
  if (token === null || !/^-?[0-9]/.test(token)) return null;
  return isIntegerToken(token);
}

/**
 * Problems for reading 9's "JSON integer" that only the text shows: the
 * member at `[...at, member]` is a number whose value is a non-negative safe
 * integer but written with a fraction or an exponent (`7.0`, `7e0`, `70e-1`).
 * Other non-integers (`3.5`, `"3"`) are left to the parsed-value check, so
 * nothing is reported twice. Empty when there is nothing to report.
 */
export function writtenIntegerProblems(text: string, at: readonly string[], member: string): string[] {
  const token = memberText(text, [...at, member]);
  if (token === null || !/^-?[0-9]/.test(token) || isIntegerToken(token)) return [];
  const n = Number(token);
  if (!Number.isSafeInteger(n) || n < 0) return [];
  return [`${member} must be written as a JSON integer (no fraction, no exponent), got ${token}`];
}
