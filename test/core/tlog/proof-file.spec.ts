/** c2sp.org/tlog-proof files: parse, format, verify end to end over a real tree, and refuse tampering. */
import {
  addSignatureLines,
  checkpointNoteText,
  cosignCheckpoint,
  formatProofFile,
  generateSignerKey,
  inclusionProofSync,
  leafHash,
  NodeId,
  parseProofFile,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  signNote,
  TreeIntegrator,
  verifyProofFile,
} from '../../../src/core/tlog';
import { codeOf } from './helpers';


const SPEC_EXAMPLE = `c2sp.org/tlog-proof@v1
extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ
index 73894
gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=
B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=
EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=
RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=
AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=

example.com/fancylog
109482
sFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=

— example.com/fancylog hI2DJw[...]1roloI=
`;

describe('tlog-proof files', () => {
  it('the spec example parses and formats back byte for byte', () => {
    const p = parseProofFile(SPEC_EXAMPLE);
    expect(p.index).toBe(73894);
    expect(p.proof).toHaveLength(5);
    expect(p.extra?.toString('base64')).toBe('YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ');
    expect(p.checkpoint.startsWith('example.com/fancylog\n109482\n')).toBe(true);
    expect(formatProofFile(p)).toBe(SPEC_EXAMPLE);
  });

  // a real log of 300 entries, a signed and cosigned checkpoint
  const origin = 'log.example/aer1';
  const log = generateSignerKey(origin);
  const w1 = generateSignerKey('w1.example', SIG_COSIGNATURE_V1);
  const nodes = new Map<string, Buffer>();
  const t = TreeIntegrator.empty();
  const leaves = Array.from({ length: 300 }, (_, i) => Buffer.from(`event ${i}`));
  const r = t.appendLeaves(leaves);
  for (const n of r.nodes.toArray()) nodes.set(`${n.level}/${n.index}`, Buffer.from(n.hash));
  const reader = { readHashes: (ids: readonly NodeId[]) => ids.map((id) => nodes.get(`${id.level}/${id.index}`) as Buffer) };
  const text = checkpointNoteText({ origin, size: 300, rootHash: r.root, extensions: [] });
  const note = addSignatureLines(signNote(text, [log.signer]), [cosignCheckpoint(text, w1.signer, 1764550000)]);
  const file = formatProofFile({ extra: null, index: 123, proof: inclusionProofSync(123, 300, reader), checkpoint: note });
  const opts = { leafHash: leafHash(leaves[123]), logVerifiers: [parseVerifierKey(log.verifierKey)], origin, witnesses: [parseVerifierKey(w1.verifierKey)] };

  it('a proof file for a real entry verifies offline with the log key and a witness', () => {
    expect(file.split('\n')[1]).toBe('index 123');
    const v = verifyProofFile(file, opts);
    expect(v.checkpoint.size).toBe(300);
    expect(v.cosignatures.map((c) => [c.name, c.timestamp])).toEqual([['w1.example', 1764550000]]);
    expect(verifyProofFile(Buffer.from(file), { ...opts, witnesses: undefined }).cosignatures).toEqual([]);
  });

  it('tampering is refused with a code', () => {
    const lines = file.split('\n');
    const set = (i: number, v: string): string => lines.map((l, j) => (j === i ? v : l)).join('\n');
    const c = (f: string, o = opts): string => codeOf(() => verifyProofFile(f, o));
    expect(c(file, { ...opts, leafHash: leafHash(leaves[124]) })).toBe('root_mismatch');
    expect(c(set(1, 'index 124'))).toBe('root_mismatch');
    expect(c(set(1, 'index 0123'))).toBe('proof_file_malformed');
    expect(c(set(1, 'index 300'))).toBe('index_out_of_range');
    expect(c(set(0, 'c2sp.org/tlog-proof@v2'))).toBe('proof_file_malformed');
    const p2 = Buffer.from(lines[2], 'base64');
    p2[0] ^= 1;
    expect(c(set(2, p2.toString('base64')))).toBe('root_mismatch');
    expect(c(set(2, lines[2].slice(0, -4)))).toBe('proof_file_malformed');
    expect(c(file.replace(`${lines[3]}\n`, ''))).toBe('proof_wrong_length');
    expect(c(file.replace('\n\n', '\n\n\n'))).toBe('note_signature_invalid'); // the signed text gained a leading blank line
    expect(c(file.replace('\n300\n', '\n301\n'))).toBe('note_signature_invalid');
    expect(c(file, { ...opts, origin: 'log.example/other' })).toBe('checkpoint_origin_mismatch');
    expect(c(file, { ...opts, logVerifiers: [parseVerifierKey(generateSignerKey(origin).verifierKey)] })).toBe('note_no_trusted_signature');
    expect(c(file.replace('index 123', 'extra \nindex 123'))).toBe('proof_file_malformed');
    expect(c(`${lines.slice(0, 2).join('\n')}\n`)).toBe('proof_file_malformed');
    expect(codeOf(() => verifyProofFile(Buffer.from([0xff, 0xfe]), opts))).toBe('proof_file_malformed');
  });
});
