/**
 * Signed notes, keys, checkpoints, cosignatures: the C2SP examples verify,
 * signatures round-trip, every tampering is refused with a code.
 */
import { generateKeyPairSync } from 'node:crypto';
import {
  addSignatureLines,
  checkpointNoteText,
  computeKeyId,
  cosignatureMessage,
  cosignCheckpoint,
  cosignerKeyId,
  formatSignerKey,
  generateSignerKey,
  keyIdHex,
  newSigner,
  parseCheckpoint,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
  signLine,
  signNote,
  verifyCheckpoint,
  verifyCosignature,
  verifyCosignatures,
  verifyNote,
} from '../../../src/core/tlog';
import { codeOf } from './helpers';


// c2sp.org/signed-note, "Verifier keys" / "Example".
const SPEC_VKEY = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const SPEC_NOTE = 'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';

// golang.org/x/mod/sumdb/note documentation example key and signature.
const GO_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE = `${GO_TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

describe('signed-note: the specification example', () => {
  const v = parseVerifierKey(SPEC_VKEY);

  it('the example vkey parses (Ed25519, key ID 530d903a) and the example note verifies', () => {
    expect(v.name).toBe('example.com/foo');
    expect(keyIdHex(v.keyId)).toBe('530d903a');
    expect(v.type).toBe(SIG_ED25519);
    expect(v.vkey).toBe(SPEC_VKEY);
    const r = verifyNote(SPEC_NOTE, [v]);
    expect(r.text).toBe('This is an example message.\n');
    expect(r.verified.map((s) => s.name)).toEqual(['example.com/foo']);
    expect(r.unknown).toEqual([]);
    expect(verifyNote(Buffer.from(SPEC_NOTE, 'utf8'), [v]).text).toBe('This is an example message.\n');
  });

  it('the Go note documentation key signs its example deterministically', () => {
    const s = parseSignerKey(GO_SKEY);
    expect(s.vkey).toBe(GO_VKEY);
    expect(formatSignerKey(s)).toBe(GO_SKEY);
    expect(signNote(GO_TEXT, [s])).toBe(GO_NOTE);
    expect(verifyNote(GO_NOTE, [parseVerifierKey(GO_VKEY)]).verified).toHaveLength(1);
  });

  it('each tampering is refused with a code', () => {
    const t = (note: string): string => codeOf(() => verifyNote(note, [v]));
    expect(t(SPEC_NOTE.replace('example message', 'example messagE'))).toBe('note_signature_invalid');
    expect(t(SPEC_NOTE.replace('Uw2QOkn8', 'Uw2QOkn9'))).toBe('note_signature_invalid');
    expect(t(SPEC_NOTE.replace('yaQM=', 'yaQA='))).toBe('note_signature_invalid');
    // another key name or key ID: an unknown key, ignored, so nothing trusted is left
    expect(t(SPEC_NOTE.replace('— example.com/foo', '— example.com/fop'))).toBe('note_no_trusted_signature');
    expect(t(SPEC_NOTE.replace('Uw2QOkn8', 'Uw3QOkn8'))).toBe('note_no_trusted_signature');
    expect(t(SPEC_NOTE.replace('message.\n\n', 'message.\n\n\n'))).toBe('note_signature_invalid'); // the text gained a line
    expect(t(SPEC_NOTE.replace(/\n/g, '\r\n'))).toBe('note_control_character');
    expect(t(SPEC_NOTE.replace('message.', 'message.\r'))).toBe('note_control_character');
    expect(t(SPEC_NOTE.replace('message.', 'message.\t'))).toBe('note_control_character');
    expect(t(SPEC_NOTE.slice(0, -1))).toBe('note_missing_final_newline');
    expect(t(SPEC_NOTE + '\n')).toBe('note_no_signature_block');
    expect(t('This is an example message.\n')).toBe('note_no_signature_block');
    expect(t(SPEC_NOTE.replace('— ', '-- '))).toBe('note_signature_line_malformed');
    expect(t(SPEC_NOTE.replace('— example.com/foo ', '— example.com/foo  '))).toBe('note_signature_line_malformed');
    expect(t(SPEC_NOTE.replace('yaQM=', 'yaQM'))).toBe('note_signature_line_malformed');
    expect(t(SPEC_NOTE.replace('— example.com/foo', '— example.com+foo'))).toBe('note_key_name_invalid');
    expect(t(SPEC_NOTE.replace('— example.com/foo', '— example.com\u00a0foo'))).toBe('note_key_name_invalid');
    expect(t(SPEC_NOTE + SPEC_NOTE.split('\n\n')[1].repeat(100))).toBe('note_too_many_signatures');
    expect(codeOf(() => verifyNote(Buffer.concat([Buffer.from(SPEC_NOTE.slice(0, 4)), Buffer.from([0xff]), Buffer.from(SPEC_NOTE.slice(4))]), [v]))).toBe('note_not_utf8');
    expect(codeOf(() => verifyNote(SPEC_NOTE.replace('This', '\ud800This'), [v]))).toBe('note_not_utf8');
  });

  it('unknown-key signatures are ignored; 16 signatures are accepted', () => {
    const other = generateSignerKey('example.com/foo'); // same name, other key ID
    const third = generateSignerKey('witness.example/other');
    const text = 'This is an example message.\n';
    const extra = [signLine(text, other.signer), signLine(text, third.signer)];
    const note = addSignatureLines(SPEC_NOTE, extra);
    const r = verifyNote(note, [v]);
    expect(r.verified.map((s) => keyIdHex(s.keyId))).toEqual(['530d903a']);
    expect(r.unknown.map((s) => s.name)).toEqual(['example.com/foo', 'witness.example/other']);
    // a known key's bad signature still fails the note even with another valid one
    const bad = note.replace(extra[0], extra[0].slice(0, -8) + 'AAAAAAA=');
    expect(codeOf(() => verifyNote(bad, [v, parseVerifierKey(other.verifierKey)]))).toBe('note_signature_invalid');
    const many = addSignatureLines(SPEC_NOTE, Array.from({ length: 15 }, (_, i) => signLine(text, generateSignerKey(`w${i}.example`).signer)));
    expect(parseNote(many).signatures).toHaveLength(16);
    expect(verifyNote(many, [v]).unknown).toHaveLength(15);
  });
});

describe('keys', () => {
  it('generated keys round-trip and verify; tampered key strings are refused', () => {
    const { signerKey, verifierKey, signer } = generateSignerKey('log.example/aer1');
    expect(signerKey.startsWith('PRIVATE+KEY+log.example/aer1+')).toBe(true);
    const s2 = parseSignerKey(signerKey);
    expect(s2.vkey).toBe(verifierKey);
    const note = signNote('hello\nworld\n', [s2]);
    expect(verifyNote(note, [parseVerifierKey(verifierKey)]).verified).toHaveLength(1);
    expect(verifyNote(signNote('hello\n', [signer]), [parseVerifierKey(verifierKey)]).text).toBe('hello\n');
    const [name, id] = verifierKey.split('+', 2);
    const b64 = verifierKey.slice(name.length + id.length + 2); // base64 may hold '+'
    expect(id).toBe(keyIdHex(computeKeyId(name, SIG_ED25519, Buffer.from(b64, 'base64').subarray(1))));
    const flip = (s: string): string => (s[0] === '0' ? '1' : '0') + s.slice(1);
    expect(codeOf(() => parseVerifierKey(`${name}+${flip(id)}+${b64}`))).toBe('key_id_mismatch');
    expect(codeOf(() => parseVerifierKey(`${name}x+${id}+${b64}`))).toBe('key_id_mismatch');
    expect(codeOf(() => parseVerifierKey(`${name}+${id.toUpperCase()}+${b64}`))).toBe(/[a-f]/.test(id) ? 'key_invalid' : 'ok');
    expect(codeOf(() => parseVerifierKey(`${name}+${id}+${b64}+x`))).toBe('key_invalid');
    expect(codeOf(() => parseVerifierKey(`${name}+${id}+${Buffer.concat([Buffer.from([2]), Buffer.alloc(32)]).toString('base64')}`))).toBe('key_type_unsupported');
    expect(codeOf(() => parseVerifierKey(`bad name+${id}+${b64}`))).toBe('note_key_name_invalid');
    expect(codeOf(() => parseSignerKey(signerKey.replace('+log.example', '+log.examplf')))).toBe('key_id_mismatch');
    expect(codeOf(() => parseSignerKey('PRIVATE+KEY+x+00000000+AA=='))).toBe('key_invalid');
    expect(codeOf(() => newSigner('n', generateKeyPairSync('ed448').privateKey))).toBe('key_invalid');
    expect(codeOf(() => signNote('no final newline', [signer]))).toBe('note_text_invalid');
    expect(codeOf(() => signNote('cr\r\n', [signer]))).toBe('note_text_invalid');
  });
});

describe('checkpoints', () => {
  const root = Buffer.alloc(32, 9);
  it('format and strict parse', () => {
    const text = checkpointNoteText({ origin: 'example.com/log42', size: 20852163, rootHash: root, extensions: [] });
    expect(text).toBe(`example.com/log42\n20852163\n${root.toString('base64')}\n`);
    expect(parseCheckpoint(text)).toEqual({ origin: 'example.com/log42', size: 20852163, rootHash: root, extensions: [] });
    const withExt = checkpointNoteText({ origin: 'o', size: 0, rootHash: root, extensions: ['ext one'] });
    expect(parseCheckpoint(withExt).extensions).toEqual(['ext one']);
    // the spec's example body
    const spec = parseCheckpoint('example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n');
    expect(spec.size).toBe(20852163);
    expect(spec.rootHash.toString('base64')).toBe('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=');
    const r = root.toString('base64');
    const c = (t: string): string => codeOf(() => parseCheckpoint(t));
    expect(c(`o\n012\n${r}\n`)).toBe('checkpoint_size_invalid');
    expect(c(`o\n-1\n${r}\n`)).toBe('checkpoint_size_invalid');
    expect(c(`o\n+1\n${r}\n`)).toBe('checkpoint_size_invalid');
    expect(c(`o\n1 \n${r}\n`)).toBe('checkpoint_size_invalid');
    expect(c(`o\n9007199254740992\n${r}\n`)).toBe('checkpoint_size_invalid');
    expect(c(`o\n1\n${r}`)).toBe('checkpoint_malformed');
    expect(c(`o\n1\n`)).toBe('checkpoint_malformed');
    expect(c(`\n1\n${r}\n`)).toBe('checkpoint_origin_invalid');
    expect(c(`o\n1\n${r.slice(0, -4)}\n`)).toBe('checkpoint_root_invalid');
    expect(c(`o\n1\n${Buffer.alloc(33).toString('base64')}\n`)).toBe('checkpoint_root_invalid');
    expect(c(`o\n1\n${r}\n\n`)).toBe('checkpoint_extension_invalid');
    expect(c(`o\n1\n${r}\r\n`)).toBe('checkpoint_malformed');
    expect(codeOf(() => checkpointNoteText({ origin: 'a\nb', size: 1, rootHash: root, extensions: [] }))).toBe('checkpoint_origin_invalid');
    expect(codeOf(() => checkpointNoteText({ origin: 'a', size: 1.5, rootHash: root, extensions: [] }))).toBe('checkpoint_size_invalid');
  });

  it('a signed checkpoint verifies with the log key and its origin; wrong origin or key fails', () => {
    const log = generateSignerKey('log.example/aer1');
    const text = checkpointNoteText({ origin: 'log.example/aer1', size: 7, rootHash: root, extensions: [] });
    const note = signNote(text, [log.signer]);
    const v = parseVerifierKey(log.verifierKey);
    expect(verifyCheckpoint(note, [v], 'log.example/aer1').checkpoint.size).toBe(7);
    expect(codeOf(() => verifyCheckpoint(note, [v], 'log.example/other'))).toBe('checkpoint_origin_mismatch');
    expect(codeOf(() => verifyCheckpoint(note, [parseVerifierKey(generateSignerKey('log.example/aer1').verifierKey)]))).toBe('note_no_trusted_signature');
    expect(codeOf(() => verifyCheckpoint(signNote('not\na\ncheckpoint\n', [log.signer]), [v]))).toBe('checkpoint_size_invalid');
  });
});

describe('cosignatures (type 0x04)', () => {
  const CP = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
  const SPEC_COSIG = '— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==';

  it('the spec message and the spec example line shape (timestamp 1679315147, 8 + 64 bytes)', () => {
    expect(cosignatureMessage(CP, 1679315147).toString('utf8')).toBe(`cosignature/v1\ntime 1679315147\n${CP}`);
    const sig = parseNote(`${CP}\n${SPEC_COSIG}\n`).signatures[0];
    expect(sig.name).toBe('witness.example.com/w1');
    expect(sig.signature.length).toBe(72);
    expect(Number(sig.signature.readBigUInt64BE(0))).toBe(1679315147);
  });

  it('cosign and verify; key ID uses type 0x04; a changed timestamp or checkpoint fails', () => {
    const w = generateSignerKey('witness.example/w1', SIG_COSIGNATURE_V1);
    const v = parseVerifierKey(w.verifierKey);
    expect(v.type).toBe(SIG_COSIGNATURE_V1);
    expect(v.keyId).toBe(cosignerKeyId('witness.example/w1', v.publicKey));
    expect(v.keyId).not.toBe(computeKeyId('witness.example/w1', SIG_ED25519, v.publicKey));
    expect(parseSignerKey(w.signerKey).vkey).toBe(w.verifierKey);

    const line = cosignCheckpoint(CP, w.signer, 1700000000);
    const sig = parseNote(`${CP}\n${line}\n`).signatures[0];
    expect(verifyCosignature(CP, sig, v).timestamp).toBe(1700000000);
    // a type 0x04 key verifies as a note signer too, with its timestamp
    expect(verifyNote(`${CP}\n${line}\n`, [v]).verified[0].timestamp).toBe(1700000000);

    const changedTs = Buffer.from(sig.signature);
    changedTs.writeBigUInt64BE(1700000001n, 0);
    expect(codeOf(() => verifyCosignature(CP, { ...sig, signature: changedTs }, v))).toBe('cosignature_invalid');
    expect(codeOf(() => verifyCosignature(CP.replace('20852163', '20852164'), sig, v))).toBe('cosignature_invalid');
    expect(codeOf(() => verifyCosignature(CP, { ...sig, signature: sig.signature.subarray(0, 71) }, v))).toBe('cosignature_malformed');
    const huge = Buffer.from(sig.signature);
    huge.writeBigUInt64BE(2n ** 63n, 0);
    expect(codeOf(() => verifyCosignature(CP, { ...sig, signature: huge }, v))).toBe('cosignature_malformed');
    // an Ed25519 (0x01) signature by the same key is not a cosignature
    expect(codeOf(() => cosignCheckpoint(CP, newSigner('witness.example/w1', w.signer.privateKey), 1))).toBe('key_type_unsupported');
    expect(codeOf(() => cosignCheckpoint('not a checkpoint\n', w.signer, 1))).toBe('checkpoint_malformed');
    expect(codeOf(() => cosignCheckpoint(CP, w.signer, -1))).toBe('cosignature_timestamp_invalid');
  });

  it('verifyCosignatures: log signature plus witnesses; unknown witnesses ignored, a bad known one fails', () => {
    const log = generateSignerKey('example.com/behind-the-sofa');
    const w1 = generateSignerKey('w1.example', SIG_COSIGNATURE_V1);
    const w2 = generateSignerKey('w2.example', SIG_COSIGNATURE_V1);
    const w3 = generateSignerKey('w3.example', SIG_COSIGNATURE_V1);
    const signed = signNote(CP, [log.signer]);
    const note = addSignatureLines(signed, [cosignCheckpoint(CP, w1.signer, 10), cosignCheckpoint(CP, w2.signer, 20), SPEC_COSIG]);
    const witnesses = [w1, w2, w3].map((w) => parseVerifierKey(w.verifierKey));
    const r = verifyCosignatures(note, witnesses);
    expect(r.cosignatures.map((c) => [c.name, c.timestamp])).toEqual([
      ['w1.example', 10],
      ['w2.example', 20],
    ]);
    expect(verifyCheckpoint(note, [parseVerifierKey(log.verifierKey)]).note.unknown).toHaveLength(3);
    const line2 = cosignCheckpoint(CP, w2.signer, 20);
    const tampered = note.replace(line2, cosignCheckpoint(CP, w2.signer, 21).slice(0, -12) + line2.slice(-12));
    expect(codeOf(() => verifyCosignatures(tampered, witnesses))).toBe('cosignature_invalid');
    expect(formatSignerKey(w1.signer)).toBe(w1.signerKey);
  });
});
