/**
 * NDJSON timelines with --kind chain: streamed through TimelineVerifier,
 * same verdict and final digest as the whole-array path; lines that are not
 * JSON count as invalid entries and the run continues.
 */
import { readFileSync } from 'node:fs';
import { cli, TmpDir, vector } from './helpers';

describe('aer1 verify --kind chain (NDJSON streaming)', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  let ndjsonPath: string;
  let arrayPath: string;

  beforeAll(async () => {
    const gen = await cli(['generate', 'timeline', '--entries', '5000', '--job', 'job-stream']);
    expect(gen.code).toBe(0);
    ndjsonPath = tmp.write('t5000.ndjson', gen.out);
    const lines = gen.out.trimEnd().split('\n');
    expect(lines).toHaveLength(5000);
    arrayPath = tmp.write('t5000.json', `[${lines.join(',\n')}]`);
  });

  it('gives the same final digest for a generated 5,000-entry timeline as the array path', async () => {
    const streamed = await cli(['verify', '--kind', 'chain', '--json', ndjsonPath]);
    const whole = await cli(['verify', '--kind', 'chain', '--json', arrayPath]);
    expect(streamed.code).toBe(0);
    expect(whole.code).toBe(0);
    const s = JSON.parse(streamed.out);
    const w = JSON.parse(whole.out);
    expect(s.verdict).toBe('valid');
    expect(w.verdict).toBe('valid');
    expect(s.entry_count).toBe(5000);
    expect(w.entry_count).toBe(5000);
    expect(s.final_entry_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(s.final_entry_digest).toBe(w.final_entry_digest);
    expect(s.final_entry_digest).toBe(w.entries[4999].entry_digest);
    expect(s.provenance).toEqual(w.provenance);
    expect(s.construction).toBe('-07');
    // streamed: no per-entry list, and the input is described
    expect(s.entries).toBeUndefined();
    expect(s.input).toEqual({ format: 'ndjson', lines: 5000, blank_lines: 0, not_json_lines: 0, not_json_at: [] });
  });

  it('the generated array format equals the NDJSON entries', async () => {
    const gen = await cli(['generate', 'timeline', '--entries', '5000', '--job', 'job-stream', '--format', 'array']);
    expect(JSON.parse(gen.out)).toEqual(JSON.parse(readFileSync(arrayPath, 'utf8')));
  });

  it('shows the per-class provenance counts in the readable report', async () => {
    const r = await cli(['verify', '--kind', 'chain', ndjsonPath]);
    expect(r.code).toBe(0);
    expect(r.lines).toContain('Kind: chain (hash-chained job timeline, NDJSON, streamed)');
    expect(r.lines).toContain('Verdict: VALID');
    expect(r.out).toMatch(/^ {2}entry count +5000$/m);
    expect(r.out).toMatch(/^ {2}OBSERVED VIA GATEWAY +1667 /m);
    expect(r.out).toMatch(/^ {2}LOGGED BY AGENT +1667 /m);
    expect(r.out).toMatch(/^ {2}EXECUTED BY aer1-generate +1666 /m);
    expect(r.out).toContain('input: NDJSON, 5000 lines (0 blank, 0 not JSON)');
  });

  it('counts a line that is not JSON as an invalid entry and continues', async () => {
    const lines = readFileSync(ndjsonPath, 'utf8').trimEnd().split('\n').slice(0, 10);
    const broken = [...lines.slice(0, 4), 'this is not json', '', ...lines.slice(4)].join('\r\n') + '\r\n';
    const r = await cli(['verify', '--kind', 'chain', '--json', tmp.write('broken.ndjson', broken)]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.verdict).toBe('invalid');
    expect(j.reasons).toContain('invalid_entry');
    expect(j.entry_count).toBe(11); // 10 entries + the bad line; the blank line is skipped
    expect(j.input).toMatchObject({ lines: 12, blank_lines: 1, not_json_lines: 1, not_json_at: [5] });
  });

  it('counts a line that is not UTF-8 as an invalid entry', async () => {
    const lines = readFileSync(ndjsonPath, 'utf8').trimEnd().split('\n').slice(0, 3);
    const bytes = Buffer.concat([Buffer.from(lines[0] + '\n'), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from(lines.slice(1).join('\n'))]);
    const r = await cli(['verify', '--kind', 'chain', '--json', tmp.write('bad-line.ndjson', bytes)]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.reasons).toContain('invalid_entry');
    expect(j.input.not_json_at).toEqual([2]);
  });

  it('streams an NDJSON timeline from stdin', async () => {
    const r = await cli(['verify', '--kind', 'chain', '--json', '-'], { stdin: readFileSync(ndjsonPath) });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'valid', entry_count: 5000 });
  });

  it('reads a chain that is not one JSON value as NDJSON', async () => {
    // The first entry of a vector chain on one line, the rest after it.
    const entries = vector('chain-valid-4').input as unknown[];
    const text = '  \n' + entries.map((e) => JSON.stringify(e)).join('\n');
    const r = await cli(['verify', '--kind', 'chain', '--json', tmp.write('four.ndjson', text)]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.final_entry_digest).toBe('ec902ae19c58a225ffaef0adb272fb791f7d23028ed4fdaee3d9ef09fed90984');
    expect(j.input.format).toBe('ndjson');
  });

  it('detects a truncated NDJSON timeline (not closed)', async () => {
    const lines = readFileSync(ndjsonPath, 'utf8').trimEnd().split('\n');
    const r = await cli(['verify', '--kind', 'chain', '--json', tmp.write('cut.ndjson', lines.slice(0, 4999).join('\n'))]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).reasons).toEqual(['not_closed']);
  });
});
