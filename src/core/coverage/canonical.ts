/**
 * A small canonical JSON writer for plan and report digests: object members
 * sorted by Unicode code point, no white space, strings written by the
 * core's ASCII-only {@link writeJsonString} (S7.1 escaping), numbers only as
 * safe integers (a fraction, NaN or infinity throws), `undefined` rejected.
 * Pure: no framework or I/O imports.
 */
import { sha256Hex, writeJsonString } from '../aer1';

/** Compare two strings by Unicode code point (not UTF-16 code unit). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point order only when a surrogate meets a unit above it.
    if ((x >= 0xd800 && x <= 0xdfff) || (y >= 0xd800 && y <= 0xdfff)) return a.codePointAt(i)! - b.codePointAt(i)!;
    return x - y;
  }
  return a.length - b.length;
}

/** Write `value` as canonical JSON. Throws TypeError on anything that has no canonical form here. */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return writeJsonString(value);
    case 'number':
      if (!Number.isSafeInteger(value)) throw new TypeError(`canonical JSON carries integers only, got ${value}`);
      return String(value);
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map((v) => canonicalJson(v)).join(',') + ']';
      const o = value as Record<string, unknown>;
      const keys = Object.keys(o).sort(compareCodePoints);
      return '{' + keys.map((k) => {
        if (o[k] === undefined) throw new TypeError(`canonical JSON has no undefined (member ${k})`);
        return writeJsonString(k) + ':' + canonicalJson(o[k]);
      }).join(',') + '}';
    }
    default:
      throw new TypeError(`canonical JSON cannot carry a ${typeof value}`);
  }
}

/** SHA-256 over the UTF-8 bytes of the canonical JSON of `value`, as 64 lowercase hex digits. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
