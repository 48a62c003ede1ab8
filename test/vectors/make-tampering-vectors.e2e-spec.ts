/**
 * Writes the tampering vectors of test/vectors/pack and test/vectors/proof
 * (read by test/vectors/tampering.spec.ts). Not a test: it runs only with
 * MAKE_VECTORS=1, and was run once to make the files in the repository:
 *
 *     MAKE_VECTORS=1 TEST_DIALECTS=sqlite npx jest test/vectors/make-tampering-vectors.e2e-spec.ts
 *
 * A real server (SQLite) records a job with a plan, eight receipts, their
 * entries, an endpoint commitment and a coverage report; its evidence pack,
 * the log key and one receipt's proof file (JSON form) are the bases. Each
 * tampered pack is written as an operator forging it would: members changed,
 * then the manifest rebuilt with the server's own writer (so the manifest
 * check cannot be what catches it). The expected outcome of each case was
 * decided from what the tampering breaks (the checks the e2e tests in
 * test/evidence/pack.e2e-spec.ts and test/cli/log.e2e-spec.ts name), then
 * checked against the verifier once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Response as SaResponse } from 'superagent';
import { PackWriter } from '../../src/core/pack/format';
import { generateSignerKey, leafHash, signNote } from '../../src/core/tlog';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { startApp, TestApp } from '../helpers/app';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan, receiptFor } from '../coverage/fixtures';

interface Member {
  member: string;
  [k: string]: unknown;
}

const PACK_DIR = join(__dirname, 'pack');
const PROOF_DIR = join(__dirname, 'proof');
const JOB = 'tamper-vectors-job';

const lines = (text: string): Member[] => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Member);
/** Rewrite a pack's members with the server's writer and a new manifest, as a forging operator would. */
const repack = (members: Member[]): string => {
  const w = new PackWriter();
  let out = '';
  for (const m of members) if (m.member !== 'manifest' && !m.member.startsWith('manifest/')) out += w.member(m);
  return out + w.finish();
};
const text = (res: SaResponse, cb: (err: Error | null, body: string) => void): void => {
  let s = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (s += c));
  res.on('end', () => cb(null, s));
};
const leafOf = (m: Member): string => (typeof m.leaf === 'string' ? Buffer.from(m.leaf, 'base64').toString('utf8') : '');
const json = (v: unknown): string => JSON.stringify(v, null, 2) + '\n';

/** One pack case: the pack file and what the verifier must say. */
interface PackCase {
  id: string;
  description: string;
  pack: string;
  expected: { verified: boolean; failures: { member: string; check: string }[]; exact: boolean; not_recorded?: number; withheld_records?: number };
}

const run = process.env.MAKE_VECTORS === '1' ? describe : describe.skip;

