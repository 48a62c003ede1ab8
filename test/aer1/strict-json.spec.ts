import fc from 'fast-check';
import { duplicateMemberOf, findDuplicateMember } from '../../src/core/aer1';

describe('findDuplicateMember (I-JSON: member names unique)', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"id":"x","output_hash":"h1","canonical_bytes":"YQ==","output_hash":"h2"}', 'output_hash'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['[{"k":1},{"x":{"y":1,"y":[1,2]}}]', 'y'],
    ['{"role":"producer","name":"x","role":"admin"}', 'role'],
    ['{"a":{"b":1},"c":{"b":2},"a":3}', 'a'],
    ['{"a\\"b":1,"a\\"b":2}', 'a"b'],
    ['{"x":"\\\\","y":"\\"","x":1}', 'x'],
    ['{"s":"a\\\\\\"b","s":2}', 's'],
  ])('finds the duplicate in %s', (text, name) => {
    JSON.parse(text);
    expect(findDuplicateMember(text)).toBe(name);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '{"a":"a","b":"\\"a\\"","c":"{\\"a\\":1,\\"a\\":2}"}',
    '["a","a",{"a":"a"}]',
    '{}',
    '"a"',
    '{"":1," ":2}',
  ])('accepts %s', (text) => {
    expect(findDuplicateMember(text)).toBeNull();
    expect(duplicateMemberOf(text, JSON.parse(text))).toBeNull();
  });

  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"x":{"b":1,"b":1}}', 'b'],
    ['[{"t":"a:b","c":1},{"c":2,"c":3}]', 'c'],
    ['{"\\u0061":1,"a":2}', 'a'],
    ['{"__proto__":1,"__proto__":2}', '__proto__'],
    ['{"k\\"":":","k\\"":1}', 'k"'],
  ])('duplicateMemberOf names the duplicate in %s', (text, name) => {
    expect(duplicateMemberOf(text, JSON.parse(text))).toBe(name);
  });

  it('agrees with a reference over generated JSON (names from a small alphabet so duplicates occur)', () => {
    const name = fc.constantFrom('a', 'b', 'c', '\u00e9', 'a b');
    const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.integer(), fc.string(), tie('arr'), tie('obj')),
      arr: fc.array(tie('node'), { maxLength: 4 }),
      obj: fc.array(fc.tuple(name, tie('node')), { maxLength: 4 }),
    })).node;
    // An array of [name, value] pairs is written as an object, so the text may repeat a name;
    // the reference (dupIn) reads the same pairs back and looks for a repeated name.
    const write = (v: unknown): string => {
      if (Array.isArray(v) && v.length > 0 && v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string')) {
        return `{${(v as [string, unknown][]).map(([k, x]) => `${JSON.stringify(k)}:${write(x)}`).join(',')}}`;
      }
      if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
      return JSON.stringify(v);
    };
    const dupIn = (v: unknown): boolean => {
      if (Array.isArray(v) && v.length > 0 && v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string')) {
        const names = (v as [string, unknown][]).map(([k]) => k);
        return new Set(names).size !== names.length || (v as [string, unknown][]).some(([, x]) => dupIn(x));
      }
      return Array.isArray(v) && v.some(dupIn);
    };
    fc.assert(
      fc.property(value, (v) => {
        const text = write(v);
        const parsed: unknown = JSON.parse(text);
        expect(findDuplicateMember(text) !== null).toBe(dupIn(v));
        // The fast path (member count vs key count) names the same member, or none.
        expect(duplicateMemberOf(text, parsed)).toBe(findDuplicateMember(text));
      }),
      { numRuns: 300 },
    );
  });
});
