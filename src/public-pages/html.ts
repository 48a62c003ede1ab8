/**
 * A tiny HTML template helper: `html\`...\`` escapes every interpolated
 * value unless it is already {@link SafeHtml} (the result of another `html`
 * template). Arrays are joined, each element escaped the same way; null,
 * undefined and false render as nothing. No template engine.
 */

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

function render(v: unknown): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: literal parts are trusted, interpolations are escaped. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
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

/** An href only when `url` is http(s); anything else (javascript:, data:) is not linked. */
export function safeHttpUrl(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}
