/**
 * `aer1 conformance`: the project's copy of the shared corpus passes; an
 * altered expectation is reported as a failure.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, loadCorpus, TmpDir } from './helpers';

describe('aer1 conformance', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  it('passes the default corpus (test/vectors/aer1-public/aer1-vectors.json): 56 passed, 0 failed', async () => {
    const r = await cli(['conformance']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.lines[r.lines.length - 1]).toBe('56 passed, 0 failed');
    expect(r.lines[0]).toMatch(/^aer1-public version 1: 56 vectors from .*aer1-vectors\.json$/);
  });

  it('lists passing vectors with --verbose', async () => {
    const r = await cli(['conformance', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.lines.filter((l) => l.startsWith('PASS '))).toHaveLength(56);
    expect(r.lines).toContain('PASS workflow-draft-example  incomplete [step_receipts_unavailable]');
  });

  it('reports one altered expected verdict: 55 passed, 1 failed, exit 1', async () => {
    const corpus = loadCorpus();
    const v = corpus.vectors.find((x) => x.id === 'chain-valid-4');
    if (!v) throw new Error('vector missing');
    v.expected = { verdict: 'invalid', reasons: ['link_mismatch'] };
    const r = await cli(['conformance', tmp.write('altered.json', corpus)]);
    expect(r.code).toBe(1);
    expect(r.lines).toContain('FAIL chain-valid-4 (chain): expected invalid [link_mismatch], got valid []; missing [link_mismatch]');
    expect(r.lines[r.lines.length - 1]).toBe('55 passed, 1 failed');
  });

  it('fails a vector whose expected reason is not reported even when the verdict matches', async () => {
    const corpus = loadCorpus();
    corpus.vectors = corpus.vectors.filter((x) => x.id === 'receipt-bad-id');
    corpus.vectors[0].expected.reasons.push('invalid_timestamp');
    const r = await cli(['conformance', tmp.write('reason.json', corpus)]);
    expect(r.code).toBe(1);
    expect(r.lines[1]).toMatch(/^FAIL receipt-bad-id \(receipt\): expected invalid \[invalid_id, invalid_timestamp\], got invalid \[invalid_id\]; missing \[invalid_timestamp\]$/);
    expect(r.lines[r.lines.length - 1]).toBe('0 passed, 1 failed');
  });

  it('counts a malformed vector as failed', async () => {
    const r = await cli(['conformance', tmp.write('odd.json', { corpus: 'x', version: '1', vectors: [{ id: 'k', kind: 'ledger', input: {}, expected: { verdict: 'valid', reasons: [] } }, 7] })]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('FAIL k (ledger): expected valid [], got (not run: unknown kind "ledger")');
    expect(r.lines[r.lines.length - 1]).toBe('0 passed, 2 failed');
  });

  it('exit 2 for a file that is not a corpus, or is missing', async () => {
    const notCorpus = await cli(['conformance', tmp.write('not-corpus.json', { vectors: 'no' })]);
    expect(notCorpus.code).toBe(2);
    expect(notCorpus.err).toBe('aer1: not a conformance corpus: expected {"corpus", "version", "vectors": [...]}\n');
    const missing = await cli(['conformance', tmp.path('none.json')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^aer1: cannot read .*none\.json: ENOENT/);
  });

  it('judges each input by its text as written, as aer1 verify does: entry_count 8.0 is invalid_commitment', async () => {
    const ex = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');
    const bad = ex('commitment-eight.json').replace('"entry_count": 8', '"entry_count": 8.0');
    const vector = (verdict: string, reasons: string[]): string =>
      `{"corpus": "t", "version": "1", "vectors": [{"id": "c", "kind": "commitment", "description": "8.0", "input": {"timeline": ${ex('timeline-eight.json')}, "commitment": ${bad}}, "expected": ${JSON.stringify({ verdict, reasons })}}]}`;
    const ok = await cli(['conformance', tmp.write('c80.json', vector('invalid', ['invalid_commitment']))]);
    expect([ok.code, ok.lines[ok.lines.length - 1]]).toEqual([0, '1 passed, 0 failed']);
    const wrong = await cli(['conformance', tmp.write('c80-valid.json', vector('valid', []))]);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toContain('FAIL c (commitment): expected valid [], got invalid [invalid_commitment]');
  });
});
