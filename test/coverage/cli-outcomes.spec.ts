/**
 * `aer1 coverage --outcomes` (issue 18) on the files of examples/outcomes
 * (the README's walk-through): the payment confirmed is full coverage
 * (exit 0); confirmed then reversed is a contradiction (exit 1); a report
 * whose commitment does not verify is not used, and said so.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSignerKey, signNote } from '../../src/core/tlog';
import { cli, TmpDir } from '../cli/helpers';

const EX = join(__dirname, '../../examples/outcomes');
// The example's commitment attested by a witness key this test trusts (issue 15: a self-asserted one alone is never full coverage).
const witness = generateSignerKey('witness.example');
const note = join(tmpdir(), `aer1-outcomes-commitment-${process.pid}.note`);
writeFileSync(note, signNote(`${readFileSync(join(EX, 'commitment.json'), 'utf8').trim()}\n`, [witness.signer]));
const base = ['coverage', '--plan', join(EX, 'plan.json'), '--timeline', join(EX, 'timeline.json'), '--commitment', note, '--trusted-key', witness.verifierKey, '--receipts', join(EX, 'receipts.ndjson')];
const line = (f: string): string => JSON.stringify(JSON.parse(readFileSync(join(EX, f), 'utf8')));

describe('aer1 coverage --outcomes', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  it('the payment system confirmed within the window: full coverage, exit 0', async () => {
    const r = await cli([...base, '--outcomes', tmp.write('settled.ndjson', line('outcome-settled.json') + '\n')]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain('FULL COVERAGE');
    expect(r.out).toContain('outcome CONFIRMED (payment.settled from PAYMENTS within 3600 s)');
  });

  it('settled, then reversed (file order = ledger order): contradicted, exit 1; the same files without --outcomes: unconfirmed', async () => {
    const file = tmp.write('both.ndjson', `${line('outcome-settled.json')}\n${line('outcome-reversed.json')}\n`);
    const r = await cli([...base, '--outcomes', file, '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.out);
    expect(out.outcomes).toEqual({ used: 2, rejected: [] });
    expect(out.report.actions[1].outcome.status).toBe('contradicted');
    expect(out.report.findings.map((f: { code: string }) => f.code)).toEqual(['outcome_contradicted']);
    const none = await cli([...base, '--json']);
    expect(JSON.parse(none.out).report.actions[1].outcome.status).toBe('unconfirmed');
    expect(JSON.parse(none.out).outcomes).toBeUndefined();
  });

  it('an outcome report whose commitment does not verify is not used, and named', async () => {
    const bad = JSON.parse(line('outcome-settled.json')) as Record<string, string>;
    bad.output_hash = 'sha256:' + '0'.repeat(64);
    const r = await cli([...base, '--outcomes', tmp.write('bad.ndjson', JSON.stringify(bad) + '\n')]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('outcome reports: 0 used, 1 rejected (do not verify): #1 output_hash_mismatch');
    expect(r.out).toContain('outcome UNCONFIRMED');
    expect((await cli(['coverage', '--check-report', join(EX, 'plan.json'), '--outcomes', 'x'])).code).toBe(2);
  });
});

describe('aer1 coverage text: the findings in the shared headline words, never plain "covered" for an outcome not confirmed', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  it('contradicted: the first line names the finding as the page does; the action row says outcome CONTRADICTED, not covered', async () => {
    const file = tmp.write('both.ndjson', `${line('outcome-settled.json')}\n${line('outcome-reversed.json')}\n`);
    const r = await cli([...base, '--outcomes', file]);
    expect(r.code).toBe(1);
    const first = r.out.split('\n')[0];
    expect(first).toMatch(/^coverage: job \S+: 1 FINDING: pay: outcome CONTRADICTED \(PAYMENTS reports \S+\) \(2\/2 expected actions covered\)$/);
    expect(r.out).not.toContain('FINDING(S)');
    expect(r.out).not.toMatch(/^ {2}covered +pay /m);
    expect(r.out).toMatch(/^ {2}✗ outcome CONTRADICTED: pay \(send_payment\): the call is recorded/m);
    expect(r.out).toMatch(/^coverage: 2\/2 \(100(\.0)?%\); 1 of them with the required outcome not confirmed \(pay: outcome CONTRADICTED\)$/m);
  });

  it('no outcome report: UNCONFIRMED in words, and the headline names it', async () => {
    const r = await cli(base);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^ {2}✗ outcome UNCONFIRMED: pay /m);
    expect(r.out).not.toMatch(/^ {2}covered +pay /m);
    expect(r.out.split('\n')[0]).toContain('1 FINDING: pay: outcome UNCONFIRMED');
  });

  it('--check-report prints what the report concludes under the digest line', async () => {
    const file = tmp.write('both2.ndjson', `${line('outcome-settled.json')}\n${line('outcome-reversed.json')}\n`);
    const out = JSON.parse((await cli([...base, '--outcomes', file, '--json'])).out) as { digest: string; report: unknown };
    const saved = tmp.write('report.json', JSON.stringify({ report_id: 'r-1', digest: out.digest, report: out.report }));
    const r = await cli(['coverage', '--check-report', saved]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('coverage report r-1: digest MATCHES');
    expect(r.out).toMatch(/^ {2}the report concludes: Coverage: 1 FINDING: pay: outcome CONTRADICTED /m);
    const j = JSON.parse((await cli(['coverage', '--check-report', saved, '--json'])).out) as Record<string, unknown>;
    expect(j.matches).toBe(true);
    expect(j.result).toBe('findings');
    expect(String(j.headline)).toMatch(/^Coverage: 1 FINDING: pay: outcome CONTRADICTED/);
  });

  it('--check-report given an evidence pack: named as one, with the command that reads it (exit 2)', async () => {
    const pack = tmp.write('report.aer1pack.jsonl', `${JSON.stringify({ member: 'header', format: 'aer1-evidence-pack/1' })}\n${JSON.stringify({ member: 'manifest' })}\n`);
    const r = await cli(['coverage', '--check-report', pack]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('is an evidence pack (aer1-evidence-pack/1), not a coverage report: use aer1 verify-pack FILE --vkey LOG_VKEY');
    expect(r.err).not.toContain('not JSON');
  });
});
