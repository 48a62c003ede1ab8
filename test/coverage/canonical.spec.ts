import fc from 'fast-check';
import { compareCodePoints } from '../../src/core/coverage/canonical';

/** Reference: compare arrays of code points. */
function reference(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

describe('compareCodePoints', () => {
  it('orders by code point, not UTF-16 unit: U+FF61 sorts before U+1F600', () => {
    expect(compareCodePoints('\uff61', '\u{1f600}')).toBeLessThan(0);
    expect('\uff61' < '\u{1f600}').toBe(false); // the UTF-16 order a plain sort would use
  });

  it('has the sign of the reference on generated strings (BMP, astral and surrogate-adjacent units)', () => {
    const unit = fc.oneof(fc.constantFrom('a', 'b', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1f600}', '\u{10ffff}'), fc.string({ maxLength: 2 }));
    const str = fc.array(unit, { maxLength: 6 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(str, str, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(reference(a, b)));
      }),
      { numRuns: 2000 },
    );
  });
});
