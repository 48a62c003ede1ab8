/**
 * Every RFC 6962 proof vector of transparency-dev/merkle through our
 * verifiers, verdict for verdict. The project keeps a byte-identical copy in
 * vectors/rfc6962 (with its LICENSE); when ../shared/vectors/rfc6962 is
 * beside the clone (as in CI) the vectors are read from there, and the copy
 * must equal it file for file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isTlogError, verifyConsistency, verifyInclusion } from '../../../src/core/tlog';

const VENDORED = join(__dirname, '../../vectors/rfc6962');

/**
 * `shared/vectors/rfc6962` beside the clone (`../shared` from the repo root,
 * as in CI), found by walking up from here so a worktree nested one level
 * deeper finds it too; null when there is none.
 */
function sharedRoot(): string | null {
  let dir = join(__dirname, '../../..');
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, '..', 'shared', 'vectors', 'rfc6962');
    if (existsSync(candidate)) return candidate;
    dir = join(dir, '..');
  }
  return null;
}
const SHARED = sharedRoot();
const ROOT = SHARED ?? VENDORED;

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : name.endsWith('.json') ? [p] : [];
    });
}

const b = (s: string | null | undefined): Buffer => Buffer.from(s ?? '', 'base64');
const proofOf = (p: string[] | null): Buffer[] => (p ?? []).map(b);

interface Outcome {
  file: string;
  wantErr: boolean;
  gotErr: boolean;
  code?: string;
}

function run(kind: 'inclusion' | 'consistency', file: string): Outcome {
  const v = JSON.parse(readFileSync(file, 'utf8'));
  try {
    if (kind === 'inclusion') verifyInclusion(v.leafIdx, v.treeSize, b(v.leafHash), proofOf(v.proof), b(v.root));
    else verifyConsistency(v.size1, v.size2, proofOf(v.proof), b(v.root1), b(v.root2));
    return { file, wantErr: v.wantErr, gotErr: false };
  } catch (e) {
    if (!isTlogError(e)) throw e; // an untyped throw fails the test
    return { file, wantErr: v.wantErr, gotErr: true, code: e.code };
  }
}

const inclusion = walk(join(ROOT, 'inclusion'));
const consistency = walk(join(ROOT, 'consistency'));

describe('RFC 6962 vectors (transparency-dev/merkle)', () => {
  const all = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort();
  (SHARED ? it : it.skip)('the copy in vectors/rfc6962 equals ../shared/vectors/rfc6962 byte for byte', () => {
    const files = all(SHARED!);
    expect(all(VENDORED)).toEqual(files);
    for (const f of files) expect(readFileSync(join(VENDORED, f)).equals(readFileSync(join(SHARED!, f)))).toBe(true);
    expect(relative(VENDORED, ROOT)).not.toBe(''); // with ../shared present, the vectors are read from there
  });

  it(`has all 196 vectors (${inclusion.length} inclusion + ${consistency.length} consistency)`, () => {
    expect(inclusion.length + consistency.length).toBe(196);
  });

  it(`all 196 vectors give the expected verdict with a typed error`, () => {
    const outcomes = [...inclusion.map((f) => run('inclusion', f)), ...consistency.map((f) => run('consistency', f))];
    const wrong = outcomes.filter((o) => o.wantErr !== o.gotErr).map((o) => `${o.file.slice(ROOT.length)} want ${o.wantErr ? 'error' : 'ok'} got ${o.code ?? 'ok'}`);
    expect(wrong).toEqual([]);
    expect(outcomes.filter((o) => !o.wantErr).length).toBeGreaterThan(10);
    expect(outcomes.length).toBe(196);
  });

  it('a happy-path inclusion vector with one proof hash flipped fails with root_mismatch', () => {
    const v = JSON.parse(readFileSync(join(ROOT, 'inclusion/1/happy-path.json'), 'utf8'));
    const proof = proofOf(v.proof);
    proof[1][0] ^= 1;
    expect(() => verifyInclusion(v.leafIdx, v.treeSize, b(v.leafHash), proof, b(v.root))).toThrow(expect.objectContaining({ code: 'root_mismatch' }));
  });
});
