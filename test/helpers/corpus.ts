/** The project's copy of the conformance corpus, for tests that need real documents. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CorpusVector {
  id: string;
  kind: 'receipt' | 'chain' | 'commitment' | 'workflow';
  description: string;
  input: unknown;
  expected: { verdict: string; reasons: string[] };
}

export const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: CorpusVector[] };

/** The input document of corpus vector `id` (throws for an unknown id). */
export function vector(id: string): unknown {
  const v = corpus.vectors.find((x) => x.id === id);
  if (!v) throw new Error(`no corpus vector ${id}`);
  return v.input;
}
