/** Who stands behind an endpoint commitment (issue 15): notes, trusted keys, judgement now. */
import {
  AttestationError,
  commitmentNoteText,
  judgeAttestation,
  judgeOfflineNote,
  ledgerCommitmentText,
  NO_TRUST,
  parseTrustedKeys,
  verifyCommitmentNote,
} from '../../src/core/aer1/attestation';
import { commitmentFormatProblems } from '../../src/core/aer1';
import { generateSignerKey, SIG_COSIGNATURE_V1, signNote } from '../../src/core/tlog';

const log = generateSignerKey('ledger.test/aer1');
const notary = generateSignerKey('notary.example');
const other = generateSignerKey('other.example');
const C = { job_id: 'job-1', final_entry_digest: 'a'.repeat(64), entry_count: 3, published_at: '2026-12-01T04:00:00.000Z' };
const TEXT = ledgerCommitmentText(C);

describe('the commitment note', () => {
  it('a ledger-issued commitment is canonical JSON of the four members, and the note text is it plus one newline', () => {
    expect(TEXT).toBe(`{"entry_count":3,"final_entry_digest":"${'a'.repeat(64)}","job_id":"job-1","published_at":"2026-12-01T04:00:00.000Z"}`);
    expect(commitmentFormatProblems(JSON.parse(TEXT))).toEqual([]);
    const note = signNote(commitmentNoteText(TEXT), [log.signer]);
    expect(note.startsWith(`${TEXT}\n\n\u2014 ledger.test/aer1 `)).toBe(true);
    expect(judgeOfflineNote(note, { log_vkey: log.verifierKey, trusted: [] })).toMatchObject({ kind: 'ledger_issued', by: ['ledger.test/aer1'] });
  });

  it('a job id outside ASCII is escaped, so the note text stays printable', () => {
    expect(ledgerCommitmentText({ ...C, job_id: 'j\u00e9b' })).toContain('"job_id":"j\\u00e9b"');
  });
});

describe('parseTrustedKeys', () => {
  it('reads commas, newlines or a JSON array; empty is none', () => {
    expect(parseTrustedKeys(undefined)).toEqual([]);
    expect(parseTrustedKeys('  ')).toEqual([]);
    expect(parseTrustedKeys(`${notary.verifierKey}, ${other.verifierKey}`).map((v) => v.name)).toEqual(['notary.example', 'other.example']);
    expect(parseTrustedKeys(`${notary.verifierKey}\n${other.verifierKey}\n`).map((v) => v.name)).toEqual(['notary.example', 'other.example']);
    expect(parseTrustedKeys(JSON.stringify([notary.verifierKey])).map((v) => v.name)).toEqual(['notary.example']);
  });

  it('refuses a bad key, a cosigning key, a repeated key, a bad JSON array', () => {
    expect(() => parseTrustedKeys('notary+1234+abc')).toThrow(/entry 1 is not a verifier key/);
    expect(() => parseTrustedKeys(generateSignerKey('w', SIG_COSIGNATURE_V1).verifierKey)).toThrow(/type 0x04 cosigning key/);
    expect(() => parseTrustedKeys(`${notary.verifierKey},${notary.verifierKey}`)).toThrow(/names one key twice/);
    expect(() => parseTrustedKeys('[1,')).toThrow(/not a JSON array/);
    expect(() => parseTrustedKeys('[1]')).toThrow(/entry 1 is not a string/);
  });
});

describe('verifyCommitmentNote (a client posts an attested commitment)', () => {
  const trusted = parseTrustedKeys(notary.verifierKey);
  const text = JSON.stringify({ ...C, witness: 'notary.example' });

  it('a note signed by a trusted key: the commitment text and what to store', () => {
    const note = signNote(commitmentNoteText(text), [notary.signer]);
    const r = verifyCommitmentNote(note, trusted);
    expect(r.text).toBe(text);
    expect(r.stored).toEqual({ issued_by: 'witness', note, keys: [{ name: 'notary.example', vkey: notary.verifierKey }] });
  });

  it('refuses an untrusted key, a bad signature, a note that does not parse, each with its code', () => {
    const untrusted = signNote(commitmentNoteText(text), [other.signer]);
    expect(() => verifyCommitmentNote(untrusted, trusted)).toThrow(expect.objectContaining({ code: 'attestation_key_untrusted' }));
    const good = signNote(commitmentNoteText(text), [notary.signer]);
    // The same signature over another commitment text: the trusted key's signature fails.
    const tampered = good.replace('"entry_count":3', '"entry_count":4');
    expect(() => verifyCommitmentNote(tampered, trusted)).toThrow(expect.objectContaining({ code: 'attestation_signature_invalid' }));
    expect(() => verifyCommitmentNote(text, trusted)).toThrow(AttestationError);
    expect(() => verifyCommitmentNote(text, trusted)).toThrow(expect.objectContaining({ code: 'invalid_attestation' }));
  });
});

