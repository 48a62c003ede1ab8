/**
 * Parsing request bodies without losing what was received: the exact text
 * is kept beside the parsed value, and arrays can be split into the exact
 * source text of each element, so canonical bytes are stored as received and
 * never re-serialized.
 */
import { findDuplicateMember, isStrictUtf8 } from '../aer1';
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
  const dup = findDuplicateMember(text);
  if (dup !== null) throw new BadInputError('duplicate_member', `member ${JSON.stringify(dup).slice(0, 200)} appears twice in one object; the document is ambiguous`, { member: dup.slice(0, 200) });
  return { text, value };
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

/** Split NDJSON text into non-blank lines with their 1-based line numbers. */
export function ndjsonLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    const t = lines[k].replace(/\r$/, '');
    if (t.trim() !== '') out.push({ line: k + 1, text: t });
  }
  return out;
}
