/**
 * `aer1 verify-pack` reads a pack as lines (src/cli/pack-check.ts
 * `fileLines`): split on LF only, exact bytes, across the stream's 64 KiB
 * chunks, and without re-copying an unfinished line per chunk (a 20 MB line
 * took 46 s when it did).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileLines } from '../../src/cli/pack-check';

const dir = mkdtempSync(join(tmpdir(), 'pack-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function linesOf(bytes: Buffer): Promise<Buffer[]> {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, bytes);
  const out: Buffer[] = [];
  for await (const line of fileLines(file)) out.push(Buffer.from(line));
  return out;
}

/** The reference: every LF ends a line; what follows the last LF is a line when not empty. */
function reference(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (let k = 0; k < bytes.length; k++) {
    if (bytes[k] !== 0x0a) continue;
    out.push(bytes.subarray(from, k));
    from = k + 1;
  }
  if (from < bytes.length) out.push(bytes.subarray(from));
  return out;
}

describe('pack lines', () => {
  it('splits on LF only and keeps every other byte, CR and invalid UTF-8 included', async () => {
    const bytes = Buffer.concat([Buffer.from('{"member":"header"}\r\n\n'), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('\nlast')]);
    expect((await linesOf(bytes)).map((b) => b.toString('latin1'))).toEqual(reference(bytes).map((b) => b.toString('latin1')));
    expect((await linesOf(bytes)).map((b) => b.length)).toEqual([20, 0, 3, 4]);
  });

  it('gives the same lines as the reference for lines that span chunks (sizes around 64 KiB, many LFs in one chunk)', async () => {
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 6; round++) {
      const parts: Buffer[] = [];
      for (let k = 0; k < 40; k++) {
        const len = [0, 1, 65535, 65536, 65537, 200_000][rand(6)] + rand(3);
        parts.push(Buffer.alloc(len, 0x61 + (k % 26)), Buffer.from('\n'));
      }
      if (round % 2) parts.pop(); // no LF at the end
      const bytes = Buffer.concat(parts);
      const got = await linesOf(bytes);
      const want = reference(bytes);
      expect(got.map((b) => b.length)).toEqual(want.map((b) => b.length));
      expect(Buffer.concat(got).equals(Buffer.concat(want))).toBe(true);
    }
  });

  it('reads one 16 MB line whole, as one line', async () => {
    const bytes = Buffer.concat([Buffer.from('{"member":"header","pad":"'), Buffer.alloc(16 * 1024 * 1024, 0x41), Buffer.from('"}\n{"member":"manifest"}\n')]);
    const got = await linesOf(bytes);
    expect(got.map((b) => b.length)).toEqual([16 * 1024 * 1024 + 28, 21]);
  });
});
