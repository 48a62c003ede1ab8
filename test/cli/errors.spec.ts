/**
 * Usage and input errors: exit 2 with one `aer1: ...` line on stderr and
 * never a stack trace.
 */
import { cli, hasStackTrace, TmpDir } from './helpers';

function expectOneLineError(err: string, pattern: RegExp): void {
  expect(err).toMatch(/^aer1: [^\n]+\n$/);
  expect(err).toMatch(pattern);
  expect(hasStackTrace(err)).toBe(false);
}

describe('aer1 errors', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  it('missing file: exit 2, one line, no stack', async () => {
    const r = await cli(['verify', tmp.path('missing.json')]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expectOneLineError(r.err, /^aer1: cannot read .*missing\.json: ENOENT/);
  });

  it('a directory: exit 2', async () => {
    const r = await cli(['verify', tmp.dir]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /EISDIR/);
  });

  it('invalid UTF-8: exit 2', async () => {
    const p = tmp.write('bad-utf8.json', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])); // {"a":"<surrogate>"}
    const r = await cli(['verify', p]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /is not valid UTF-8/);
  });

  it('overlong UTF-8 in a stdin document: exit 2', async () => {
    const r = await cli(['verify', '-'], { stdin: Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]) });
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /^aer1: stdin is not valid UTF-8/);
  });

  it('a leading byte order mark: exit 2', async () => {
    const p = tmp.write('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]));
    const r = await cli(['verify', p]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /byte order mark/);
    const chain = await cli(['verify', '--kind', 'chain', p]);
    expect(chain.code).toBe(2);
    const batch = await cli(['verify', '--batch', '--json', p]);
    expect(batch.code).toBe(2);
    expect(batch.out).toBe('');
  });

  it('not JSON: exit 2 with the parser’s reason', async () => {
    const r = await cli(['verify', tmp.write('garbage.json', '{"a": ')]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /garbage\.json is not JSON: /);
  });

  it('bytes that cannot begin JSON: exit 2 at once, without reading the rest (found by a trial with /dev/zero)', async () => {
    const r = await cli(['verify', tmp.write('zeros.bin', Buffer.alloc(4096))]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /zeros\.bin is not JSON: it begins with byte 0x00/);
    // With --kind chain such input is read as NDJSON lines (streamed, each line judged), as before.
    const c = await cli(['verify', '--kind', 'chain', '--json', tmp.write('junk.ndjson', '}{\n%%\n')]);
    expect(c.code).toBe(1);
    expect(JSON.parse(c.out)).toMatchObject({ verdict: 'invalid', entry_count: 2, input: { not_json_lines: 2, not_json_at: [1, 2] } });
  });

  it('NDJSON without --kind chain: exit 2 with a hint', async () => {
    const r = await cli(['verify', tmp.write('two.ndjson', '{"a":1}\n{"a":2}\n')]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /use --kind chain/);
  });

  it('empty input: exit 2', async () => {
    const r = await cli(['verify', tmp.write('empty.json', ' \n\t')]);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /is empty/);
  });

  it('unknown option: exit 2, one line', async () => {
    const r = await cli(['verify', '--jsn', 'x.json']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /unknown option '--jsn'/);
  });

  it('unknown command: exit 2, one line', async () => {
    const r = await cli(['frobnicate']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /unknown command 'frobnicate'/);
  });

  it('bad --kind choice: exit 2', async () => {
    const r = await cli(['verify', '--kind', 'ledger', 'x.json']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /Allowed choices are/);
  });

  it('missing file argument: exit 2', async () => {
    const r = await cli(['verify']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /missing required argument 'file'/);
  });

  it('too many arguments: exit 2', async () => {
    const r = await cli(['verify', 'a.json', 'b.json']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /too many arguments/);
  });

  it('reading stdin twice: exit 2', async () => {
    const r = await cli(['verify', '--commitment', '-', '-']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /stdin can be read only once/);
  });

  it('--batch with --commitment: exit 2', async () => {
    const r = await cli(['verify', '--batch', '--json', '--commitment', 'c.json', 'b.ndjson']);
    expect(r.code).toBe(2);
    expectOneLineError(r.err, /--commitment cannot be used with --batch/);
  });

  it('--help exits 0 on stdout; no command shows help on stderr with exit 2', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: aer1 /);
    expect(help.out).toContain('verify');
    expect(help.out).toContain('conformance');
    const verifyHelp = await cli(['verify', '--help']);
    expect(verifyHelp.code).toBe(0);
    expect(verifyHelp.out).toContain('--batch');
    expect(verifyHelp.out).toContain('Exit codes');
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^Usage: aer1 /);
  });

  it('--version exits 0', async () => {
    const r = await cli(['--version']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
