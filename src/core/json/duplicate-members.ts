/**
 * Duplicate member names (I-JSON, RFC 7493 section 2.3). RFC 8259 lets
 * parsers differ on `{"a":1,"a":2}`: most keep the last member, some the
 * first. A receipt whose `id`, `canonical_bytes` or `output_hash` appears
 * twice would verify differently in different verifiers, so the ledger and
 * the CLI refuse such documents instead of silently picking one.
 */

/**
 * The first member name that appears twice in one object of `text`, or null.
 * Precondition: `text` is well-formed JSON (it already parsed). Names are
 * compared after unescaping, so `"a"` and `"\u0061"` are the same name.
 */
export function findDuplicateMember(text: string): string | null {
  const stack: (Set<string> | null)[] = []; // a Set per open object, null per open array
  let expectName = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Jump from quote to quote (indexOf is far faster than a loop over long base64 values);
      // a quote preceded by an odd number of backslashes is escaped and does not end the string.
      let j = text.indexOf('"', i + 1);
      for (;;) {
        if (j < 0) return null; // unterminated: not well-formed JSON, nothing to report
        let k = j - 1;
        while (text.charCodeAt(k) === 0x5c /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      const top = stack.length > 0 ? stack[stack.length - 1] : null;
      if (expectName && top) {
        const raw = text.slice(i + 1, j);
        const name = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.has(name)) return name;
        top.add(name);
        expectName = false;
      }
      i = j;
    } else if (c === 0x7b /* { */) {
      stack.push(new Set());
      expectName = true;
    } else if (c === 0x5b /* [ */) {
      stack.push(null);
      expectName = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectName = false;
    } else if (c === 0x2c /* , */) {
      expectName = stack.length > 0 && stack[stack.length - 1] !== null;
    }
  }
  return null;
}

/**
 * Member separators (`:`) outside strings in well-formed JSON `text`: one
 * per member of every object.
 */
function memberCount(text: string): number {
  let count = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a /* : */) count++;
    else if (c === 0x22 /* " */) {
      // Skip the string: jump to its closing quote (one preceded by an even number of backslashes).
      let j = text.indexOf('"', i + 1);
      for (;;) {
        if (j < 0) return count;
        let k = j - 1;
        while (text.charCodeAt(k) === 0x5c /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      i = j;
    }
  }
  return count;
}

/** Own members of every object in a parsed JSON value (iterative: any depth). */
function keyCount(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
    } else {
      const keys = Object.keys(v); // own members only
      count += keys.length;
      for (const k of keys) {
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === 'object' && x !== null) stack.push(x);
      }
    }
  }
  return count;
}

/**
 * {@link findDuplicateMember} for `text` already parsed by `JSON.parse` into
 * `value`, fast when no name repeats (the usual case): JSON.parse keeps one
 * member per name, so a document with a duplicate has fewer keys than
 * members in its text, and only then is the text scanned for the name.
 */
export function duplicateMemberOf(text: string, value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (memberCount(text) === keyCount(value)) return null;
  return findDuplicateMember(text);
}
