import { rawMember } from '../../src/core/json';

describe('rawMember: the exact text of a top-level member', () => {
  it('returns the member as written: spacing, escapes and number forms kept', () => {
    const text = ' { "jsonrpc" : "2.0", "id":7 ,"result" :  {"n": 1.0, "big": 12345678901234567890, "s": "caf\\u00e9 \\"}\\"", "a": [1, {"b": "]"}]}  , "x": null }';
    expect(rawMember(text, 'result')).toBe('{"n": 1.0, "big": 12345678901234567890, "s": "caf\\u00e9 \\"}\\"", "a": [1, {"b": "]"}]}');
    expect(rawMember(text, 'id')).toBe('7');
    expect(rawMember(text, 'x')).toBe('null');
    expect(rawMember(text, 'jsonrpc')).toBe('"2.0"');
  });

  it('compares names after their escapes, and answers null for an absent member or a non-object', () => {
    expect(rawMember('{"res\\u0075lt":[true]}', 'result')).toBe('[true]');
    expect(rawMember('{"error":{"code":-1}}', 'result')).toBeNull();
    expect(rawMember('{}', 'result')).toBeNull();
    expect(rawMember('[{"result":1}]', 'result')).toBeNull();
    expect(rawMember('"result"', 'result')).toBeNull();
  });
});
