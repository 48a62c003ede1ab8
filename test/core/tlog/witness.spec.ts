/** The add-checkpoint decision of c2sp.org/tlog-witness, over a real tree. */
import {
  checkAddCheckpoint,
  checkpointNoteText,
  consistencyProofSync,
  cosignCheckpoint,
  EMPTY_ROOT,
  formatAddCheckpointRequest,
  formatCosignatureBody,
  formatSizeBody,
  generateSignerKey,
  isTlogError,
  NodeId,
  originHash,
  parseAddCheckpointRequest,
  parseSizeBody,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  signNote,
  TreeIntegrator,
  verifyCosignatures,
} from '../../../src/core/tlog';

const origin = 'log.example/aer1';
const log = generateSignerKey(origin);
const keys = [parseVerifierKey(log.verifierKey)];
const nodes = new Map<string, Buffer>();
const roots: Buffer[] = [];
const t = TreeIntegrator.empty();
for (let i = 0; i < 40; i++) {
  const r = t.appendLeaves([Buffer.from(`e${i}`)]);
  for (const n of r.nodes.toArray()) nodes.set(`${n.level}/${n.index}`, Buffer.from(n.hash));
  roots[i + 1] = r.root;
}
roots[0] = EMPTY_ROOT;
const reader = { readHashes: (ids: readonly NodeId[]) => ids.map((id) => nodes.get(`${id.level}/${id.index}`) as Buffer) };
const cp = (size: number, root = roots[size]): string => signNote(checkpointNoteText({ origin, size, rootHash: root, extensions: [] }), [log.signer]);
const req = (oldSize: number, size: number, proof = oldSize > 0 && oldSize < size ? consistencyProofSync(oldSize, size, reader) : []): string =>
  formatAddCheckpointRequest({ oldSize, proof, checkpoint: cp(size) });

function decide(body: string, latest: { size: number; rootHash: Buffer } | null, k = keys) {
  return checkAddCheckpoint(parseAddCheckpointRequest(body), k, latest);
}

describe('tlog-witness add-checkpoint', () => {
  it('the request body round-trips and matches the spec layout', () => {
    const body = req(13, 40);
    expect(body.startsWith('old 13\n')).toBe(true);
    const p = parseAddCheckpointRequest(body);
    expect(p.oldSize).toBe(13);
    expect(formatAddCheckpointRequest(p)).toBe(body);
    for (const bad of ['old 013\n\nx', 'old 1\nnot base64\n\nx', 'old 1\n', 'old -1\n\nx', 'olde 1\n\nx', 'old 1\n\n']) {
      expect(() => parseAddCheckpointRequest(bad)).toThrow(expect.objectContaining({ code: 'witness_request_malformed' }));
    }
    const tooMany = `old 1\n${`${EMPTY_ROOT.toString('base64')}\n`.repeat(64)}\n${cp(40)}`;
    expect(() => parseAddCheckpointRequest(tooMany)).toThrow(expect.objectContaining({ code: 'witness_request_malformed' }));
  });

  it('accepts a first checkpoint from 0 and a consistent extension; the cosignature verifies', () => {
    const first = decide(req(0, 13), null);
    expect(first.ok).toBe(true);
    const next = decide(req(13, 40), { size: 13, rootHash: roots[13] });
    expect(next.ok).toBe(true);
    if (!next.ok) return;
    expect(next.checkpoint.size).toBe(40);
    const w = generateSignerKey('w1.example', SIG_COSIGNATURE_V1);
    const body = formatCosignatureBody([cosignCheckpoint(next.text, w.signer, 1764550000)]);
    expect(verifyCosignatures(cp(40) + body, [parseVerifierKey(w.verifierKey)]).cosignatures[0].timestamp).toBe(1764550000);
    expect(decide(req(40, 40), { size: 40, rootHash: roots[40] }).ok).toBe(true);
  });

  it('refuses with the statuses the spec gives', () => {
    const d = (body: string, latest: { size: number; rootHash: Buffer } | null, k = keys) => {
      const r = decide(body, latest, k);
      return r.ok ? 'ok' : `${r.status} ${r.code}${r.size !== undefined ? ` size=${r.size}` : ''}`;
    };
    expect(d(req(0, 13), null, [])).toBe('404 witness_unknown_origin');
    expect(d(req(0, 13), null, [parseVerifierKey(generateSignerKey(origin).verifierKey)])).toBe('403 note_no_trusted_signature');
    const forged = formatAddCheckpointRequest({ oldSize: 0, proof: [], checkpoint: cp(13).replace(roots[13].toString('base64'), roots[12].toString('base64')) });
    expect(d(forged, null)).toBe('403 note_signature_invalid');
    expect(d(formatAddCheckpointRequest({ oldSize: 41, proof: [], checkpoint: cp(40) }), { size: 41, rootHash: roots[40] })).toBe('400 witness_old_size_too_large');
    expect(d(req(13, 40), { size: 20, rootHash: roots[20] })).toBe('409 witness_old_size_mismatch size=20');
    expect(d(req(13, 40), null)).toBe('409 witness_old_size_mismatch size=0');
    expect(d(formatAddCheckpointRequest({ oldSize: 0, proof: [], checkpoint: cp(0, roots[3]) }), null)).toBe('422 root_mismatch');
    expect(d(formatAddCheckpointRequest({ oldSize: 0, proof: [roots[3]], checkpoint: cp(13) }), null)).toBe('422 proof_wrong_length');
    const proof = consistencyProofSync(13, 40, reader).map((h) => Buffer.from(h));
    proof[0][5] ^= 1;
    expect(d(formatAddCheckpointRequest({ oldSize: 13, proof, checkpoint: cp(40) }), { size: 13, rootHash: roots[13] })).toBe('422 root_mismatch');
    expect(d(req(13, 40), { size: 13, rootHash: roots[12] })).toBe('422 root_mismatch'); // the witness saw another tree at 13
    expect(d(req(40, 40), { size: 40, rootHash: roots[39] })).toBe('422 root_mismatch');
    expect(d(formatAddCheckpointRequest({ oldSize: 0, proof: [], checkpoint: 'not a note' }), null)).toBe('400 witness_request_malformed');
  });

  it('size bodies and the origin hash', () => {
    expect(formatSizeBody(20852014)).toBe('20852014\n');
    expect(parseSizeBody('20852014\n')).toBe(20852014);
    for (const b of ['020\n', '20', '20\n\n', '-1\n']) {
      try {
        parseSizeBody(b);
        throw new Error('parsed');
      } catch (e) {
        expect(isTlogError(e, 'witness_request_malformed')).toBe(true);
      }
    }
    expect(originHash('example.com/behind-the-sofa')).toMatch(/^[0-9a-f]{64}$/);
  });
});