describe('judgeAttestation (re-verified on every read)', () => {
  const trust = { log_vkey: log.verifierKey, trusted: parseTrustedKeys(notary.verifierKey) };
  const ledgerNote = signNote(commitmentNoteText(TEXT), [log.signer]);
  const ledgerStored = { issued_by: 'ledger' as const, note: ledgerNote, keys: [{ name: log.signer.name, vkey: log.verifierKey }] };

  it('no stored note: self-asserted, naming the posting key', () => {
    const a = judgeAttestation(TEXT, null, trust, 'producer-key');
    expect(a).toMatchObject({ kind: 'self_asserted', by: [], problem: null });
    expect(a.detail).toMatch(/posted by key "producer-key"/);
  });

  it('ledger-issued under the log key; another log key, or a note over another text, is self-asserted with the problem said', () => {
    expect(judgeAttestation(TEXT, ledgerStored, trust, 'p')).toMatchObject({ kind: 'ledger_issued', by: ['ledger.test/aer1'] });
    // No log key now: the key recorded with it.
    expect(judgeAttestation(TEXT, ledgerStored, NO_TRUST, 'p').kind).toBe('ledger_issued');
    const otherLog = generateSignerKey('ledger.test/aer1');
    expect(judgeAttestation(TEXT, ledgerStored, { ...trust, log_vkey: otherLog.verifierKey }, 'p')).toMatchObject({ kind: 'self_asserted', problem: expect.stringMatching(/does not verify under the log key/) });
    expect(judgeAttestation(TEXT.replace('3', '4'), ledgerStored, trust, 'p')).toMatchObject({ kind: 'self_asserted', problem: 'the stored note carries another commitment text' });
  });

  it('attested while the key is trusted; a key removed from the trusted list no longer attests', () => {
    const note = signNote(commitmentNoteText(TEXT), [notary.signer]);
    const stored = { issued_by: 'witness' as const, note, keys: [{ name: 'notary.example', vkey: notary.verifierKey }] };
    expect(judgeAttestation(TEXT, stored, trust, 'p')).toMatchObject({ kind: 'attested_by', by: ['notary.example'], problem: null });
    expect(judgeAttestation(TEXT, stored, { ...trust, trusted: [] }, 'p')).toMatchObject({ kind: 'self_asserted', problem: 'recorded as attested, but its signing key is no longer trusted here' });
  });
});

describe('judgeOfflineNote (aer1 verify/coverage --commitment with --log-vkey/--trusted-key)', () => {
  const note = signNote(commitmentNoteText(TEXT), [notary.signer]);
  it('attested by a given trusted key; self-asserted when no given key signed it; a malformed note is refused', () => {
    expect(judgeOfflineNote(note, { log_vkey: null, trusted: parseTrustedKeys(notary.verifierKey) })).toMatchObject({ kind: 'attested_by', by: ['notary.example'] });
    expect(judgeOfflineNote(note, NO_TRUST)).toMatchObject({ kind: 'self_asserted' });
    expect(judgeOfflineNote(note, { log_vkey: log.verifierKey, trusted: [] })).toMatchObject({ kind: 'self_asserted' });
    expect(() => judgeOfflineNote('{"a":1}\n', NO_TRUST)).toThrow(/no blank line|signature/);
  });
  it('a given key whose signature fails is an error, never self-asserted', () => {
    const tampered = note.replace('"entry_count":3', '"entry_count":4');
    expect(() => judgeOfflineNote(tampered, { log_vkey: null, trusted: parseTrustedKeys(notary.verifierKey) })).toThrow(expect.objectContaining({ code: 'attestation_signature_invalid' }));
  });
});
