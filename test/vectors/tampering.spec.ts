/**
 * The tampering vectors (test/vectors/pack, test/vectors/proof; README.md
 * there): each case is an input file and the verdict and closed codes the
 * verifier must name. One walk over both folders, pure and in process: the
 * pack checker reads the file, the proof checker its bytes; no server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPack } from '../../src/cli/pack-check';
import { checkProof, readProofFile } from '../../src/core/tlog/log-proof';
import { TrustPolicy } from '../../src/core/tlog/quorum';
import { parseVerifierKey } from '../../src/core/tlog';

interface PackCase {
  id: string;
  description: string;
  pack: string;
  vkey: string;
  expected: { verified: boolean; failures: { member: string; check: string }[]; exact: boolean; not_recorded?: number; withheld_records?: number };
}

interface ProofCase {
  id: string;
  description: string;
  proof: string;
  vkey: string;
  expected: { verified: boolean; failed: string[]; codes: Record<string, string> };
}

const cases = <T>(dir: string): [string, T][] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.case.json'))
    .sort()
    .map((f) => [f.slice(0, -'.case.json'.length), JSON.parse(readFileSync(join(dir, f), 'utf8')) as T]);

const policy = (dir: string, file: string): TrustPolicy => ({ log: parseVerifierKey(readFileSync(join(dir, file), 'utf8').trim()), witnesses: [], quorum: 0 });

const PACK = join(__dirname, 'pack');
const PROOF = join(__dirname, 'proof');
const packCases = cases<PackCase>(PACK);
const proofCases = cases<ProofCase>(PROOF);

describe('tampering vectors', () => {
  it('hold every case the issue names, each named after its id', () => {
    expect(packCases.map(([name, c]) => [name, c.id]).every(([n, id]) => n === id)).toBe(true);
    expect(proofCases.map(([name, c]) => [name, c.id]).every(([n, id]) => n === id)).toBe(true);
    expect(packCases.map(([n]) => n)).toEqual(
      expect.arrayContaining(['base', 'member-removed', 'member-altered', 'stub-not-recorded', 'event-removed', 'checkpoint-other-key', 'inclusion-proof-altered', 'leaf-altered', 'report-digest-altered', 'withheld-member', 'stream-heads-removed', 'stream-heads-other-key']),
    );
    expect(proofCases.map(([n]) => n)).toEqual(expect.arrayContaining(['base', 'wrong-root', 'wrong-size', 'truncated-path', 'extra-hash', 'swapped-sibling']));
  });

  describe.each(packCases)('pack %s', (_name, c) => {
    it(`${c.description}`, async () => {
      const r = await checkPack(join(PACK, c.pack), policy(PACK, c.vkey));
      expect(r.is_pack).toBe(true);
      expect(r.verified).toBe(c.expected.verified);
      const named = r.failures.map((f) => ({ member: f.member, check: f.check }));
      if (c.expected.exact) expect(named).toEqual(c.expected.failures);
      else {
        expect(named.length).toBeGreaterThan(0);
        expect(named).toEqual(expect.arrayContaining(c.expected.failures));
      }
      if (c.expected.not_recorded !== undefined) expect(r.counts.not_recorded).toBe(c.expected.not_recorded);
      if (c.expected.withheld_records !== undefined) expect(r.counts.withheld_records).toBe(c.expected.withheld_records);
    });
  });

  describe.each(proofCases)('proof %s', (_name, c) => {
    it(`${c.description}`, async () => {
      const read = readProofFile(readFileSync(join(PROOF, c.proof)));
      if (!('parts' in read)) throw new Error(`${c.proof} is malformed: ${read.malformed}`);
      const r = await checkProof(read.parts, policy(PROOF, c.vkey));
      expect(r.verified).toBe(c.expected.verified);
      expect(r.failed).toEqual(c.expected.failed);
      expect(Object.fromEntries(r.checks.filter((k) => k.ok === false).map((k) => [k.name, k.code]))).toEqual(c.expected.codes);
    });
  });
});
