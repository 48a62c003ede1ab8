/**
 * `aer1 verify --kind chain --threads N` on an NDJSON file: the file is cut
 * into ranges verified by worker threads and merged. Whatever the file holds
 * and wherever the cuts fall, the output (JSON and text) must be byte for
 * byte what one thread prints. Worker threads need the compiled CLI, so
 * these tests run bin/aer1 (built by `npm test`'s pretest) as a process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as fc from 'fast-check';
import type { CliIo } from '../../src/cli/io';
import { refBuildTimeline, refEntrySpec } from '../aer1/helpers';
import { TmpDir } from './helpers';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'aer1');
const COMPILED_CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/**
 * The compiled CLI's `run()` in this process (its worker threads load the
 * compiled chain-worker.js beside it): the same code bin/aer1 runs, without a
 * node start-up per call (the suite makes about 120 calls).
 */
async function aer1(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const cli = require(COMPILED_CLI) as { run(argv: readonly string[], io: CliIo): Promise<number> };
  const sink = (into: Buffer[]) => new Writable({ write: (chunk: Buffer, _enc, cb) => (into.push(Buffer.from(chunk)), cb()) });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const code = await cli.run(args, { stdout: sink(out), stderr: sink(err), stdin: Readable.from([]) });
  return { code, out: Buffer.concat(out).toString('utf8'), err: Buffer.concat(err).toString('utf8') };
}

/** One thread and `threads` threads, JSON and text output: all must agree. */
async function expectSameOnThreads(path: string, threads: number[]): Promise<{ code: number | null; err: string; json: Record<string, unknown> | null }> {
  const one = await aer1(['verify', '--kind', 'chain', '--json', '--threads', '1', path]);
  const oneText = await aer1(['verify', '--kind', 'chain', '--threads', '1', path]);
  for (const t of threads) {
    const many = await aer1(['verify', '--kind', 'chain', '--json', '--threads', String(t), path]);
    expect({ threads: t, code: many.code, out: many.out, err: many.err }).toEqual({ threads: t, code: one.code, out: one.out, err: one.err });
    const manyText = await aer1(['verify', '--kind', 'chain', '--threads', String(t), path]);
    expect([manyText.code, manyText.out, manyText.err]).toEqual([oneText.code, oneText.out, oneText.err]);
  }
  return { code: one.code, err: one.err, json: one.out === '' ? null : (JSON.parse(one.out) as Record<string, unknown>) };
}

/** Resolves once process `pid` holds `path` open (Linux /proc), or at once where /proc is not there. */
async function opened(pid: number, path: string): Promise<void> {
  if (!existsSync('/proc/self/fd')) return;
  const real = realpathSync(path);
  for (;;) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      return; // the process has ended
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === real) return;
      } catch {
        // closed meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

const lines = (entries: unknown[]): string[] => entries.map((e) => JSON.stringify(e));

describe('aer1 verify --threads (NDJSON timeline on worker threads)', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'chain-worker.js'))) throw new Error('run `npm run build` first (npm test does)');
  });

  it('a valid timeline: same result on 1 to 8 threads', async () => {
    const path = tmp.write('valid.ndjson', lines(refBuildTimeline(refEntrySpec('job-par', 40))).join('\n') + '\n');
    const r = await expectSameOnThreads(path, [2, 3, 5, 8]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.json).toMatchObject({ verdict: 'valid', entry_count: 40, input: { lines: 40, blank_lines: 0 } });
  });

  it('blank lines, CRLF, white-space-only lines, lines that are not JSON or not UTF-8, no final LF', async () => {
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
    const r = await expectSameOnThreads(path, [2, 3, 4, 6, 9]);
    expect(r.json).toMatchObject({ verdict: 'invalid', entry_count: 32, input: { not_json_lines: 2 } });
  });

  it('a first line without a job_id: the job is the first entry that has one', async () => {
    const t: unknown[] = refBuildTimeline(refEntrySpec('job-late', 12));
    t[0] = { ...(t[0] as object), job_id: '' };
    t[1] = 'just a string';
    const path = tmp.write('late-job.ndjson', lines(t).join('\n'));
    const r = await expectSameOnThreads(path, [2, 3, 7]);
    expect(r.json).toMatchObject({ job_id: 'job-late' });
  });

  it('a file of blank lines only: "is empty" (exit 2) on any number of threads', async () => {
    const r = await expectSameOnThreads(tmp.write('blank.ndjson', '\n \n\t\r\n'), [2, 3]);
    expect([r.code, r.json]).toEqual([2, null]);
    expect(r.err).toMatch(/blank\.ndjson is empty/);
  });

  it('a segment of blank lines only, between entries', async () => {
    const t = lines(refBuildTimeline(refEntrySpec('job-gap', 6)));
    const path = tmp.write('gap.ndjson', [...t.slice(0, 3), ...Array<string>(400).fill('   '), ...t.slice(3)].join('\n') + '\n');
    const r = await expectSameOnThreads(path, [2, 3, 4, 8]);
    expect(r.json).toMatchObject({ verdict: 'valid', entry_count: 6, input: { blank_lines: 400 } });
  });

  it('random damage, random thread counts: always the one-thread output', async () => {
    const damage = fc.constantFrom('close', 'seq', 'job', 'prov', 'bytes', 'prev', 'blank', 'junk', 'array');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.array(fc.tuple(fc.nat(), damage), { maxLength: 5 }), fc.integer({ min: 2, max: 8 }), async (n, faults, threads) => {
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
        await expectSameOnThreads(path, [threads]);
      }),
      { numRuns: 15 },
    );
  });

  it('--commitment works the same on threads', async () => {
    const t = refBuildTimeline(refEntrySpec('job-commit', 20));
    const path = tmp.write('commit.ndjson', lines(t).join('\n') + '\n');
    const one = await aer1(['verify', '--kind', 'chain', '--json', '--threads', '1', path]);
    const digest = (JSON.parse(one.out) as { final_entry_digest: string }).final_entry_digest;
    const c = tmp.write('commitment.json', { job_id: 'job-commit', final_entry_digest: digest, entry_count: 20, published_at: '2026-10-02T08:00:00Z' });
    const a = await aer1(['verify', '--kind', 'chain', '--json', '--threads', '1', '--commitment', c, path]);
    const b = await aer1(['verify', '--kind', 'chain', '--json', '--threads', '4', '--commitment', c, path]);
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
      // Once the verifier has the file open, keep writing to it for as long as the verification runs
      // (a write before the open is a longer file, not a change while it is read).
      await opened(child.pid!, path);
      appendFileSync(path, '{"seq":0}\n');
      const writer = setInterval(() => appendFileSync(path, '{"seq":0}\n'), 50);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearInterval(writer);
      expect({ threads, code, out, err: err.trim() }).toEqual({ threads, code: 2, out: '', err: `aer1: ${path} changed while it was read: verify a copy that is not being written` });
    }
  }, 60_000);

  it('refuses a bad --threads value with exit 2 and a one-line reason', async () => {
    const path = tmp.write('small.ndjson', lines(refBuildTimeline(refEntrySpec('job-x', 2))).join('\n'));
    for (const v of ['0', '-1', '1.5', 'two', '65']) {
      const r = await aer1(['verify', '--kind', 'chain', '--threads', v, path]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--threads takes a whole number from 1 to 64/);
      expect(r.out).toBe('');
    }
  });

  it('a file that is not there: exit 2, no stack trace', async () => {
    const r = await aer1(['verify', '--kind', 'chain', '--threads', '4', tmp.path('missing.ndjson')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/missing\.ndjson/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});
