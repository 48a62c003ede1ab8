/**
 * The exact source text of a top-level member of a JSON object, without
 * parsing or re-serializing it: what a receipt commits to when its bytes
 * are a member of a larger message (the `result` of a JSON-RPC response).
 */
import { isJsonSpace } from './text';

/** The end (exclusive) of the JSON string that opens at `i` (a `"`), or -1 when it is not closed. */
function stringEnd(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22 /* " */) return i + 1;
  }
  return -1;
}

/** The end (exclusive) of the JSON value that starts at `i`, or -1 when the text ends first. Assumes text that parses. */
function valueEnd(text: string, i: number): number {
  const n = text.length;
  const first = text[i];
  if (first === '"') return stringEnd(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (; i < n; i++) {
      const c = text[i];
      if (c === '"') {
        i = stringEnd(text, i) - 1;
        if (i < 0) return -1;
      } else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number or a literal: up to the next delimiter.
  while (i < n && !isJsonSpace(text.charCodeAt(i)) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
  return i;
}

/**
 * The exact text of the top-level member `name` of the JSON object in
 * `text` (from its first to its last character, no surrounding white
 * space), or null when `text` is not an object or has no such member. The
 * text must already be known to parse as JSON (with no duplicate members:
 * with duplicates the first is returned, where JSON.parse keeps the last).
 * Member names are compared after decoding their escapes.
 */
export function rawMember(text: string, name: string): string | null {
  const n = text.length;
  let i = 0;
  const skip = () => {
    while (i < n && isJsonSpace(text.charCodeAt(i))) i++;
  };
  skip();
  if (text[i] !== '{') return null;
  i++;
  for (;;) {
    skip();
    if (text[i] !== '"') return null; // `}` of an object without it, or not JSON
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return null;
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = keyEnd;
    skip();
    if (text[i] !== ':') return null;
    i++;
    skip();
    const end = valueEnd(text, i);
    if (end < 0) return null;
    if (key === name) return text.slice(i, end);
    i = end;
    skip();
    if (text[i] !== ',') return null;
    i++;
  }
}
