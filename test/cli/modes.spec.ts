/**
 * One verdict whatever the mode (issue 26): `aer1 verify FILE` and the same
 * document as an `aer1 verify --batch` line go through one input path
 * (core verifyDocumentText), so they give the same verdict and reason codes.
 * The whole frozen corpus (test/vectors/aer1-public/aer1-vectors.json, the shared
 * ../shared/vectors/aer1-vectors.json when present, and the project's
 * test/vectors) is run through both modes, with its declared kind and with
 * auto, each document as written in its file (its exact text), and every
 * mismatch is listed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { memberText } from '../../src/core/aer1/json-integer';
import { splitJsonArray } from '../../src/core/json';
import { cli, TmpDir } from './helpers';

interface Item {
  /** Where it comes from: file and vector id. */
  name: string;
  kind: string;
  /** The vector's input, exactly as written in its file. */
  text: string;
  expected: string;
}

const ROOT = resolve(__dirname, '../..');

/** Every vector of a corpus file, its input as written. */
function corpusItems(file: string, label: string): Item[] {
  const text = readFileSync(file, 'utf8');
  const parsed = JSON.parse(text) as { vectors: { id: string; kind: string; expected: { verdict: string } }[] };
  const elements = splitJsonArray(memberText(text, ['vectors']) ?? '');
  if (elements === null || elements.length !== parsed.vectors.length) throw new Error(`cannot split the vectors of ${file}`);
  return parsed.vectors.map((v, i) => {
    const input = memberText(elements[i], ['input']);
    if (input === null) throw new Error(`${file}: vector ${v.id} has no input`);
    return { name: `${label}:${v.id}`, kind: v.kind, text: input, expected: v.expected.verdict };
  });
}

function projectItems(): Item[] {
  const dir = join(ROOT, 'test/vectors');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), 'utf8');
      const v = JSON.parse(text) as { id: string; kind: string; expected: { verdict: string } };
      const input = memberText(text, ['input']);
      if (input === null) throw new Error(`test/vectors/${f} has no input`);
      return { name: `test/vectors:${v.id}`, kind: v.kind, text: input, expected: v.expected.verdict };
    });
}

/** What a mode said about one document. */
type Verdict = { kind: string | null; verdict: string; reasons: string[] };
type Said = Verdict | { exit: number; error: string };

