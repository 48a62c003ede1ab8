/**
 * `aer1 coverage ... --pdf FILE` and `aer1 coverage --check-report FILE
 * --pdf OUT`: the report written as a PDF; its text holds the statuses.
 * Run in-process and once through the built `bin/aer1` (dist).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { CoverageCliOutput } from '../../src/cli/commands/coverage';
import { CliIo } from '../../src/cli/io';
import { run } from '../../src/cli/main';
import { pdfTextOf } from '../helpers/pdf-text';

class Capture extends Writable {
  private readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    cb();
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = new Capture();
  const err = new Capture();
  const io: CliIo = { stdout: out, stderr: err, stdin: Readable.from([]) };
  const code = await run(argv, io);
  return { code, out: out.text, err: err.text };
}

const ROOT = join(__dirname, '../..');
const ex = (f: string): string => join(ROOT, 'examples/coverage', f);
/** The example's commitment as a note signed by the example witness, trusted: full coverage needs an attested (or ledger-issued) binding commitment (issue 15). */
const attested = (): string[] => ['--commitment', ex('commitment.note'), '--trusted-key', readFileSync(ex('witness.vkey'), 'utf8').trim()];

describe('aer1 coverage --pdf', () => {
  // The PDF text is extracted in a child process (pdf-text.cjs): seconds on a busy machine.
  jest.setTimeout(60_000);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-coverage-pdf-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the offline report as a PDF: statuses, digest, "none (offline report)" and no checkpoint; stdout keeps the text report', async () => {
    const file = join(dir, 'truncated.pdf');
    const r = await cli(['coverage', '--plan', ex('plan.json'), '--timeline', ex('timeline-truncated.json'), '--commitment', ex('commitment.json'), '--receipts', ex('receipts.ndjson'), '--pdf', file]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^coverage: job job-kyc-42: 4 FINDINGS: TRUNCATION DETECTED \(commitment #1\); COMMITMENT NON BINDING; decide: MISSING; and 1 more \(3\/5 expected actions covered\)$/m);
    expect(r.err).toMatch(/^aer1: coverage report PDF written to .*truncated\.pdf \(\d+ bytes\)$/m);
    const digest = /^report digest: ([0-9a-f]{64})$/m.exec(r.out)![1];
    const { text } = await pdfTextOf(readFileSync(file));
    expect(text).toContain('Coverage report: job job-kyc-42');
    expect(text).toMatch(/COVERED\s+fetch \(tool fetch_customer\)/);
    expect(text).toMatch(/MISSING\s+decide \(tool record_decision\)/);
    expect(text).toMatch(/MISSING\s+notify \(tool notify_customer\)/);
    expect(text).toContain('Endpoint commitment: TRUNCATION DETECTED');
    expect(text).toContain(`Report digest: ${digest}`);
    expect(text).not.toContain('recomputed: matches');
    expect(text).toContain('Issued: offline (aer1 coverage): not recorded in a ledger');
    expect(text).toContain('Public URL: none (offline report)');
    expect(text).toContain('Checkpoint: not yet proven against a signed checkpoint');
    expect(text).toContain('Recorded by: not checked (offline: files carry no keys)');
  });

  it('--check-report --pdf: a server report drawn offline, its digest recomputed (and a tampered one says DOES NOT MATCH)', async () => {
    const offline = await cli(['coverage', '--plan', ex('plan.json'), '--timeline', ex('timeline.json'), ...attested(), '--receipts', ex('receipts.ndjson'), '--json']);
    const o = JSON.parse(offline.out) as CoverageCliOutput;
    const served = { report_id: '7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', url: 'https://ledger.example/coverage/7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', issued_at: '2026-10-01T12:00:00.000Z', digest: o.digest, digest_verified: true, position: 12, report: o.report };
    const good = join(dir, 'served.json');
    writeFileSync(good, JSON.stringify(served));
    const pdf = join(dir, 'served.pdf');
    const r = await cli(['coverage', '--check-report', good, '--pdf', pdf]);
    expect(r.code).toBe(0);
    const { text } = await pdfTextOf(readFileSync(pdf));
    expect(text).toContain('Coverage: FULL (5/5 expected actions covered)');
    expect(text).toContain(`Report digest: ${o.digest} (recomputed: matches)`);
    expect(text).toContain('Public URL: https://ledger.example/coverage/7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6');
    for (const a of ['fetch', 'screen', 'score', 'decide', 'notify']) expect(text).toMatch(new RegExp(`COVERED\\s+${a} \\(tool`));

    const tampered = join(dir, 'tampered.json');
    writeFileSync(tampered, JSON.stringify({ ...served, report: { ...o.report, result: 'findings' } }));
    const bad = await cli(['coverage', '--check-report', tampered, '--pdf', join(dir, 'tampered.pdf')]);
    expect(bad.code).toBe(1);
    expect((await pdfTextOf(readFileSync(join(dir, 'tampered.pdf')))).text).toContain('Report digest: recomputed, DOES NOT MATCH');
  });

  it('usage errors exit 2 and write nothing', async () => {
    const r = await cli(['coverage', '--plan', ex('plan.json'), '--timeline', ex('timeline.json'), '--pdf', '-']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--pdf needs a file name');
    const notReport = join(dir, 'not-report.json');
    writeFileSync(notReport, JSON.stringify({ digest: 'x', report: { format: 'other' } }));
    const out = join(dir, 'never.pdf');
    const r2 = await cli(['coverage', '--check-report', notReport, '--pdf', out]);
    expect(r2.code).toBe(2);
    expect(existsSync(out)).toBe(false);
    // An error answer saved by curl (the read budget ran out) is named as such, not as "not a coverage report".
    const limited = join(dir, 'rate-limited.json');
    writeFileSync(limited, JSON.stringify({ error: 'rate_limited', message: 'public read budget spent: try again in 42 s', retry_after_seconds: 42 }));
    const r4 = await cli(['coverage', '--check-report', limited]);
    expect(r4.code).toBe(2);
    expect(r4.err).toBe(`aer1: ${limited} is a saved error answer, not a coverage report: the server answered rate_limited: public read budget spent: try again in 42 s\n`);
    const r3 = await cli(['coverage', '--plan', ex('plan.json'), '--timeline', ex('timeline.json'), '--pdf', join(dir, 'no-such-dir', 'x.pdf')]);
    expect(r3.code).toBe(2);
    expect(r3.err).toMatch(/cannot write .*x\.pdf/);
  });

  it('through the built bin/aer1 (dist)', async () => {
    const file = join(dir, 'bin.pdf');
    const r = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/aer1'), 'coverage', '--plan', ex('plan.json'), '--timeline', ex('timeline.json'), ...attested(), '--receipts', ex('receipts.ndjson'), '--pdf', file]);
    expect(r.stdout).toMatch(/^coverage: job job-kyc-42: FULL COVERAGE$/m);
    expect((await pdfTextOf(readFileSync(file))).text).toContain('Coverage: FULL (5/5 expected actions covered)');
  }, 60_000);
});
