/**
 * Parsing request bodies without losing what was received: the exact text
 * is kept beside the parsed value, and arrays can be split into the exact
 * source text of each element, so canonical bytes are stored as received and
 * never re-serialized.
 */
import { duplicateMemberOf, isStrictUtf8 } from '../core/aer1';
import { BadInputError } from './errors';

/** A parsed JSON value with the exact text it came from. */
export interface RawJson {
  text: string;
  value: unknown;
}

/**
 * Decode `bytes` as strict UTF-8 and parse it as one JSON value. The kept
 * text is the document without the insignificant white space around it (a
 * trailing newline is not part of the document); nothing inside is changed.
 * Throws BadInputError: `invalid_utf8`, `empty_body`, `malformed_json`, or
 * `duplicate_member` (a name twice in one object: parsers disagree on which
 * member counts, so the document is ambiguous).
 */
export function parseRawJson(bytes: Buffer | string): RawJson {
  let text: string;
  if (typeof bytes === 'string') text = bytes;
  else {
    if (!isStrictUtf8(bytes)) throw new BadInputError('invalid_utf8', 'the request body is not valid UTF-8');
    text = bytes.toString('utf8');
  }
  text = text.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '');
  if (text === '') throw new BadInputError('empty_body', 'the request body is empty');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    throw new BadInputError('malformed_json', `not JSON: ${(e as Error).message}`);
  }
  const dup = duplicateMemberOf(text, value);
  if (dup !== null) throw new BadInputError('duplicate_member', `member ${JSON.stringify(dup).slice(0, 200)} appears twice in one object; the document is ambiguous`, { member: dup.slice(0, 200) });
  return { text, value };
}

/** The deepest nesting of arrays and objects a request document may have. */
export const MAX_JSON_DEPTH = 128;

/**
 * Parse a request body or NDJSON line like {@link parseRawJson}, and refuse
 * nesting deeper than {@link MAX_JSON_DEPTH} (400 `too_deep`). JSON.parse
 * accepts any depth, but serializing or printing such a value overflows the
 * stack: a commitment whose witness metadata nested 40,000 levels was recorded
 * and then answered 500 when the response echoed it.
 */
export function parseRequestJson(bytes: Buffer | string): RawJson {
  const parsed = parseRawJson(bytes);
  if (jsonDepth(parsed.text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new BadInputError('too_deep', `the JSON document is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return parsed;
}

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
  const ws = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
  while (i < n && ws(text.charCodeAt(i))) i++;
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
    if (ws(text.charCodeAt(i))) continue;
    if (depth === 0 && (c === ',' || c === ']')) {
      if (start >= 0) out.push(text.slice(start, lastNonWs(text, i) + 1));
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

function lastNonWs(text: string, before: number): number {
  let j = before - 1;
  while (j >= 0 && /\s/.test(text[j])) j--;
  return j;
}

/**
 * Split an NDJSON body into its non-blank lines (blank: only JSON white
 * space), with 1-based line numbers, at LF bytes (a trailing CR is dropped).
 * Each line is checked as strict UTF-8 on its own, so one bad line is
 * answered alone: `text` is the decoded line, or `error` says why not.
 */
export function ndjsonLines(bytes: Buffer): ({ line: number; text: string } | { line: number; error: BadInputError })[] {
  const out: ({ line: number; text: string } | { line: number; error: BadInputError })[] = [];
  let start = 0;
  for (let no = 1; start <= bytes.length; no++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    let b = bytes.subarray(start, end);
    start = end + 1;
    if (b.length > 0 && b[b.length - 1] === 0x0d) b = b.subarray(0, b.length - 1);
    if (b.every((x) => x === 0x20 || x === 0x09 || x === 0x0d)) continue;
    if (!isStrictUtf8(b)) out.push({ line: no, error: new BadInputError('invalid_utf8', 'the line is not valid UTF-8') });
    else out.push({ line: no, text: b.toString('utf8') });
  }
  return out;
}
