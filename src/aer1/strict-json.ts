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
      let j = i + 1;
      let escaped = false;
      while (j < n && text.charCodeAt(j) !== 0x22) {
        if (text.charCodeAt(j) === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else j++;
      }
      const top = stack.length > 0 ? stack[stack.length - 1] : null;
      if (expectName && top) {
        const name = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
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
