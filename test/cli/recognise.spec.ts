/**
 * Issue 27: a file that is not what the command reads is named, with the
 * command to use (exit 2), instead of being judged as a receipt with eight
 * missing_field reasons; a server's saved error answer is named as such by
 * every command; a JSON syntax error names its line and column.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSignerKey } from '../../src/core/tlog';
import { FakeLog } from './fake-log';
import { cli, TmpDir, vector } from './helpers';

const ex = (name: string): string => join(__dirname, '../../examples', name);
const ORIGIN = 'ledger.example.test/aer1';
const key = generateSignerKey(ORIGIN);

describe('aer1 verify: files that are not AER-1 documents', () => {
  const tmp = new TmpDir();
  const log = new FakeLog(ORIGIN, key.signer).appendTimeline(3);
  const checkpoint = log.publish();
  afterAll(() => tmp.cleanup());

  const cases: [string, () => string, string][] = [
    ['a coverage plan', () => ex('coverage/plan.json'), 'is a coverage plan, not an AER-1 document: use aer1 coverage --plan FILE'],
    ['a JSON log proof file', () => tmp.write('p.proof.json', log.jsonProof(1)), 'is a log proof file, not an AER-1 document: use aer1 log verify-proof FILE --vkey LOG_VKEY'],
    ['a c2sp.org/tlog-proof file', () => tmp.write('p.tlog-proof', log.tlogProof(1)), 'is a log proof file (c2sp.org/tlog-proof@v1), not an AER-1 document: use aer1 log verify-proof FILE'],
    ['an evidence pack', () => tmp.write('pack.jsonl', '{"member":"header","format":"aer1-evidence-pack/1"}\n{"member":"event/1","leaf":"x"}\n'), 'is an evidence pack (aer1-evidence-pack/1), not an AER-1 document: use aer1 verify-pack FILE --vkey LOG_VKEY'],
    ['a coverage report (its content)', () => tmp.write('report.json', { format: 'aer1-coverage-report/1', plan_digest: 'x' }), 'is a coverage report, not an AER-1 document: check the server\'s answer (GET /api/coverage-reports/{id}) with aer1 coverage --check-report'],
    ['a checkpoint', () => tmp.write('checkpoint.note', checkpoint), 'is a log checkpoint (a signed note), not an AER-1 document'],
    ['a signed commitment note', () => ex('coverage/commitment.note'), 'is a signed endpoint commitment note, not a timeline: give it with the timeline: aer1 verify --kind chain --commitment FILE TIMELINE'],
  ];

  it.each(cases)('%s: exit 2 with the command to use, not "receipt ... INVALID"', async (_what, file, says) => {
    const path = file();
    const r = await cli(['verify', path]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(`aer1: ${path} ${says}`);
    expect(r.err).not.toMatch(/missing_field|--kind chain\)/);
  });

  it('a malformed receipt stays a receipt (exit 1), and an explicit --kind is verified as given', async () => {
    const input = vector('receipt-core-valid').input as Record<string, unknown>;
    const { output_hash: _drop, ...noHash } = input;
    const r = await cli(['verify', '--json', tmp.write('no-hash.json', noHash)]);
    expect([r.code, JSON.parse(r.out).kind, JSON.parse(r.out).verdict]).toEqual([1, 'receipt', 'invalid']);
    // A receipt member besides plan-like members: still a receipt.
    const mixed = await cli(['verify', '--json', tmp.write('mixed.json', { ...input, expected_actions: [] })]);
    expect(JSON.parse(mixed.out).kind).toBe('receipt');
    const plan = await cli(['verify', '--kind', 'receipt', '--json', ex('coverage/plan.json')]);
    expect([plan.code, JSON.parse(plan.out).verdict]).toEqual([1, 'invalid']);
  });

  it('a JSON syntax error names the line and column', async () => {
    const r = await cli(['verify', tmp.write('bad.json', '{\n  "a": 1\n  "b": 2\n}')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("is not JSON: Expected ',' or '}' after property value at line 3 column 3");
    const end = await cli(['verify', tmp.write('cut.json', '{\n "a":')]);
    expect(end.err).toContain('is not JSON: unexpected end of the JSON text at line 2 column 6');
    const token = await cli(['verify', tmp.write('tru.json', '[1,\n tru]')]);
    expect(token.err).toContain("is not JSON: Unexpected token ']' at line 2 column 2");
    const plan = await cli(['coverage', '--plan', tmp.write('plan-bad.json', '{\n"job_id": "j",,\n}'), '--timeline', ex('coverage/timeline.json'), '--receipts', ex('coverage/receipts.ndjson')]);
    expect(plan.code).toBe(2);
    expect(plan.err).toMatch(/Expected double-quoted property name at line 2 column 15/);
    expect(plan.err).not.toMatch(/position/);
  });
});

describe('every aer1 command names a saved error answer', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());
  const answer = { error: 'rate_limited', message: 'public read budget spent: try again in 42 s', retry_after_seconds: 42 };
  const says = (file: string, what: string): string => `aer1: ${file} is a saved error answer, not ${what}: the server answered rate_limited: public read budget spent: try again in 42 s\n`;

  it('verify, verify --commitment, verify-pack, log verify-proof, coverage: exit 2, "the server answered <code>: <message>"', async () => {
    const file = tmp.write('answer.json', answer);
    const pretty = tmp.write('answer-pretty.json', JSON.stringify(answer, null, 2));
    const runs: [string[], string][] = [
      [['verify', file], 'an AER-1 document'],
      [['verify', '--kind', 'receipt', pretty], 'an AER-1 document'],
      [['verify', '--kind', 'chain', '--commitment', file, ex('timeline-eight.json')], 'an endpoint commitment'],
      [['verify-pack', pretty, '--vkey', key.verifierKey], 'an evidence pack'],
      [['log', 'verify-proof', file, '--vkey', key.verifierKey], 'a proof file'],
      [['coverage', '--check-report', file], 'a coverage report'],
      [['coverage', '--plan', file, '--timeline', ex('coverage/timeline.json'), '--receipts', ex('coverage/receipts.ndjson')], 'an input of aer1 coverage'],
      [['coverage', '--plan', ex('coverage/plan.json'), '--timeline', file, '--receipts', ex('coverage/receipts.ndjson')], 'an input of aer1 coverage'],
    ];
    for (const [argv, what] of runs) {
      const r = await cli(argv);
      const path = argv.includes(pretty) ? pretty : file;
      expect({ argv, code: r.code, err: r.err, out: r.out }).toEqual({ argv, code: 2, err: says(path, what), out: '' });
    }
  });

  it('a document that has error and message members besides its own is not taken for an answer', async () => {
    const receipt = { ...(vector('receipt-core-valid').input as object), error: 'x', message: 'y' };
    const r = await cli(['verify', '--json', tmp.write('receipt-error.json', receipt)]);
    expect(JSON.parse(r.out).kind).toBe('receipt');
    expect(readFileSync(ex('coverage/plan.json'), 'utf8')).toContain('expected_actions');
  });
});
