/**
 * isJsonClean: the event data a projection is handed as appended (not parsed
 * back from the stored text) only when parsing the text would give an equal
 * value (issue 17; src/ledger/projections.ts apply).
 */
import { isJsonClean } from '../../src/ledger/event';

describe('isJsonClean', () => {
  const clean: unknown[] = [
    null,
    true,
    'a "quoted" \u0000 \ud800 text',
    0,
    -1.5,
    [],
    ['x', null, 3],
    {},
    { id: 'r', reasons: ['a', 'b'], nested: { n: 1, list: [{ k: false }] }, raw: '{"a":1}' },
    Object.assign(Object.create(null) as object, { a: 1 }),
  ];
  const unclean: unknown[] = [
    undefined,
    -0,
    NaN,
    Infinity,
    10n,
    Symbol('s'),
    () => 1,
    new Date(0),
    [1, , 3], // eslint-disable-line no-sparse-arrays
    [undefined],
    { a: undefined },
    { a: () => 1 },
    { toJSON: 'x' },
    { [Symbol('k')]: 1 },
    Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }),
    Object.defineProperty({}, 'got', { get: () => 1, enumerable: true }),
    { a: new Map() },
    Object.assign([1], { extra: 2 }),
  ];

  it.each(clean.map((v) => [v]))('%p reads back equal: clean', (v) => {
    expect(isJsonClean(v)).toBe(true);
    expect(JSON.parse(JSON.stringify(v)) as unknown).toEqual(v);
  });

  it.each(unclean.map((v, i) => [i, v]))('case %p is not clean', (_i, v) => {
    expect(isJsonClean(v)).toBe(false);
  });

  it('is not clean past a nesting depth of 32', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(isJsonClean(deep)).toBe(false);
  });
});
