/**
 * `aer1 verify --kind chain --threads N` on an NDJSON file: the file is cut
 * into ranges verified by worker threads and merged. Whatever the file holds
 * and wherever the cuts fall, the output (JSON and text) must be byte for
 * byte what one thread prints. Worker threads need the compiled CLI, so
 * these tests run bin/aer1 (built by `npm test`'s pretest) as a process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as fc from 'fast-check';
import { refBuildTimeline, refEntrySpec } from '../aer1/helpers';
import { TmpDir } from './helpers';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'aer1');

function aer1(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** One thread and `threads` threads, JSON and text output: all must agree. */
function expectSameOnThreads(path: string, threads: number[]): { code: number | null; err: string; json: Record<string, unknown> | null } {
  const one = aer1(['verify', '--kind', 'chain', '--json', '--threads', '1', path]);
  const oneText = aer1(['verify', '--kind', 'chain', '--threads', '1', path]);
  for (const t of threads) {
    const many = aer1(['verify', '--kind', 'chain', '--json', '--threads', String(t), path]);
    expect({ threads: t, code: many.code, out: many.out, err: many.err }).toEqual({ threads: t, code: one.code, out: one.out, err: one.err });
    const manyText = aer1(['verify', '--kind', 'chain', '--threads', String(t), path]);
    expect([manyText.code, manyText.out, manyText.err]).toEqual([oneText.code, oneText.out, oneText.err]);
  }
  return { code: one.code, err: one.err, json: one.out === '' ? null : (JSON.parse(one.out) as Record<string, unknown>) };
}

const lines = (entries: unknown[]): string[] => entries.map((e) => JSON.stringify(e));

