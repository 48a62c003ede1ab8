/**
 * Parsing request bodies without losing what was received: the exact text
 * is kept beside the parsed value, and arrays can be split into the exact
 * source text of each element, so canonical bytes are stored as received and
 * never re-serialized.
 */
import { isStrictUtf8 } from '../aer1';
import { BadInputError } from './errors';

/** A parsed JSON value with the exact text it came from. */
export interface RawJson {
  text: string;
  value: unknown;
}

/** Decode `bytes` as strict UTF-8 and parse it as one JSON value. Throws BadInputError (`invalid_utf8`, `malformed_json`, `empty_body`). */
export function parseRawJson(bytes: Buffer | string): RawJson {
  let text: string;
  if (typeof bytes === 'string') text = bytes;
  else {
    if (!isStrictUtf8(bytes)) throw new BadInputError('invalid_utf8', 'the request body is not valid UTF-8');
    text = bytes.toString('utf8');
  }
  if (text.trim() === '') throw new BadInputError('empty_body', 'the request body is empty');
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (e) {
    throw new BadInputError('malformed_json', `the request body is not JSON: ${(e as Error).message}`);
  }
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
