import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { CoverageCliOutput, runCoverage } from '../../src/cli/commands/coverage';
import { CliError, CliIo } from '../../src/cli/io';
import { run } from '../../src/cli/main';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, receiptFor } from './fixtures';
import { generateSignerKey, signNote } from '../../src/core/tlog';

const WITNESS = generateSignerKey('witness.test');

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

function io(): CliIo & { out: Capture; err: Capture } {
  const out = new Capture();
  const err = new Capture();
  return { stdout: out, stderr: err, stdin: Readable.from([]), out, err };
}

const EXAMPLES = join(__dirname, '../../examples/coverage');
const ex = (f: string): string => join(EXAMPLES, f);

describe('aer1 coverage', () => {
  let dir: string;
  const write = (name: string, content: unknown): string => {
    const p = join(dir, name);
    writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
    return p;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-coverage-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Issue 15 changed this: the plain commitment.json is self-asserted (a finding); the same commitment signed by
  // the example witness key (commitment.note) with --trusted-key is attested and gives full coverage.
  it('the examples: the plain commitment file is self-asserted: a finding, exit 1', async () => {
    const s = io();
    const code = await runCoverage({ plan: ex('plan.json'), timeline: ex('timeline.json'), commitment: ex('commitment.json'), receipts: ex('receipts.ndjson'), json: true }, s);
    expect(code).toBe(1);
    const out = JSON.parse(s.out.text) as CoverageCliOutput;
    expect(out.report.result).toBe('findings');
    expect(out.report.findings.map((f) => f.code)).toEqual(['commitment_self_asserted']);
    expect(out.report.integrity.commitment).toMatchObject({ state: 'binding', attestation: 'self_asserted' });
  });

  it('the examples: the signed commitment note with --trusted-key: attested, full coverage, exit 0', async () => {
    const s = io();
    const vkey = readFileSync(ex('witness.vkey'), 'utf8').trim();
    const code = await runCoverage({ plan: ex('plan.json'), timeline: ex('timeline.json'), commitment: ex('commitment.note'), trustedKey: [vkey], receipts: ex('receipts.ndjson'), json: true }, s);
    expect(code).toBe(0);
    const out = JSON.parse(s.out.text) as CoverageCliOutput;
    expect(out.report.result).toBe('full_coverage');
    expect(out.report.actions.map((a) => a.status)).toEqual(['covered', 'covered', 'covered', 'covered', 'covered']);
    expect(out.report.integrity.commitment).toMatchObject({ state: 'binding', attestation: 'attested_by' });
    expect(out.report.integrity.commitments[0]).toMatchObject({ attestation: 'attested_by', attested_by: ['witness.example'] });
    expect(out.receipts).toEqual({ used: 5, rejected: [] });
    expect(out.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(out.report.plan.registered_after_execution_began).toBeNull();
  });

  it('the examples: the truncated timeline against the original commitment exits 1 with truncation detected (text output)', async () => {
    const r = await cliRun(['coverage', '--plan', ex('plan.json'), '--timeline', ex('timeline-truncated.json'), '--commitment', ex('commitment.json'), '--receipts', ex('receipts.ndjson')]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^coverage: job job-kyc-42: 4 FINDINGS: TRUNCATION DETECTED \(commitment #1\); COMMITMENT NON BINDING; decide: MISSING; and 1 more \(3\/5 expected actions covered\)$/m);
    expect(r.out).toContain('endpoint commitment: non_binding; truncation detected');
    expect(r.out).toMatch(/^ {2}missing {7}decide \(record_decision\) evidence seq -$/m);
    expect(r.out).toMatch(/^ {2}missing {7}notify \(notify_customer\) evidence seq -$/m);
    expect(r.out).toContain('truncation_detected:');
  });

  it('the rich eight-entry truncation as JSON, without receipts: outcomes unknown, the cut actions missing', async () => {
    const job = 'job-cli-8';
    const full = buildTimeline(job, EIGHT_STEPS);
    const s = io();
    const code = await runCoverage(
      { plan: write('p8.json', eightStepPlan(job)), timeline: write('t6.json', buildTimeline(job, EIGHT_STEPS.slice(0, 6))), commitment: write('c8.json', commitmentFor(full)), json: true },
      s,
    );
    expect(code).toBe(1);
    const out = JSON.parse(s.out.text) as CoverageCliOutput;
    expect(out.report.actions.map((a) => a.status)).toEqual(['covered', 'covered', 'covered', 'covered', 'covered', 'covered', 'missing', 'missing']);
    expect(out.report.integrity.commitment).toMatchObject({ truncation: 'detected', missing_entries: 2 });
    expect(out.report.counts.unknown_outcome_evidence).toBe(6);
  });

  it('reads NDJSON timelines, {timeline, commitment} documents, and plans as the API returns them', async () => {
    const job = 'job-cli-nd';
    const plan = { job_id: job, title: 't', expected_actions: [{ action_id: 'a', tool: 'fetch_customer' }] };
    const tl = buildTimeline(job, [{ tool: 'fetch_customer' }]);
    const nd = write('t.ndjson', tl.map((e) => JSON.stringify(e)).join('\n') + '\n');
    // Issue 15: full coverage needs an attested (or ledger-issued) commitment: a signed note and --trusted-key.
    const note = write('c.note', signNote(`${JSON.stringify(commitmentFor(tl))}\n`, [WITNESS.signer]));
    expect(await runCoverage({ plan: write('p.json', plan), timeline: nd, commitment: note, trustedKey: [WITNESS.verifierKey] }, io())).toBe(0);
    expect(await runCoverage({ plan: write('p.json', plan), timeline: nd, commitment: write('c.json', commitmentFor(tl)) }, io())).toBe(1);
    // The corpus form {timeline, commitment} carries an unsigned commitment: self-asserted, exit 1 (was 0 before issue 15).
    const both = write('tc.json', { timeline: tl, commitment: commitmentFor(tl) });
    expect(await runCoverage({ plan: write('p.json', plan), timeline: both }, io())).toBe(1);
    // A version document from GET /api/plans/{id}/versions/{n}: digest checked.
    const { validatePlan, planDigest } = await import('../../src/core/coverage/plan');
    const v = validatePlan(plan);
    if (!v.ok) throw new Error('plan');
    const versionDoc = { plan_id: 'p-1', version: 2, plan: { ...plan, unplanned: 'flag' }, digest: planDigest(v.plan), registered_at: '2026-10-01T00:00:00Z' };
    const s = io();
    expect(await runCoverage({ plan: write('pv.json', versionDoc), timeline: both, json: true }, s)).toBe(1);
    expect((JSON.parse(s.out.text) as CoverageCliOutput).report.findings.map((f) => f.code)).toEqual(['commitment_self_asserted']);
    expect((JSON.parse(s.out.text) as CoverageCliOutput).report.plan).toMatchObject({ plan_id: 'p-1', version: 2, digest: versionDoc.digest });
    await expect(runCoverage({ plan: write('pv2.json', { ...versionDoc, digest: '0'.repeat(64) }), timeline: both }, io())).rejects.toThrow(/does not match/);
  });

  it('uses only receipts that verify, for outcomes', async () => {
    const job = 'job-cli-r';
    const plan = { job_id: job, title: 't', expected_actions: [{ action_id: 'a', tool: 'pay' }] };
    const tl = buildTimeline(job, [{ tool: 'pay' }]);
    const failed = receiptFor(tl[0], 'card_declined');
    const tampered = { ...receiptFor(tl[0]), canonical_bytes: Buffer.from('x').toString('base64') };
    const s = io();
    const code = await runCoverage({ plan: write('p.json', plan), timeline: write('t.json', tl), commitment: write('c.json', commitmentFor(tl)), receipts: write('r.json', [tampered, failed]), json: true }, s);
    expect(code).toBe(1);
    const out = JSON.parse(s.out.text) as CoverageCliOutput;
    expect(out.report.actions[0].status).toBe('failed');
    expect(out.receipts.used).toBe(1);
    expect(out.receipts.rejected).toHaveLength(1);
  });

  it('exits 2 on usage errors and invalid plans', async () => {
    const bad = await cliRun(['coverage', '--plan', write('bad.json', { job_id: 'j', title: 't', expected_actions: [{ action_id: 'a', tool: 'x', min_count: 0 }] }), '--timeline', ex('timeline.json')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^aer1: .*is not a valid plan: expected_actions\[0\]\.min_count: min_count must be an integer >= 1, got 0\n$/);
    expect((await cliRun(['coverage', '--plan', ex('plan.json')])).code).toBe(2);
    expect((await cliRun(['coverage', '--timeline', ex('timeline.json')])).code).toBe(2);
    const other = await cliRun(['coverage', '--plan', ex('plan.json'), '--timeline', write('o.json', buildTimeline('other', [{ tool: 'x' }]))]);
    expect(other.code).toBe(2);
    expect(other.err).toContain('the timeline is job other, the plan covers job job-kyc-42');
    expect((await cliRun(['coverage', '--plan', join(dir, 'nope.json'), '--timeline', ex('timeline.json')])).code).toBe(2);
    await expect(runCoverage({ plan: ex('plan.json') }, io())).rejects.toBeInstanceOf(CliError);
  });

  it('the example plan file is what the API accepts', () => {
    const plan = JSON.parse(readFileSync(ex('plan.json'), 'utf8')) as { job_id: string };
    expect(plan.job_id).toBe('job-kyc-42');
  });

  it('--commitment repeated: a forged binding commitment does not hide the witness one that proves truncation, in either order (integrity issue)', async () => {
    const job = 'job-cli-forged';
    const six = buildTimeline(job, EIGHT_STEPS.slice(0, 6));
    const plan = write('p6.json', { job_id: job, title: 'six', expected_actions: EIGHT_STEPS.slice(0, 6).map((x) => ({ action_id: x.tool, tool: x.tool })) });
    const timeline = write('t6f.json', six);
    const witness = write('c8w.json', { ...commitmentFor(buildTimeline(job, EIGHT_STEPS)), witness: 'witness.example' });
    const forged = write('c6f.json', { ...commitmentFor(six), witness: 'witness.example' });
    const alone = io();
    // Issue 15: alone the forged one binds, but it is self-asserted: a finding, exit 1 (was 0, full coverage).
    expect(await runCoverage({ plan, timeline, commitment: [forged], json: true }, alone)).toBe(1);
    expect((JSON.parse(alone.out.text) as CoverageCliOutput).report.findings.map((f) => f.code)).toEqual(['commitment_self_asserted']);
    for (const order of [[witness, forged], [forged, witness]]) {
      const s = io();
      expect(await runCoverage({ plan, timeline, commitment: order, json: true }, s)).toBe(1);
      const out = JSON.parse(s.out.text) as CoverageCliOutput;
      expect(out.report.integrity.commitment).toMatchObject({ state: 'non_binding', truncation: 'detected', missing_entries: 2 });
      expect(out.report.integrity.commitments.map((c) => [c.commitment, c.outcome])).toEqual(order.map((f, i) => [`#${i + 1}`, f === witness ? 'truncation_detected' : 'binding']));
      expect(out.report.findings.map((f) => f.code)).toEqual(['truncation_detected', 'commitment_non_binding']);
    }
    const r = await cliRun(['coverage', '--plan', plan, '--timeline', timeline, '--commitment', forged, '--commitment', witness]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('endpoint commitment: non_binding; truncation detected');
    expect(r.out).toMatch(/^ {2}commitment #2: truncation_detected, self-asserted \(contradicts the timeline\)$/m);
  });
});

async function cliRun(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const s = io();
  const code = await run(argv, s);
  return { code, out: s.out.text, err: s.err.text };
}
