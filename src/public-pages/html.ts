/**
 * A tiny HTML template helper: `html\`...\`` escapes every interpolated
 * value unless it is already {@link SafeHtml} (the result of another `html`
 * template). Arrays are joined, each element escaped the same way; null,
 * undefined and false render as nothing. No template engine.
 *
 * A string interpolated as element content is shown as {@link userText}: in
 * a `<bdi>` (its direction cannot reorder the page around it) with every
 * invisible or bidi control code point shown as a marked `<U+XXXX>`. Inside
 * a quoted attribute value it is only escaped.
 */
import { codePointName, httpUrlProblem, visibleSegments, visibleText } from '../core/text';

/** Markup that is already safe to emit. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escape text for an HTML text node or a quoted attribute value. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Tab, line feed and carriage return keep their layout meaning in page text (a `<pre>`); every other invisible is marked. */
const KEEP_IN_PAGES = [0x09, 0x0a, 0x0d];

/**
 * User text as element content: escaped, isolated in `<bdi>` (an
 * unterminated U+202E or right-to-left text cannot reorder what follows
 * it), and every invisible or bidi control code point shown as
 * `<span class="cp">&lt;U+202E&gt;</span>` (the marking of `visibleSegments`,
 * src/core/text.ts, which `aer1`'s report uses too).
 */
export function userText(s: string): SafeHtml {
  const inner = visibleSegments(s, KEEP_IN_PAGES)
    .map((g) => ('text' in g ? escapeHtml(g.text) : `<span class="cp" title="invisible or control character ${codePointName(g.codePoint)}">&lt;${codePointName(g.codePoint)}&gt;</span>`))
    .join('');
  return new SafeHtml(`<bdi>${inner}</bdi>`);
}

/** Text for a place that holds no markup (a `<title>`, an attribute): escaped, invisibles written as `<U+XXXX>`. */
export function plainText(s: string): string {
  return escapeHtml(visibleText(s));
}

/** True when the markup written before an interpolation leaves it inside a tag (`<tr${...}>`, an attribute value). */
function inAttribute(before: string): boolean {
  return before.lastIndexOf('<') > before.lastIndexOf('>');
}

function render(v: unknown, attribute: boolean): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map((x) => render(x, attribute)).join('');
  if (typeof v === 'string' && !attribute) return v === '' ? '' : userText(v).value;
  return attribute ? plainText(String(v)) : escapeHtml(String(v));
}

/** Tagged template: literal parts are trusted, interpolations are escaped (strings in content as {@link userText}). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  // The context is judged on everything written so far (not only the literal just before), so
  // `class="a ${x}${y}"` renders y as an attribute too: rendered values never hold a bare < or >.
  for (let i = 0; i < values.length; i++) out += render(values[i], inAttribute(out)) + strings[i + 1];
  return new SafeHtml(out);
}

/** Trust a constant string as markup (never call with data). */
export function unsafeRaw(s: string): SafeHtml {
  return new SafeHtml(s);
}

/** A path segment for an href built from data. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}

/**
 * An href only when `url` is http(s) without userinfo; anything else
 * (javascript:, data:, `http://127.0.0.1:4711@evil.example/`) is not linked
 * and is shown as text.
 */
export function safeHttpUrl(url: unknown): string | null {
  if (typeof url !== 'string' || httpUrlProblem(url) !== null) return null;
  return new URL(url).href;
}
