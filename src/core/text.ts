/**
 * Text that could look like other text: one place for what is shown
 * visibly (pages, `aer1` reports) and what an identifier may hold. Pure: no
 * framework or I/O imports, so the CLI, the pure coverage core and the
 * services share it.
 *
 * Nothing here changes stored bytes: identifiers are only refused (at write
 * time), and marking is for display only; JSON answers carry texts exactly.
 */
import { BadInputError } from './errors';

/**
 * Code points a reader cannot see or that reorder what follows: C0/C1
 * controls and DEL (Cc), format characters (Cf: bidi embeddings, overrides
 * and isolates U+202A-U+202E / U+2066-U+2069, U+200E/U+200F/U+061C marks,
 * zero-width U+200B-U+200D, U+2060, U+FEFF, soft hyphen...), line and
 * paragraph separators, other default-ignorable code points (fillers,
 * variation selectors), every space separator but U+0020 (no-break, en, em,
 * thin, ideographic spaces look like a plain space: `EXECUTED BY LED GER`
 * with U+2002 must not read as another system) and unpaired surrogates.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

/** One piece of a text cut by {@link visibleSegments}: plain text, or one code point to mark. */
export type Segment = { text: string } | { codePoint: number };

/**
 * Cut `s` into plain runs and the code points of {@link INVISIBLE}, in
 * order. `keep` lists code points to leave in the plain runs (a page keeps
 * tab and line feed in preformatted text; a terminal line keeps none).
 */
export function visibleSegments(s: string, keep: readonly number[] = []): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  for (const m of s.matchAll(INVISIBLE)) {
    const cp = m[0].codePointAt(0)!;
    if (keep.includes(cp)) continue;
    if (m.index! > last) out.push({ text: s.slice(last, m.index) });
    out.push({ codePoint: cp });
    last = m.index! + m[0].length;
  }
  if (last < s.length) out.push({ text: s.slice(last) });
  return out;
}

/** `U+202E` for a code point (at least four hex digits, uppercase). */
export function codePointName(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** `s` with every invisible code point written as `<U+XXXX>`: for plain-text places (an HTML title, a log line). */
export function visibleText(s: string): string {
  return visibleSegments(s)
    .map((g) => ('text' in g ? g.text : `<${codePointName(g.codePoint)}>`))
    .join('');
}

// ---------------------------------------------------------------- identifiers

/**
 * The one length limit of an identifier (job id, timeline entry id, plan
 * action id, verification target id, key name), in Unicode code points.
 * 200 code points are at most 800 UTF-8 bytes, well under PostgreSQL's
 * 2,704-byte index entry, so no identifier reaches the storage limit.
 */
export const IDENTIFIER_MAX_LENGTH = 200;

/** Why an identifier is refused: `unsupported_character` (with a `reason`) or `value_too_large`. */
export interface IdentifierProblem {
  code: 'unsupported_character' | 'value_too_large';
  /** `control`, `format` (bidi, zero-width...), `lone_surrogate`, `space` (not U+0020, or at either end), `not_nfc`, `too_long`. */
  reason: string;
  message: string;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const CONTROL = /[\p{Cc}]/u;
const FORMAT = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const ODD_SPACE = /[\p{Zl}\p{Zp}\p{Zs}\t\n\v\f\r]/u;

/** True when `s` holds an unpaired UTF-16 surrogate (Node 20's String.prototype.isWellFormed, negated). */
export function hasLoneSurrogate(s: string): boolean {
  const native = (s as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? !native.call(s) : LONE_SURROGATE.test(s);
}

/**
 * The service's rule for an identifier (a policy, not AER-1 verification:
 * a record refused by it is not "invalid"). Refused, so that two ids that
 * look the same are the same id:
 * - control characters (C0, C1, DEL, including U+0000);
 * - format and default-ignorable characters: bidi controls (U+061C,
 *   U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), zero-width characters
 *   (U+200B-U+200D, U+2060, U+FEFF), soft hyphen, variation selectors...;
 * - unpaired surrogates (PostgreSQL stores them as U+FFFD: ids collided);
 * - any white space other than U+0020, and U+0020 at either end;
 * - text not in Unicode Normalization Form C (NFD `é` is refused; NFC `é`
 *   is accepted), so one visible id has one spelling;
 * - more than {@link IDENTIFIER_MAX_LENGTH} code points (`value_too_large`).
 * Returns null when `s` is acceptable. An empty string is not checked here.
 */
export function identifierProblem(name: string, s: string): IdentifierProblem | null {
  const bad = (reason: string, what: string): IdentifierProblem => ({ code: 'unsupported_character', reason, message: `${name} ${what}; identifiers are refused with controls, bidi or invisible characters, odd white space or text not in Unicode NFC` });
  if (hasLoneSurrogate(s)) return bad('lone_surrogate', 'holds an unpaired UTF-16 surrogate');
  const control = CONTROL.exec(s);
  if (control) return bad('control', `holds the control character ${codePointName(control[0].codePointAt(0)!)}`);
  const format = FORMAT.exec(s);
  if (format) return bad('format', `holds the invisible or bidirectional formatting character ${codePointName(format[0].codePointAt(0)!)}`);
  const space = ODD_SPACE.exec(s);
  if (space && space[0] !== ' ') return bad('space', `holds the white space character ${codePointName(space[0].codePointAt(0)!)} (only U+0020 is allowed)`);
  if (s.startsWith(' ') || s.endsWith(' ')) return bad('space', 'starts or ends with a space');
  if (s.normalize('NFC') !== s) return bad('not_nfc', 'is not in Unicode Normalization Form C (send the composed form, e.g. U+00E9 for é)');
  let n = 0;
  for (const _ of s) if (++n > IDENTIFIER_MAX_LENGTH) break;
  if (n > IDENTIFIER_MAX_LENGTH) return { code: 'value_too_large', reason: 'too_long', message: `${name} is longer than ${IDENTIFIER_MAX_LENGTH} characters, the limit for an identifier` };
  return null;
}

// ---------------------------------------------------------------- URLs

/**
 * Why `url` is not an acceptable http(s) URL to record or link, or null.
 * Refused: anything that does not parse, a scheme other than http/https,
 * and userinfo (`http://127.0.0.1:4711@evil.example/` names host
 * evil.example while reading as 127.0.0.1).
 */
export function httpUrlProblem(url: unknown): 'not_http_url' | 'url_has_userinfo' | null {
  if (typeof url !== 'string') return 'not_http_url';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not_http_url';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'not_http_url';
  if (u.username !== '' || u.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url.trim())) return 'url_has_userinfo';
  return null;
}

/**
 * Throw the 400 of {@link identifierProblem} (`unsupported_character` or
 * `value_too_large`, with `field` and `reason` in the body) when `s` is not
 * an acceptable identifier. Call it wherever an identifier enters a write.
 */
export function assertIdentifier(name: string, s: string): void {
  const p = identifierProblem(name, s);
  if (p) throw new BadInputError(p.code, p.message, { field: name, reason: p.reason });
}
