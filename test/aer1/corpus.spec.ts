/**
 * The frozen public corpus (../shared/vectors/aer1-vectors.json), run from the
 * project's byte-identical copy in test/fixtures. A conformant verifier gives
 * the same verdict for every vector and reports every expected reason code
 * (it may add codes for further failing checks): vectors README.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DocumentKind, verifyDocument } from '../../src/core/aer1';

interface Vector {
  id: string;
  kind: DocumentKind;
  description: string;
  input: unknown;
  expected: { verdict: string; reasons: string[] };
}

const COPY = path.resolve(__dirname, '../vectors/aer1-public/aer1-vectors.json');
const SHARED = path.resolve(__dirname, '../../../shared/vectors/aer1-vectors.json');
const copyBytes = fs.readFileSync(COPY);
const corpus = JSON.parse(copyBytes.toString('utf8')) as { corpus: string; version: string; vectors: Vector[] };

describe('AER-1 public corpus', () => {
  test('is the aer1-public corpus, version 1, with 56 vectors and unique ids', () => {
    expect(corpus.corpus).toBe('aer1-public');
    expect(corpus.version).toBe('1');
    expect(corpus.vectors).toHaveLength(56);
    expect(new Set(corpus.vectors.map((v) => v.id)).size).toBe(56);
  });

  test('the project copy is byte-identical to ../shared/vectors/aer1-vectors.json (when present)', () => {
    if (!fs.existsSync(SHARED)) {
      // Outside the shared workspace the copy stands alone; nothing to compare.
      expect(fs.existsSync(COPY)).toBe(true);
      return;
    }
    const shared = fs.readFileSync(SHARED);
    expect(copyBytes.length).toBe(shared.length);
    expect(Buffer.compare(copyBytes, shared)).toBe(0);
  });

  test.each(corpus.vectors.map((v) => [v.id, v] as const))('%s', (_id, v) => {
    const r = verifyDocument(v.input, v.kind);
    expect(r.kind).toBe(v.kind);
    expect({ id: v.id, verdict: r.verdict }).toEqual({ id: v.id, verdict: v.expected.verdict });
    expect(r.reasons).toEqual(expect.arrayContaining(v.expected.reasons));
    if (v.expected.verdict === 'valid') expect(r.reasons).toEqual([]);
    // Auto-detection must agree with the declared kind for every corpus document.
    expect(verifyDocument(v.input).verdict).toBe(v.expected.verdict);
  });
});