describe('aer1 verify --threads (NDJSON timeline on worker threads)', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'chain-worker.js'))) throw new Error('run `npm run build` first (npm test does)');
  });

  it('a valid timeline: same result on 1 to 8 threads', () => {
    const path = tmp.write('valid.ndjson', lines(refBuildTimeline(refEntrySpec('job-par', 40))).join('\n') + '\n');
    const r = expectSameOnThreads(path, [2, 3, 5, 8]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.json).toMatchObject({ verdict: 'valid', entry_count: 40, input: { lines: 40, blank_lines: 0 } });
  });

  it('blank lines, CRLF, white-space-only lines, lines that are not JSON or not UTF-8, no final LF', () => {
    const t = lines(refBuildTimeline(refEntrySpec('job-mess', 30)));
    const parts: (string | Buffer)[] = [];
    t.forEach((l, i) => {
      if (i % 4 === 0) parts.push('\n');
      if (i % 7 === 3) parts.push(' \t \r\n');
      if (i === 11) parts.push('{"not json\n');
      if (i === 17) parts.push(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
      parts.push(l + (i % 5 === 0 ? '\r\n' : '\n'));
    });
    const body = Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p))));
    const path = tmp.write('mess.ndjson', body.subarray(0, body.length - 1)); // no LF after the last line
    const r = expectSameOnThreads(path, [2, 3, 4, 6, 9]);
    expect(r.json).toMatchObject({ verdict: 'invalid', entry_count: 32, input: { not_json_lines: 2 } });
  });

  it('a first line without a job_id: the job is the first entry that has one', () => {
    const t: unknown[] = refBuildTimeline(refEntrySpec('job-late', 12));
    t[0] = { ...(t[0] as object), job_id: '' };
    t[1] = 'just a string';
    const path = tmp.write('late-job.ndjson', lines(t).join('\n'));
    const r = expectSameOnThreads(path, [2, 3, 7]);
    expect(r.json).toMatchObject({ job_id: 'job-late' });
  });

  it('a file of blank lines only: "is empty" (exit 2) on any number of threads', () => {
    const r = expectSameOnThreads(tmp.write('blank.ndjson', '\n \n\t\r\n'), [2, 3]);
    expect([r.code, r.json]).toEqual([2, null]);
    expect(r.err).toMatch(/blank\.ndjson is empty/);
  });

  it('a segment of blank lines only, between entries', () => {
    const t = lines(refBuildTimeline(refEntrySpec('job-gap', 6)));
    const path = tmp.write('gap.ndjson', [...t.slice(0, 3), ...Array<string>(400).fill('   '), ...t.slice(3)].join('\n') + '\n');
    const r = expectSameOnThreads(path, [2, 3, 4, 8]);
    expect(r.json).toMatchObject({ verdict: 'valid', entry_count: 6, input: { blank_lines: 400 } });
  });

  it('random damage, random thread counts: always the one-thread output', () => {
    const damage = fc.constantFrom('close', 'seq', 'job', 'prov', 'bytes', 'prev', 'blank', 'junk', 'array');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.tuple(fc.nat(), damage), { maxLength: 5 }), fc.integer({ min: 2, max: 8 }), (n, faults, threads) => {
        const out: string[] = lines(refBuildTimeline(refEntrySpec('job-rand', n)));
        for (const [at, d] of faults) {
          const i = at % out.length;
          if (d === 'blank' || d === 'junk' || d === 'array') {
            out[i] = d === 'blank' ? '' : d === 'junk' ? '}{' : '[1]';
            continue;
          }
          if (!out[i].startsWith('{')) continue; // already replaced by a line that is not an entry
          const e = JSON.parse(out[i]) as Record<string, unknown>;
          if (d === 'close') e.close = true;
          else if (d === 'seq') e.seq = 1000;
          else if (d === 'job') e.job_id = 'other';
          else if (d === 'prov') e.provenance_class = 'NOT A CLASS';
          else if (d === 'bytes') e.canonical_bytes = 'AAAA';
          else if (d === 'prev') e.prev_digest = '1'.repeat(64);
          out[i] = JSON.stringify(e);
        }
        const path = tmp.write(`rand-${n}-${threads}.ndjson`, out.join('\n') + '\n');
        expectSameOnThreads(path, [threads]);
      }),
      { numRuns: 15 },
    );
  });

  it('--commitment works the same on threads', () => {
    const t = refBuildTimeline(refEntrySpec('job-commit', 20));
    const path = tmp.write('commit.ndjson', lines(t).join('\n') + '\n');
    const one = aer1(['verify', '--kind', 'chain', '--json', '--threads', '1', path]);
    const digest = (JSON.parse(one.out) as { final_entry_digest: string }).final_entry_digest;
    const c = tmp.write('commitment.json', { job_id: 'job-commit', final_entry_digest: digest, entry_count: 20, published_at: '2026-10-02T08:00:00Z' });
    const a = aer1(['verify', '--kind', 'chain', '--json', '--threads', '1', '--commitment', c, path]);
    const b = aer1(['verify', '--kind', 'chain', '--json', '--threads', '4', '--commitment', c, path]);
    expect(a.code).toBe(0);
    expect(b).toEqual(a);
    expect(JSON.parse(b.out)).toMatchObject({ kind: 'commitment', verdict: 'valid', binding: true });
  });

  it('a file written to while it is verified: exit 2 "changed while it was read" on one thread and on several (found by a trial)', async () => {
    const gen = spawnSync(process.execPath, [BIN, 'generate', 'timeline', '--entries', '150000', '--job', 'job-growing'], { maxBuffer: 256 * 1024 * 1024 });
    const path = tmp.path('growing.ndjson');
    for (const threads of ['1', '2']) {
      writeFileSync(path, gen.stdout);
      const child = spawn(process.execPath, [BIN, 'verify', '--kind', 'chain', '--json', '--threads', threads, path]);
      let out = '';
      let err = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      // Keep writing to the file for as long as the verification runs.
      const writer = setInterval(() => appendFileSync(path, '{"seq":0}\n'), 50);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearInterval(writer);
      expect({ threads, code, out, err: err.trim() }).toEqual({ threads, code: 2, out: '', err: `aer1: ${path} changed while it was read: verify a copy that is not being written` });
    }
  }, 60_000);

  it('refuses a bad --threads value with exit 2 and a one-line reason', () => {
    const path = tmp.write('small.ndjson', lines(refBuildTimeline(refEntrySpec('job-x', 2))).join('\n'));
    for (const v of ['0', '-1', '1.5', 'two', '65']) {
      const r = aer1(['verify', '--kind', 'chain', '--threads', v, path]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--threads takes a whole number from 1 to 64/);
      expect(r.out).toBe('');
    }
  });

  it('a file that is not there: exit 2, no stack trace', () => {
    const r = aer1(['verify', '--kind', 'chain', '--threads', '4', tmp.path('missing.ndjson')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/missing\.ndjson/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});
