/**
 * Strict JSON text (RFC 8259, I-JSON RFC 7493): the one place for JSON white
 * space, strict UTF-8 decoding, parsing with the duplicate-member check,
 * nesting depth and the element texts of an array. The server
 * (src/common/raw-json.ts) and the CLI (src/cli/input.ts) word the failures
 * their own way; the rules are these.
 */
import { isStrictUtf8 } from '../aer1/utf8';
import { duplicateMemberOf } from './duplicate-members';

/** JSON white space (RFC 8259 section 2): space, tab, line feed, carriage return (a byte or a UTF-16 code unit). */
export function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** `text` without the JSON white space around it; nothing inside is changed. */
export function trimJsonSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isJsonSpace(text.charCodeAt(start))) start++;
  while (end > start && isJsonSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** Strict UTF-8 bytes decoded, or why not: `not_utf8` (overlong, surrogate, out-of-range or truncated), `too_large` (longer than a string can be; `error` as thrown). */
export type Decoded = { ok: true; text: string } | { ok: false; why: 'not_utf8' } | { ok: false; why: 'too_large'; error: unknown };

/** Decode `bytes` as strict UTF-8 (spec README reading 2): never replaces a bad sequence. */
export function decodeStrictUtf8(bytes: Buffer): Decoded {
  if (!isStrictUtf8(bytes)) return { ok: false, why: 'not_utf8' };
  try {
    return { ok: true, text: bytes.toString('utf8') };
  } catch (error) {
    return { ok: false, why: 'too_large', error };
  }
}

/** A parsed JSON text, or why not: `not_json` (`error`: what JSON.parse threw) or `duplicate_member` (`member`: the first name found twice in one object). */
export type Parsed = { ok: true; value: unknown } | { ok: false; why: 'not_json'; error: unknown } | { ok: false; why: 'duplicate_member'; member: string };

/**
 * Parse `text` as one JSON value and refuse a member name twice in one
 * object (RFC 7493 section 2.3: parsers disagree on which member counts, so
 * the document is ambiguous).
 */
export function parseJsonText(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    return { ok: false, why: 'not_json', error };
  }
  const member = duplicateMemberOf(text, value);
  return member === null ? { ok: true, value } : { ok: false, why: 'duplicate_member', member };
}

/** The deepest nesting of arrays and objects a request document may have. */
export const MAX_JSON_DEPTH = 128;

/** Nesting depth of arrays and objects in JSON text (strings skipped); stops counting above `stopAbove`. */
export function jsonDepth(text: string, stopAbove = Number.MAX_SAFE_INTEGER): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < n && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max && (max = depth) > stopAbove) return max;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return max;
}

/**
 * Given the text of a JSON array that is already known to parse, return the
 * exact source text of each top-level element (white space around elements
 * trimmed). Returns null when `text` is not an array.
 */
export function splitJsonArray(text: string): string[] | null {
  let i = 0;
  const n = text.length;
  while (i < n && isJsonSpace(text.charCodeAt(i))) i++;
  if (text[i] !== '[') return null;
  i++;
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  for (; i < n; i++) {
    const c = text[i];
    if (c === '"') {
      if (start < 0) start = i;
      for (i++; i < n && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (isJsonSpace(text.charCodeAt(i))) continue;
    if (depth === 0 && (c === ',' || c === ']')) {
      if (start >= 0) out.push(trimJsonSpace(text.slice(start, i)));
      start = -1;
      if (c === ']') return out;
      continue;
    }
    if (start < 0) start = i;
    if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
  }
  return null;
}

/**
 * The exact texts of the lines of an NDJSON document: split on LF, one
 * trailing CR dropped, blank (white-space-only) lines skipped; nothing else
 * is changed. Deterministic, so a stored NDJSON import replays to the same
 * entries (the ledger, its coverage reports and `aer1 verify-pack` split alike).
 */
export function ndjsonTexts(text: string): string[] {
  const out: string[] = [];
  for (let line of text.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (/^[ \t\r]*$/.test(line)) continue;
    out.push(line);
  }
  return out;
}
