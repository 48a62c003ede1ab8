/**
 * The byte-level NDJSON line splitter and line classifier used by the
 * streaming paths.
 */
import { LineSplitter, parseLine, RawLine, splitLines } from '../../src/cli/input';

async function collect(chunks: (string | Buffer)[], max?: number): Promise<{ no: number; text: string | null }[]> {
  async function* gen(): AsyncGenerator<Buffer> {
    for (const c of chunks) yield Buffer.from(c);
  }
  const out: { no: number; text: string | null }[] = [];
  for await (const l of splitLines(gen(), max)) out.push({ no: l.no, text: l.bytes === null ? null : l.bytes.toString('utf8') });
  return out;
}

describe('splitLines', () => {
  it('splits across chunk boundaries, drops CR before LF, keeps a last line without LF', async () => {
    expect(await collect(['{"a"', ':1}\r\n{"b":2}\n\n', '{"c"', '', ':3}'])).toEqual([
      { no: 1, text: '{"a":1}' },
      { no: 2, text: '{"b":2}' },
      { no: 3, text: '' },
      { no: 4, text: '{"c":3}' },
    ]);
  });

  it('yields nothing after a final LF', async () => {
    expect(await collect(['x\n'])).toEqual([{ no: 1, text: 'x' }]);
    expect(await collect([])).toEqual([]);
  });

  it('reports an overlong line as null without buffering it, then goes on', async () => {
    expect(await collect(['short\n0123456', '789abcdef\nok\n', 'toolongtoolong'], 8)).toEqual([
      { no: 1, text: 'short' },
      { no: 2, text: null },
      { no: 3, text: 'ok' },
      { no: 4, text: null },
    ]);
  });
});

describe('LineSplitter byte offsets', () => {
  it('gives each line its first byte and the offset of its LF (or the end), counted from firstByte', () => {
    const text = '{"a":1}\r\n\n{"b":2}\nlast';
    const s = new LineSplitter(64, 5, 1000);
    const lines: RawLine[] = [];
    const on = (l: RawLine): void => {
      lines.push(l);
    };
    // Chunks cut inside lines and inside the CR LF pair.
    for (const c of ['{"a"', ':1}\r', '\n\n{"b"', ':2}\nla', 'st']) s.push(Buffer.from(c), on);
    s.end(on);
    expect(lines.map((l) => [l.no, l.bytes?.toString(), l.start, l.end])).toEqual([
      [5, '{"a":1}', 1000, 1008],
      [6, '', 1009, 1009],
      [7, '{"b":2}', 1010, 1017],
      [8, 'last', 1018, 1022],
    ]);
    // The offsets locate the raw line (CR included) in the input.
    for (const l of lines) expect(text.slice(l.start - 1000, l.end - 1000).replace(/\r$/, '')).toBe(l.bytes?.toString());
  });

  it('keeps counting offsets across an overlong line', () => {
    const s = new LineSplitter(4);
    const lines: RawLine[] = [];
    for (const c of ['ab\n0123', '456789\ncd']) s.push(Buffer.from(c), (l) => lines.push(l));
    s.end((l) => lines.push(l));
    expect(lines.map((l) => [l.bytes?.toString() ?? null, l.start, l.end])).toEqual([
      ['ab', 0, 2],
      [null, 3, 13],
      ['cd', 14, 16],
    ]);
  });
});

describe('parseLine', () => {
  const raw = (b: Buffer | null): RawLine => ({ no: 1, bytes: b, start: 0, end: b?.length ?? 0 });
  it('classifies blank, JSON and bad lines', () => {
    expect(parseLine(raw(Buffer.from(' \t')))).toEqual({ type: 'blank' });
    expect(parseLine(raw(Buffer.from('{"a":[1]}')))).toEqual({ type: 'json', value: { a: [1] }, text: '{"a":[1]}' });
    expect(parseLine(raw(Buffer.from('{"a":')))).toMatchObject({ type: 'bad', why: 'not_json' });
    expect(parseLine(raw(Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22])))).toMatchObject({ type: 'bad', why: 'not_utf8' });
    expect(parseLine(raw(null))).toMatchObject({ type: 'bad', why: 'too_long' });
    // U+00A0 and a BOM are not JSON white space
    expect(parseLine(raw(Buffer.from('\u00a0')))).toMatchObject({ type: 'bad', why: 'not_json' });
  });
});
