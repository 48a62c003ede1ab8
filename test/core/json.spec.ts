/**
 * The one JSON input module (src/core/json) as the server's adapter
 * (src/common/raw-json.ts) uses it: NDJSON lines split like the CLI's
 * streams, JSON white space only, element texts exact.
 */
import { ndjsonLines, parseRawJson } from '../../src/common/raw-json';
import { splitJsonArray, trimJsonSpace } from '../../src/core/json';

describe('server NDJSON lines (LineSplitter)', () => {
  test('numbers every line, drops a CR before LF, skips blank lines and answers a bad line alone', () => {
    const body = Buffer.concat([Buffer.from('{"a":1}\r\n \t\r\n\n'), Buffer.from([0x22, 0xc0, 0xaf, 0x22]), Buffer.from('\n[2]')]);
    const got = ndjsonLines(body).map((l) => ('text' in l ? [l.line, l.text] : [l.line, l.error.code]));
    expect(got).toEqual([
      [1, '{"a":1}'],
      [4, 'invalid_utf8'],
      [5, '[2]'],
    ]);
    expect(ndjsonLines(Buffer.alloc(0))).toEqual([]);
  });
});

describe('JSON white space', () => {
  test('only space, tab, LF and CR are trimmed (a no-break space is kept and refused by the parser)', () => {
    expect(trimJsonSpace(' \t\r\n[1]\n ')).toBe('[1]');
    expect(trimJsonSpace('\u00a0[1]')).toBe('\u00a0[1]');
    expect(() => parseRawJson('\u00a0[1]')).toThrow(expect.objectContaining({ code: 'malformed_json' }));
  });

  test('array elements keep their exact text', () => {
    expect(splitJsonArray(' [ {"a" : 1} ,\r\n"x, ]" , 2.50 ] ')).toEqual(['{"a" : 1}', '"x, ]"', '2.50']);
    expect(splitJsonArray('{"a":[1]}')).toBeNull();
  });
});
