/**
 * `npm run bench -- --quick` (honest answers issue): it used to write its
 * reduced-size figures over bench/RESULTS.md, marked met/MISSED as if
 * comparable with the targets.
 */
import { join, resolve } from 'node:path';
import { parseArgs, QUICK_NOTICE, reportPath, status } from '../../bench/run';
import type { FigureResult } from '../../bench/lib/figure';

const root = resolve(__dirname, '../..');

describe('bench report path and quick runs', () => {
  it('a quick run never writes bench/RESULTS.md', () => {
    expect(reportPath(parseArgs(['--quick']), root)).toBe(join(root, 'bench', 'out', 'RESULTS-quick.md'));
    expect(() => reportPath(parseArgs(['--quick', '--out', join(root, 'bench', 'RESULTS.md')]), root)).toThrow(/not comparable.*not writing them over bench\/RESULTS\.md/);
    expect(reportPath(parseArgs(['--quick', '--out=/tmp/q.md']), root)).toBe('/tmp/q.md');
    expect(reportPath(parseArgs(['--quick', '--no-write']), root)).toBeNull();
  });

  it('a full run still writes bench/RESULTS.md', () => {
    expect(reportPath(parseArgs([]), root)).toBe(join(root, 'bench', 'RESULTS.md'));
    expect(reportPath(parseArgs(['--only', 'merkle']), root)).toBe(join(root, 'bench', 'RESULTS.md'));
  });

  it('a quick run says its figures are not comparable with the targets', () => {
    const r = { figure: 'Merkle root (S8.1)', value: 1000, unit: 'leaves/s', target: '>= 60% of the floor', met: true, ratio: 0.9, reference: null, note: '' } as unknown as FigureResult;
    expect(status(r)).toBe('met');
    expect(status(r, true)).toBe('met at reduced size (not comparable)');
    expect(status({ ...r, met: false }, true)).toBe('MISSED at reduced size (not comparable)');
    expect(QUICK_NOTICE).toMatch(/NOT comparable with the targets/);
  });
});