describe('aer1 verify FILE and aer1 verify --batch agree on every document', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  const shared = resolve(ROOT, '../shared/vectors/aer1-vectors.json');
  const items = [...corpusItems(join(ROOT, 'test/vectors/aer1-public/aer1-vectors.json'), 'vectors'), ...(existsSync(shared) ? corpusItems(shared, 'shared') : []), ...projectItems()];

  async function single(item: Item, i: number, kind: string): Promise<Said> {
    const file = tmp.write(`doc-${i}.json`, item.text);
    const r = await cli(['verify', '--kind', kind, '--json', file]);
    if (r.code === 2) return { exit: 2, error: r.err.trim() };
    const j = JSON.parse(r.out) as { kind: string; verdict: string; reasons: string[] };
    return { kind: j.kind, verdict: j.verdict, reasons: j.reasons };
  }

  async function batch(kind: (item: Item) => string | null): Promise<Verdict[]> {
    // One line per document: its text as written, line breaks (white space between tokens) made spaces.
    const lines = items.map((item, i) => `{"id":${i},${kind(item) === null ? '' : `"kind":${JSON.stringify(kind(item))},`}"input":${item.text.replace(/\r?\n/g, ' ')}}`);
    const r = await cli(['verify', '--batch', '--json', tmp.write(`batch-${kind(items[0]) ?? 'auto'}.ndjson`, lines.join('\n') + '\n')]);
    expect(r.err).toBe('');
    const records = r.lines.map((l) => JSON.parse(l) as { line: number; id: number; kind: string | null; verdict: string; reasons: string[] });
    expect(records.map((x) => x.id)).toEqual(items.map((_, i) => i));
    return records.map((x) => ({ kind: x.kind, verdict: x.verdict, reasons: x.reasons }));
  }

  it('runs the whole corpus', () => {
    expect(items.length).toBeGreaterThanOrEqual(56 + 100);
    // The exact text was found for every vector: it parses to the same input.
    for (const item of items.slice(0, 3)) expect(() => JSON.parse(item.text)).not.toThrow();
  });

  for (const mode of ['declared', 'auto'] as const) {
    it(`with the ${mode} kind: same kind, verdict and reason codes, item by item`, async () => {
      const batched = await batch((item) => (mode === 'declared' ? item.kind : null));
      const mismatches: string[] = [];
      const ndjson: string[] = [];
      for (let i = 0; i < items.length; i++) {
        const s = await single(items[i], i, mode === 'declared' ? items[i].kind : 'auto');
        if (JSON.stringify(s) === JSON.stringify(batched[i])) continue;
        // The one documented difference: a FILE given with --kind chain whose first character is "{" is an
        // NDJSON timeline (one entry per line), where a batch line's input is one JSON value. The verdict agrees.
        const isNdjsonFile = mode === 'declared' && items[i].kind === 'chain' && items[i].text.startsWith('{');
        if (isNdjsonFile && 'verdict' in s && s.verdict === batched[i].verdict) ndjson.push(items[i].name);
        else mismatches.push(`${items[i].name} (${mode}): verify FILE ${JSON.stringify(s)}, --batch ${JSON.stringify(batched[i])}`);
      }
      expect(mismatches).toEqual([]);
      expect(ndjson).toEqual(mode === 'declared' ? ['test/vectors:chain-not-array'] : []);
      // And both give the verdict the vectors expect.
      expect(items.filter((item, i) => batched[i].verdict !== item.expected).map((x) => x.name)).toEqual([]);
    }, 120_000);
  }

  it('entry_count written 8.0: invalid_commitment in both modes (was: valid in --batch)', async () => {
    const timeline = readFileSync(join(ROOT, 'examples/timeline-eight.json'), 'utf8');
    const good = readFileSync(join(ROOT, 'examples/commitment-eight.json'), 'utf8');
    for (const written of ['8.0', '8e0', '80e-1']) {
      const bad = good.replace('"entry_count": 8', `"entry_count": ${written}`);
      expect(bad).not.toBe(good);
      const doc = `{"timeline": ${timeline}, "commitment": ${bad}}`;
      const one = await cli(['verify', '--json', tmp.write('doc-bad.json', doc)]);
      expect([one.code, JSON.parse(one.out).kind, JSON.parse(one.out).verdict, JSON.parse(one.out).reasons]).toEqual([1, 'commitment', 'invalid', ['invalid_commitment']]);
      const line = `{"id":"bad","input":${doc.replace(/\r?\n/g, ' ')}}\n{"id":"bad-k","kind":"commitment","input":${doc.replace(/\r?\n/g, ' ')}}\n`;
      const b = await cli(['verify', '--batch', '--json', tmp.write('bad.ndjson', line)]);
      expect(b.code).toBe(1);
      expect(b.lines.map((l) => JSON.parse(l))).toEqual([
        { line: 1, id: 'bad', kind: 'commitment', verdict: 'invalid', reasons: ['invalid_commitment'] },
        { line: 2, id: 'bad-k', kind: 'commitment', verdict: 'invalid', reasons: ['invalid_commitment'] },
      ]);
    }
    // Written as an integer, both modes say valid.
    const doc = `{"timeline": ${timeline}, "commitment": ${good}}`;
    expect((await cli(['verify', tmp.write('doc-good.json', doc)])).code).toBe(0);
    const b = await cli(['verify', '--batch', '--json', tmp.write('good.ndjson', `{"id":"ok","input":${doc.replace(/\r?\n/g, ' ')}}\n`)]);
    expect([b.code, JSON.parse(b.lines[0]).verdict]).toEqual([0, 'valid']);
  });
});
