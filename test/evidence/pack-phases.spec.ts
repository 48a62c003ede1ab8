/**
 * The pack check's phases in core (src/core/pack/check.ts) over an async
 * iterable of lines, in process: no file, no server. Every failure is one of
 * the closed set of codes (PACK_CHECKS).
 */
import { checkPack, PACK_CHECKS, PackDeps } from '../../src/core/pack/check';
import { PackWriter } from '../../src/core/pack/format';
import { generateSignerKey, parseVerifierKey } from '../../src/core/tlog';
import { parseJsonBytes } from '../../src/cli/input';
import { parseLeaf } from '../../src/core/ledger/leaf';
import { quorumCheck, TrustPolicy } from '../../src/core/tlog/quorum';

const deps: PackDeps = {
  parseJson: parseJsonBytes,
  parseLeaf,
  quorumCheck: (note, policy) => quorumCheck(note, policy as TrustPolicy),
  timestamp: () => Promise.reject(new Error('no token in these packs')),
};

async function* linesOf(text: string): AsyncGenerator<Buffer> {
  for (const l of text.split('\n')) yield Buffer.from(l, 'utf8');
}

const policy = (): TrustPolicy => ({ log: parseVerifierKey(generateSignerKey('ledger.test').verifierKey), witnesses: [], quorum: 0 });

describe('checkPack over lines', () => {
  it('a pack of a header only: every failure named by member and code, not verified', async () => {
    const w = new PackWriter();
    const text = (w.member({ member: 'header', format: 'aer1-evidence-pack/1', subject: { kind: 'job', id: 'job-1' } }) + w.finish()).trimEnd();
    const r = await checkPack(linesOf(text), policy(), deps);
    expect([r.verified, r.is_pack, r.subject, r.counts.members]).toEqual([false, true, { kind: 'job', id: 'job-1' }, 1]);
    // A job pack without entries is also a forgery stripped of them (the ledger serves none): a second failure, named.
    expect(r.failures.map((f) => [f.member, f.check])).toEqual([
      ['log/checkpoint', 'checkpoint_signature'],
      ['header', 'subject'],
    ]);
    expect(r.passed).toEqual({ manifest: 2 });
  });

  it('a line that is not JSON and an empty line are format failures; a cut pack has no final manifest', async () => {
    const r = await checkPack(linesOf('{"member":"header","format":"aer1-evidence-pack/1","subject":{"kind":"job","id":"j"}}\n\nnot json'), policy(), deps);
    expect(r.failures.map((f) => [f.member, f.check])).toEqual([
      ['line 2', 'format'],
      ['line 3', 'format'],
      ['manifest', 'manifest'],
      ['log/checkpoint', 'checkpoint_signature'],
      ['header', 'subject'],
    ]);
    for (const f of r.failures) expect(PACK_CHECKS).toContain(f.check);
  });
});
