/**
 * WITNESS_POLICY_FILE (src/log/witness-policy-file.ts, witness-config.ts):
 * the Sigsum policy format as this ledger reads it. Good files give the
 * witnesses, which are required and the quorum rule; every bad file is
 * refused with the line it is about.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSignerKey, SIG_COSIGNATURE_V1 } from '../../src/core/tlog';
import { describeQuorum, quorumReached } from '../../src/core/tlog/quorum';
import { loadWitnessPolicy, logKeyMismatch } from '../../src/log/witness-config';
import { parseWitnessPolicyFile, WitnessPolicyFileError } from '../../src/log/witness-policy-file';

const wkey = (name: string) => generateSignerKey(name, SIG_COSIGNATURE_V1).verifierKey;
const [a1, a2, a3, b1, b2, opt] = ['a1.example/w', 'a2.example/w', 'a3.example/w', 'b1.example/w', 'b2.example/w', 'optional.example/w'].map(wkey);
const log = generateSignerKey('ledger.example.com/aer1');

const good = `# Two operators' witnesses; the quorum needs two of A's and one of B's.
log ${log.verifierKey}

witness A1 ${a1} https://a1.example:7380/
witness A2 ${a2} http://10.0.0.2:7380
witness A3\t${a3}   https://a3.example/witness   # trailing comment
group A 2 A1 A2 A3
witness B1 ${b1} https://b1.example
witness B2 ${b2} https://b2.example
group B any B1 B2
group A-and-B all A B
# Asked, stored, served; never counted:
witness Extra ${opt} https://optional.example
quorum A-and-B
`;

function errorOf(text: string): { line: number; message: string } {
  try {
    parseWitnessPolicyFile(text);
  } catch (e) {
    if (e instanceof WitnessPolicyFileError) return { line: e.line, message: e.message };
    throw e;
  }
  throw new Error('parsed');
}

describe('WITNESS_POLICY_FILE: the Sigsum policy format', () => {
  it('parses groups of groups; a witness outside the quorum tree is optional', () => {
    const p = parseWitnessPolicyFile(good);
    expect(p.log).toEqual({ key: log.verifierKey, line: 2 });
    expect(p.witnesses.map((w) => [w.name, w.url, w.verifier.name, w.line])).toEqual([
      ['A1', 'https://a1.example:7380', 'a1.example/w', 4],
      ['A2', 'http://10.0.0.2:7380', 'a2.example/w', 5],
      ['A3', 'https://a3.example/witness', 'a3.example/w', 6],
      ['B1', 'https://b1.example', 'b1.example/w', 8],
      ['B2', 'https://b2.example', 'b2.example/w', 9],
      ['Extra', 'https://optional.example', 'optional.example/w', 13],
    ]);
    expect(describeQuorum(p.quorum)).toBe('all of (A: 2 of (A1, A2, A3), B: any of (B1, B2))');
    const has = (...keys: string[]) => quorumReached(p.quorum, new Set(keys));
    expect([has(a1, a3, b2), has(a1, a2, a3), has(a1, b1, b2, opt), has(a2, a3, b1, opt)]).toEqual([true, false, false, true]);

    const dir = mkdtempSync(join(tmpdir(), 'aer1-policy-'));
    try {
      writeFileSync(join(dir, 'policy'), good);
      const loaded = loadWitnessPolicy({ WITNESS_POLICY_FILE: join(dir, 'policy') });
      expect(loaded.witnesses.map((w) => [w.name, w.required])).toEqual([
        ['A1', true],
        ['A2', true],
        ['A3', true],
        ['B1', true],
        ['B2', true],
        ['Extra', false],
      ]);
      expect([loaded.quorum, loaded.source, loaded.logKey]).toEqual([3, { kind: 'WITNESS_POLICY_FILE', path: join(dir, 'policy') }, log.verifierKey]);
      expect(() => loadWitnessPolicy({ WITNESS_POLICY_FILE: join(dir, 'policy'), WITNESSES: '[]' })).toThrow('WITNESSES and WITNESS_POLICY_FILE are both set');
      expect(() => loadWitnessPolicy({ WITNESS_POLICY_FILE: join(dir, 'policy'), WITNESS_QUORUM: 2 })).toThrow('WITNESS_QUORUM is set with WITNESS_POLICY_FILE');
      expect(() => loadWitnessPolicy({ WITNESS_POLICY_FILE: join(dir, 'missing') })).toThrow(`WITNESS_POLICY_FILE ${join(dir, 'missing')} cannot be read: ENOENT`);
      writeFileSync(join(dir, 'bad'), `witness A1 ${a1} https://a1.example\nquorum A2\n`);
      expect(() => loadWitnessPolicy({ WITNESS_POLICY_FILE: join(dir, 'bad') })).toThrow(`WITNESS_POLICY_FILE ${join(dir, 'bad')}: line 2: "A2" is not defined on a line before this one`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('quorum none: every witness optional, no cosignature needed; a single witness as the quorum', () => {
    const none = parseWitnessPolicyFile(`witness W ${a1} https://w.example\nquorum none\n`);
    expect([describeQuorum(none.quorum), quorumReached(none.quorum, new Set())]).toEqual(['none', true]);
    const one = parseWitnessPolicyFile(`witness W ${a1} https://w.example\r\nwitness X ${a2} https://x.example\r\nquorum W\r\n`);
    expect([quorumReached(one.quorum, new Set([a1])), quorumReached(one.quorum, new Set([a2]))]).toEqual([true, false]);
  });

  it('WITNESSES / WITNESS_QUORUM give k of n, every witness required', () => {
    const p = loadWitnessPolicy({ WITNESSES: JSON.stringify([{ url: 'http://a:1', vkey: a1 }, { url: 'http://b:2', vkey: b1 }]), WITNESS_QUORUM: '1' });
    expect([p.quorum, describeQuorum(p.rule), p.witnesses.map((w) => [w.name, w.required]), p.source]).toEqual([
      1,
      'any of (a1.example/w, b1.example/w)',
      [
        ['a1.example/w', true],
        ['b1.example/w', true],
      ],
      { kind: 'WITNESSES' },
    ]);
    expect(loadWitnessPolicy({})).toMatchObject({ witnesses: [], quorum: 0, source: { kind: 'none' } });
  });

  it.each([
    ['an unknown keyword', `witness A ${a1} https://a\nwitnes B ${a2} https://b\nquorum A`, 2, 'unknown keyword "witnes"'],
    ['a witness without URL', `# c\n\nwitness A ${a1}\nquorum A`, 3, 'the witness has no URL'],
    ['a raw hex witness key', `witness A ${'ab'.repeat(32)} https://a\nquorum A`, 1, 'a raw hex key cannot name a cosignature line'],
    ['a log key as a witness key', `witness A ${log.verifierKey} https://a\nquorum A`, 1, 'not a cosignature key (type 0x04'],
    ['a key that does not parse', `witness A a.example+00000000+AAAA https://a\nquorum A`, 1, 'the witness key does not parse'],
    ['a URL that is not http(s)', `witness A ${a1} ftp://a\nquorum A`, 1, 'the witness URL must be an http(s) URL'],
    ['a name defined twice', `witness A ${a1} https://a\nwitness A ${a2} https://b\nquorum A`, 2, 'the name "A" is already defined'],
    ['the same key twice', `witness A ${a1} https://a\nwitness B ${a1} https://b\nquorum A`, 2, 'the witness key of "B" is already the key of "A"'],
    ['a member used before its definition', `group G any A\nwitness A ${a1} https://a\nquorum G`, 1, '"A" is not defined on a line before this one'],
    ['a member of two groups', `witness A ${a1} https://a\nwitness B ${a2} https://b\ngroup G any A B\ngroup H any A\nquorum G`, 4, '"A" is already a member of "G"'],
    ['none as a member', `witness A ${a1} https://a\ngroup G any A none\nquorum G`, 2, '"none" cannot be a group member'],
    ['a threshold above n', `witness A ${a1} https://a\ngroup G 2 A\nquorum G`, 2, 'the threshold 2 is outside 1..1'],
    ['a threshold of 0', `witness A ${a1} https://a\ngroup G 0 A\nquorum G`, 2, 'the threshold 0 is outside 1..1'],
    ['a threshold that is not a number', `witness A ${a1} https://a\ngroup G most A\nquorum G`, 2, 'the threshold "most" is not a number, "any" or "all"'],
    ['a group without members', `witness A ${a1} https://a\ngroup G any\nquorum A`, 2, 'at least one member'],
    ['two quorum lines', `witness A ${a1} https://a\nquorum A\nquorum none`, 3, 'a second quorum line (the first is line 2)'],
    ['a quorum line with two names', `witness A ${a1} https://a\nwitness B ${a2} https://b\nquorum A B`, 3, 'a quorum line is "quorum <name>"'],
    ['two log lines', `log ${log.verifierKey}\nlog ${'cd'.repeat(32)}\nquorum none`, 2, 'a second log line (the first is line 1)'],
    ['a witness key as the log key', `log ${a1}\nquorum none`, 1, 'not an Ed25519 log key (type 0x01)'],
    ['a control character', `witness A ${a1} https://a\nquorum\u0001 A`, 2, 'control character 0x01'],
    ['no quorum line', `witness A ${a1} https://a\n`, 0, 'no quorum line'],
  ])('refuses %s, naming the line', (_what, text, line, message) => {
    const e = errorOf(text);
    expect(e.line).toBe(line);
    expect(e.message).toContain(message);
    if (line > 0) expect(e.message).toMatch(new RegExp(`^line ${line}: `));
  });

  it("checks the log line against this log's key: its vkey or the hex of its public key", () => {
    const p = (key: string | null) => ({ witnesses: [], rule: { kind: 'group' as const, name: 'none', k: 0, members: [] }, quorum: 0, source: { kind: 'WITNESS_POLICY_FILE' as const, path: '/etc/aer1/policy' }, logKey: key });
    const me = { vkey: log.verifierKey, publicKey: log.signer.publicKey };
    expect(logKeyMismatch(p(null), me)).toBeNull();
    expect(logKeyMismatch(p(log.verifierKey), me)).toBeNull();
    expect(logKeyMismatch(p(log.signer.publicKey.toString('hex').toUpperCase()), me)).toBeNull();
    const other = generateSignerKey('other.example/log');
    expect(logKeyMismatch(p(other.verifierKey), me)).toBe(`WITNESS_POLICY_FILE /etc/aer1/policy: its log line names ${other.verifierKey}, but this log's key is ${log.verifierKey}: the witnesses would be asked to cosign another log`);
  });
});
