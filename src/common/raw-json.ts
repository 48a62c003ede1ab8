/**
 * Parsing request bodies without losing what was received: the exact text
 * is kept beside the parsed value, and arrays can be split into the exact
 * source text of each element, so canonical bytes are stored as received and
 * never re-serialized.
 */
import { isStrictUtf8 } from '../core/aer1';
import { decodeStrictUtf8, isBlankLine, jsonDepth, LineSplitter, MAX_JSON_DEPTH, ndjsonTexts, parseJsonText, RawLine, trimJsonSpace } from '../core/json';
import { BadInputError } from './errors';

export { jsonDepth, MAX_JSON_DEPTH, ndjsonTexts, splitJsonArray } from '../core/json';

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
    const d = decodeStrictUtf8(bytes);
    if (!d.ok) {
      if (d.why === 'not_utf8') throw new BadInputError('invalid_utf8', 'the request body is not valid UTF-8');
      throw d.error; // longer than a string can be: never a request body (the body limit is far lower)
    }
    text = d.text;
  }
  text = trimJsonSpace(text);
  if (text === '') throw new BadInputError('empty_body', 'the request body is empty');
  const p = parseJsonText(text);
  if (p.ok) return { text, value: p.value };
  if (p.why === 'not_json') throw new BadInputError('malformed_json', `not JSON: ${(p.error as Error).message}`);
  const dup = p.member;
  throw new BadInputError('duplicate_member', `member ${JSON.stringify(dup).slice(0, 200)} appears twice in one object; the document is ambiguous`, { member: dup.slice(0, 200) });
}


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

/**
 * Split an NDJSON body into its non-blank lines (blank: only JSON white
 * space), with 1-based line numbers, at LF bytes (a trailing CR is dropped).
 * Each line is checked as strict UTF-8 on its own, so one bad line is
 * answered alone: `text` is the decoded line, or `error` says why not.
 */
export function ndjsonLines(bytes: Buffer): ({ line: number; text: string } | { line: number; error: BadInputError })[] {
  const out: ({ line: number; text: string } | { line: number; error: BadInputError })[] = [];
  const splitter = new LineSplitter(Infinity);
  const take = ({ no, bytes: b }: RawLine): void => {
    if (b === null || isBlankLine(b)) return; // never null: no line limit here
    if (!isStrictUtf8(b)) out.push({ line: no, error: new BadInputError('invalid_utf8', 'the line is not valid UTF-8') });
    else out.push({ line: no, text: b.toString('utf8') });
  };
  splitter.push(bytes, take);
  splitter.end(take);
  return out;
}

/**
 * Parse an NDJSON request body (one JSON value per line) strictly, line by
 * line, as {@link parseRequestJson} does for one document. `text` is the whole
 * body as received, `value` the array of the lines' values and `entries`
 * their exact texts. Throws BadInputError (`invalid_utf8`, `empty_body`,
 * `malformed_json`, `duplicate_member`, `too_deep`) naming the `entry` (1-based among non-blank lines).
 */
export function parseNdjsonRequest(bytes: Buffer): RawJson & { value: unknown[]; entries: string[] } {
  if (!isStrictUtf8(bytes)) throw new BadInputError('invalid_utf8', 'the request body is not valid UTF-8');
  const text = bytes.toString('utf8');
  const entries = ndjsonTexts(text);
  if (entries.length === 0) throw new BadInputError('empty_body', 'the NDJSON body holds no lines');
  const value = entries.map((line, k) => {
    try {
      return parseRequestJson(line).value;
    } catch (e) {
      if (e instanceof BadInputError) throw new BadInputError(e.code, `entry ${k + 1} (non-blank line ${k + 1}): ${e.message}`, { ...e.details, entry: k + 1 });
      throw e;
    }
  });
  return { text, value, entries };
}