run('make the tampering vectors (MAKE_VECTORS=1)', () => {
  jest.setTimeout(300_000);
  let t: TestApp;
  afterAll(async () => {
    await t?.close();
  });

  it('records a job on a real server and writes the base pack, the proof and each tampered variant', async () => {
    t = await startApp('sqlite', { CHECKPOINT_INTERVAL_MS: '3600000' });
    const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await post('/api/plans', eightStepPlan(JOB), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(JOB, EIGHT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    for (const e of tl) expect((await post(`/api/jobs/${JOB}/entries`, e, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${JOB}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    const rep = await post('/api/coverage-reports', { job_id: JOB }, t.keys.auditor);
    expect(rep.status).toBe(201);
    const reportId = rep.body.report_id as string;
    await t.app.get(CheckpointSigner).tick();
    const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    const pr = await t.http.get(`/api/jobs/${JOB}/evidence`).set('Authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse(text);
    expect(pr.status).toBe(200);
    const base = pr.body as string;
    const proof = await t.http.get(`/api/receipts/${tl[4].id}/proof`).set('Authorization', `Bearer ${t.keys.auditor}`);
    expect(proof.status).toBe(200);

    mkdirSync(PACK_DIR, { recursive: true });
    mkdirSync(PROOF_DIR, { recursive: true });
    writeFileSync(join(PACK_DIR, 'log.vkey'), vkey + '\n');
    writeFileSync(join(PROOF_DIR, 'log.vkey'), vkey + '\n');

    const ms = lines(base);
    const receipt = ms.find((m) => m.member.startsWith('receipt/'))!;
    const rid = receipt.id as string;
    const ofReceipt = (m: Member): boolean => m.member.startsWith('event/') && leafOf(m).includes(`"receipt:${rid}"`);
    const ofCoverage = (m: Member): boolean => m.member.startsWith('event/') && leafOf(m).includes('"coverage:');
    const entryEvent = ms.find((m) => m.member.startsWith('event/') && leafOf(m).includes(`"timeline:${JOB}"`))!;
    const cases: { c: Omit<PackCase, 'pack'>; members: Member[] | null; raw?: string }[] = [];
    const add = (c: Omit<PackCase, 'pack'>, members: Member[]): void => void cases.push({ c, members });

    cases.push({ c: { id: 'base', description: 'The pack as the server wrote it: every check passes.', expected: { verified: true, failures: [], exact: true } }, members: null, raw: base });
    add(
      {
        id: 'member-removed',
        description: 'A receipt the subject names is removed, with its events and the report that counts it; the manifest rebuilt: the entry names it, and the signed stream heads name its stream and the report\'s (issue 30).',
        expected: {
          verified: false,
          failures: [
            { member: `receipt/${rid}`, check: 'subject' },
            { member: `coverage:${reportId}`, check: 'stream_incomplete' },
            { member: `receipt:${rid}`, check: 'stream_incomplete' },
          ],
          exact: true,
        },
      },
      ms.filter((m) => m !== receipt && !ofReceipt(m) && !ofCoverage(m) && !m.member.startsWith('report/')),
    );
    add(
      { id: 'member-altered', description: 'One receipt\'s bytes changed ("status":"ok" to "ko"); the manifest rebuilt: its bytes are not its leaf.', expected: { verified: false, failures: [{ member: receipt.member, check: 'leaf_bytes' }], exact: true } },
      ms.map((m) => (m === receipt ? { ...m, raw: (m.raw as string).replace('"status":"ok"', '"status":"ko"') } : m)),
    );
    add(
      {
        id: 'stub-not-recorded',
        description: 'A recorded receipt swapped for a `recorded: false` statement, its event and the report dropped, the manifest rebuilt: the signed stream heads say the receipt\'s stream and the report\'s have events the pack lacks (issue 30).',
        expected: {
          verified: false,
          failures: [
            { member: `coverage:${reportId}`, check: 'stream_incomplete' },
            { member: `receipt:${rid}`, check: 'stream_incomplete' },
          ],
          exact: true,
          not_recorded: 1,
        },
      },
      ms.filter((m) => !ofReceipt(m) && !ofCoverage(m) && !m.member.startsWith('report/')).map((m) => (m === receipt ? { member: m.member, id: rid, recorded: false, raw: null, position: null } : m)),
    );
    add(
      {
        id: 'event-removed',
        description: 'The ledger event of the first timeline entry removed; the manifest rebuilt: the entry has no event, the stream misses its first event (walked back from its signed head), and the report no longer recomputes.',
        expected: {
          verified: false,
          failures: [
            { member: 'entry/1', check: 'leaf_bytes' },
            { member: `report/${reportId}`, check: 'report_recomputed' },
            { member: `timeline:${JOB}`, check: 'stream_incomplete' },
          ],
          exact: true,
        },
      },
      ms.filter((m) => m !== entryEvent),
    );
    const cpMember = ms.find((m) => m.member === 'log/checkpoint')!;
    const note = cpMember.note as string;
    const body = note.slice(0, note.indexOf('\n\n') + 1);
    const other = generateSignerKey(vkey.split('+')[0]);
    add(
      { id: 'checkpoint-other-key', description: 'The checkpoint re-signed by another key under the log\'s name; the manifest rebuilt: its signature does not verify under the log key.', expected: { verified: false, failures: [{ member: 'log/checkpoint', check: 'checkpoint_signature' }], exact: true } },
      ms.map((m) => (m === cpMember ? { ...m, note: signNote(body, [other.signer]) } : m)),
    );
    const proofEvent = ms.find((m) => m.member.startsWith('event/') && Array.isArray(m.proof) && (m.proof as string[]).length > 0)!;
    add(
      { id: 'inclusion-proof-altered', description: 'One hash of an event\'s inclusion proof replaced; the manifest rebuilt.', expected: { verified: false, failures: [{ member: proofEvent.member, check: 'inclusion' }], exact: true } },
      ms.map((m) => (m === proofEvent ? { ...m, proof: [Buffer.alloc(32, 7).toString('base64'), ...(m.proof as string[]).slice(1)] } : m)),
    );
    const leafEvent = ms.find(ofReceipt)!;
    const leafText = leafOf(leafEvent);
    add(
      { id: 'leaf-altered', description: 'The leaf of a receipt\'s event changed (its recorded_at a second later), its leaf_hash recomputed; the manifest rebuilt: the leaf is not in the tree.', expected: { verified: false, failures: [{ member: leafEvent.member, check: 'inclusion' }], exact: true } },
      ms.map((m) => {
        if (m !== leafEvent) return m;
        const leaf = Buffer.from(leafText.replace(/(\d\d)(\.\d+)?Z"/, (_s, sec: string, frac: string | undefined) => `${String((Number(sec) + 1) % 60).padStart(2, '0')}${frac ?? ''}Z"`));
        return { ...m, leaf: leaf.toString('base64'), leaf_hash: leafHash(leaf).toString('base64') };
      }),
    );
    add(
      { id: 'report-digest-altered', description: 'The coverage report\'s result changed to `findings`; the manifest rebuilt: its digest and its leaf no longer match.', expected: { verified: false, failures: [{ member: `report/${reportId}`, check: 'report_digest' }, { member: `report/${reportId}`, check: 'leaf_bytes' }], exact: true } },
      ms.map((m) => (m.member === `report/${reportId}` ? { ...m, report: { ...(m.report as object), result: 'findings' } } : m)),
    );
    add(
      { id: 'withheld-member', description: 'A receipt\'s and an entry\'s bytes set to null with no withheld note; the manifest rebuilt: nothing fails, listed as not checked, NOT VERIFIED.', expected: { verified: false, failures: [], exact: true, withheld_records: 2 } },
      ms.map((m) => (m === receipt || m.member === 'entry/3' ? { ...m, raw: null } : m)),
    );
    const headsMember = ms.find((m) => m.member === 'log/stream-heads')!;
    add(
      { id: 'stream-heads-removed', description: 'The stream-heads statement removed; the manifest rebuilt: nothing shows the pack holds each stream to its end (issue 30).', expected: { verified: false, failures: [{ member: 'log/stream-heads', check: 'stream_heads' }], exact: true } },
      ms.filter((m) => m !== headsMember),
    );
    const headsText = (headsMember.note as string).slice(0, (headsMember.note as string).indexOf('\n\n') + 1);
    add(
      { id: 'stream-heads-other-key', description: 'The stream-heads statement re-signed by another key under the log\'s name; the manifest rebuilt: its signature does not verify under the log key.', expected: { verified: false, failures: [{ member: 'log/stream-heads', check: 'stream_heads' }], exact: true } },
      ms.map((m) => (m === headsMember ? { ...m, note: signNote(headsText, [other.signer]) } : m)),
    );
    for (const { c, members, raw } of cases) {
      const pack = `${c.id}.aer1pack.jsonl`;
      writeFileSync(join(PACK_DIR, pack), raw ?? repack(members!));
      writeFileSync(join(PACK_DIR, `${c.id}.case.json`), json({ id: c.id, description: c.description, pack, vkey: 'log.vkey', expected: c.expected }));
    }

    // Proof files: the JSON form of one receipt's proof, and its tamperings.
    const p = proof.body as { proof: string[]; tree_size: number; checkpoint: string; leaf: string };
    expect(p.proof.length).toBeGreaterThanOrEqual(2);
    const [origin, size, root, ...rest] = p.checkpoint.split('\n');
    const otherRoot = Buffer.from(root, 'base64');
    otherRoot[0] ^= 1;
    const proofCases: { id: string; description: string; file: unknown; failed: string[]; codes: Record<string, string> }[] = [
      { id: 'base', description: 'The proof file as the server wrote it: verified.', file: p, failed: [], codes: {} },
      { id: 'wrong-root', description: 'The checkpoint\'s root hash changed (one bit): the log\'s signature no longer verifies, so the inclusion is not checked.', file: { ...p, checkpoint: [origin, size, otherRoot.toString('base64'), ...rest].join('\n') }, failed: ['checkpoint_signature'], codes: { checkpoint_signature: 'note_signature_invalid' } },
      { id: 'wrong-size', description: 'The stated tree_size is one more than the checkpoint\'s.', file: { ...p, tree_size: p.tree_size + 1 }, failed: ['tree_size'], codes: { tree_size: 'tree_size_mismatch' } },
      { id: 'truncated-path', description: 'The last hash of the inclusion proof removed.', file: { ...p, proof: p.proof.slice(0, -1) }, failed: ['inclusion'], codes: { inclusion: 'proof_wrong_length' } },
      { id: 'extra-hash', description: 'A hash appended to the inclusion proof.', file: { ...p, proof: [...p.proof, Buffer.alloc(32, 9).toString('base64')] }, failed: ['inclusion'], codes: { inclusion: 'proof_wrong_length' } },
      { id: 'swapped-sibling', description: 'The first two hashes of the inclusion proof swapped.', file: { ...p, proof: [p.proof[1], p.proof[0], ...p.proof.slice(2)] }, failed: ['inclusion'], codes: { inclusion: 'root_mismatch' } },
    ];
    for (const c of proofCases) {
      const file = `${c.id}.proof.json`;
      writeFileSync(join(PROOF_DIR, file), JSON.stringify(c.file) + '\n');
      writeFileSync(join(PROOF_DIR, `${c.id}.case.json`), json({ id: c.id, description: c.description, proof: file, vkey: 'log.vkey', expected: { verified: c.failed.length === 0, failed: c.failed, codes: c.codes } }));
    }
  });
});
