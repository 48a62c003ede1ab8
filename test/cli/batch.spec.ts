/**
 * `aer1 verify --batch`: one NDJSON result per input line, in order, in
 * constant memory, with backpressure.
 */
import { cli, Capture, TmpDir, vector } from './helpers';

describe('aer1 verify --batch', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  const line = (o: unknown): string => JSON.stringify(o);

  it('writes one line per input line, in order, and continues past a garbage line', async () => {
    const input = [
      line({ id: 'a', kind: 'receipt', input: vector('receipt-core-valid').input }),
      'garbage {',
      line({ id: 'b', input: vector('chain-valid-4').input }),
      '',
      line({ id: 'c', kind: 'auto', input: vector('workflow-draft-example').input }),
      line({ id: 'd', kind: 'receipt', input: vector('receipt-tampered-bytes').input }),
      '[1,2]',
      line({ id: 'e', kind: 'ledger', input: {} }),
      line({ id: 'f' }),
      line({ id: 42, kind: 'commitment', input: vector('commitment-binding').input }),
      line({ id: 'g', kind: 'chain', input: vector('chain-historical-06').input }),
    ].join('\n');
    const r = await cli(['verify', '--batch', '--json', tmp.write('mixed.ndjson', input)]);
    expect(r.code).toBe(1);
    expect(r.err).toBe('');
    expect(r.lines.map((l) => JSON.parse(l))).toEqual([
      { line: 1, id: 'a', kind: 'receipt', verdict: 'valid', reasons: [] },
      { line: 2, id: null, kind: null, verdict: 'invalid', reasons: ['not_json'] },
      { line: 3, id: 'b', kind: 'chain', verdict: 'valid', reasons: [] },
      // line 4 is blank: no record, and the line numbers say so
      { line: 5, id: 'c', kind: 'workflow', verdict: 'incomplete', reasons: ['step_receipts_unavailable'] },
      { line: 6, id: 'd', kind: 'receipt', verdict: 'invalid', reasons: ['output_hash_mismatch'] },
      { line: 7, id: null, kind: null, verdict: 'invalid', reasons: ['not_object'] },
      { line: 8, id: 'e', kind: null, verdict: 'invalid', reasons: ['invalid_field:kind'] },
      { line: 9, id: 'f', kind: null, verdict: 'invalid', reasons: ['missing_field:input'] },
      { line: 10, id: 42, kind: 'commitment', verdict: 'valid', reasons: [] },
      { line: 11, id: 'g', kind: 'chain', verdict: 'historical', reasons: ['historical_06_construction'] },
    ]);
    // member order as documented
    expect(r.lines[0]).toBe('{"line":1,"id":"a","kind":"receipt","verdict":"valid","reasons":[]}');
  });

  it('exits 0 when every line is valid', async () => {
    const gen = await cli(['generate', 'batch', '--lines', '200']);
    const r = await cli(['verify', '--batch', '--json', tmp.write('valid.ndjson', gen.out)]);
    expect(r.code).toBe(0);
    expect(r.lines).toHaveLength(200);
    expect(r.lines.every((l) => JSON.parse(l).verdict === 'valid')).toBe(true);
    expect(new Set(r.lines.map((l) => JSON.parse(l).kind))).toEqual(new Set(['receipt', 'chain', 'workflow']));
  });

  it('a file of several read buffers (1 MiB each, one buffer reused): every line, lines across buffer ends intact', async () => {
    const gen = await cli(['generate', 'batch', '--lines', '6000', '--tamper-every', '997']);
    expect(gen.out.length).toBeGreaterThan(3 * 1024 * 1024);
    const file = tmp.write('big.ndjson', gen.out);
    const r = await cli(['verify', '--batch', '--json', file]);
    expect(r.code).toBe(1);
    const recs = r.lines.map((l) => JSON.parse(l) as { line: number; verdict: string; reasons: string[] });
    expect(recs.map((x) => x.line)).toEqual(Array.from({ length: 6000 }, (_, i) => i + 1));
    expect(recs.filter((x) => x.verdict !== 'valid').map((x) => [x.line, x.reasons])).toEqual([997, 1994, 2991, 3988, 4985, 5982].map((n) => [n, ['output_hash_mismatch']]));
    // The same bytes from stdin (a stream, not the reused buffer) give the same lines.
    const s = await cli(['verify', '--batch', '--json', '-'], { stdin: gen.out });
    expect(s.out).toBe(r.out);
  }, 30_000); // 6,000 receipts generated and verified twice (about 1.5 s on a quiet machine; over 5 s on a loaded one)

  it('marks a line not JSON when it is not UTF-8', async () => {
    const bytes = Buffer.concat([Buffer.from('{"id":"x","input":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    const r = await cli(['verify', '--batch', '--json', tmp.write('latin.ndjson', bytes)]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.lines[0])).toEqual({ line: 1, id: null, kind: null, verdict: 'invalid', reasons: ['not_json'] });
  });

  it('reads the batch from stdin', async () => {
    const r = await cli(['verify', '--batch', '--json', '-'], { stdin: line({ id: 's', input: vector('receipt-core-valid').input }) + '\n' });
    expect(r.code).toBe(0);
    expect(r.lines).toEqual(['{"line":1,"id":"s","kind":"receipt","verdict":"valid","reasons":[]}']);
  });

  it('uses --kind for lines without a kind', async () => {
    const r = await cli(['verify', '--batch', '--json', '--kind', 'workflow', '-'], { stdin: line({ id: 'w', input: vector('receipt-core-valid').input }) });
    expect(JSON.parse(r.lines[0]).kind).toBe('workflow');
    expect(r.code).toBe(1);
  });

  it('waits for a slow reader (backpressure) and keeps every line in order', async () => {
    const gen = await cli(['generate', 'batch', '--lines', '3000', '--tamper-every', '1000']);
    const slow = new Capture({ highWaterMark: 64, slow: true });
    const r = await cli(['verify', '--batch', '--json', tmp.write('bp.ndjson', gen.out)], { stdout: slow });
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(3000);
    r.lines.forEach((l, i) => expect(JSON.parse(l).id).toBe(`doc-${i + 1}`));
    expect(r.lines.filter((l) => JSON.parse(l).verdict !== 'valid')).toHaveLength(3);
    expect(slow.writes).toBeGreaterThan(1); // written in chunks, not held until the end
  });

  it('without --json prints the documents that are not valid and a summary', async () => {
    const gen = await cli(['generate', 'batch', '--lines', '30', '--tamper-every', '10']);
    const r = await cli(['verify', '--batch', tmp.write('summary.ndjson', gen.out + 'oops\n')]);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      'line 10  id=doc-10  receipt  INVALID  output_hash_mismatch',
      'line 20  id=doc-20  receipt  INVALID  output_hash_mismatch',
      'line 30  id=doc-30  receipt  INVALID  output_hash_mismatch',
      'line 31  id=null  -  INVALID  not_json',
      '31 documents: 27 valid, 4 invalid, 0 historical, 0 incomplete',
    ]);
  });

  it('exit 2 for an unreadable batch file', async () => {
    const r = await cli(['verify', '--batch', '--json', tmp.path('absent.ndjson')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^aer1: cannot read .*absent\.ndjson: ENOENT[^\n]*\n$/);
  });
});
