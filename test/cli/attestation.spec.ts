/** `aer1 verify --commitment` with signed commitment notes: --log-vkey, --trusted-key (issue 15). */
import { commitmentNoteText, ledgerCommitmentText } from '../../src/core/aer1/attestation';
import { entryDigest } from '../../src/core/aer1';
import { generateSignerKey, signNote } from '../../src/core/tlog';
import { buildTimeline, EIGHT_STEPS } from '../coverage/fixtures';
import { cli, TmpDir } from './helpers';

const log = generateSignerKey('ledger.test/aer1');
const witness = generateSignerKey('notary.example');
const stranger = generateSignerKey('stranger.example');

describe('aer1 verify --commitment with signed notes', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());
  const job = 'job-cli-attest';
  const tl = buildTimeline(job, EIGHT_STEPS);
  const timeline = tmp.write('t.ndjson', tl.map((e) => JSON.stringify(e)).join('\n') + '\n');
  const text = ledgerCommitmentText({ job_id: job, final_entry_digest: entryDigest(tl[7])!, entry_count: 8, published_at: '2026-12-01T04:00:00.000Z' });
  const ledgerNote = tmp.write('ledger.note', signNote(commitmentNoteText(text), [log.signer]));
  const claimed = JSON.stringify({ ...JSON.parse(text), witness: 'Totally Independent Notary Inc.' });
  const plain = tmp.write('c.json', claimed);
  const witnessNote = tmp.write('w.note', signNote(commitmentNoteText(claimed), [witness.signer]));

  it('the ledger-issued note with --log-vkey: ledger_issued, valid', async () => {
    const r = await cli(['verify', '--kind', 'chain', '--json', '--commitment', ledgerNote, '--log-vkey', log.verifierKey, timeline]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ assessment: 'clean', verdict: 'valid', binding: true, binding_attestation: 'ledger_issued', attestation: { kind: 'ledger_issued', by: ['ledger.test/aer1'] } });
    const t = await cli(['verify', '--kind', 'chain', '--commitment', ledgerNote, '--log-vkey', log.verifierKey, timeline]);
    expect(t.out).toMatch(/^Who stands behind the commitment: issued by the ledger whose log key is ledger.test\/aer1: its signature verifies$/m);
  });

  it('a plain JSON commitment naming a notary: self-asserted, the name a claim; the same note without its key: self-asserted', async () => {
    const r = await cli(['verify', '--kind', 'chain', '--commitment', plain, timeline]);
    expect(r.code).toBe(0); // it binds (the binding result is unchanged); who stands behind it is stated beside it
    expect(r.out).toMatch(/^Who stands behind the commitment: self-asserted: posted by whoever gave it, signed by no key trusted here \(it names witness "Totally Independent Notary Inc\.": the poster's claim, not checked\)$/m);
    expect(r.out).toContain("(self-asserted: the producer's own word;");
    const j = JSON.parse((await cli(['verify', '--kind', 'chain', '--json', '--commitment', witnessNote, timeline])).out);
    expect(j).toMatchObject({ binding_attestation: 'self_asserted', attestation: { kind: 'self_asserted' } });
  });

  it('a witness-signed note with --trusted-key: attested; a tampered note or a bad key is exit 2', async () => {
    const j = JSON.parse((await cli(['verify', '--kind', 'chain', '--json', '--commitment', witnessNote, '--trusted-key', witness.verifierKey, '--trusted-key', stranger.verifierKey, timeline])).out);
    expect(j).toMatchObject({ binding_attestation: 'attested_by', attestation: { kind: 'attested_by', by: ['notary.example'] }, witness: { witness: 'Totally Independent Notary Inc.' } });
    const tampered = tmp.write('x.note', signNote(commitmentNoteText(claimed), [witness.signer]).replace('"entry_count":8', '"entry_count":7'));
    const bad = await cli(['verify', '--kind', 'chain', '--commitment', tampered, '--trusted-key', witness.verifierKey, timeline]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/x\.note: a trusted key's signature does not verify/);
    const badKey = await cli(['verify', '--kind', 'chain', '--commitment', witnessNote, '--trusted-key', 'nope', timeline]);
    expect([badKey.code, badKey.err]).toEqual([2, expect.stringMatching(/--trusted-key entry 1 is not a verifier key/)]);
    const noFile = await cli(['verify', '--kind', 'chain', '--log-vkey', log.verifierKey, timeline]);
    expect([noFile.code, noFile.err]).toEqual([2, expect.stringMatching(/--log-vkey and --trusted-key check --commitment files/)]);
  });
});
