/**
 * `aer1 log verify-proof | monitor | inclusion` against a fake log built
 * from the core (test/cli/fake-log.ts) that serves the ledger's contract:
 * every exit code, honest and forked logs, tampered proof files, witness
 * quorums, trust on first use, a log that cannot be reached, and the real
 * bin/aer1 once (after `npm run build`).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { monitorCommand } from '../../src/cli/commands/log';
import { checkpointNoteText, generateSignerKey, inclusionProofSync, leafHash, NoteSigner, SIG_COSIGNATURE_V1, signNote, TreeIntegrator } from '../../src/core/tlog';
import { requestTimestamp } from '../../src/timestamp/tsa-client';
import { checkpointTimestampDigest } from '../../src/core/timestamp';
import { startOpenSslTsa } from '../helpers/openssl-tsa';
import { FakeLog, FakeLogServer, receiptEvent } from './fake-log';
import { Capture, cli, TmpDir, vector } from './helpers';

const ORIGIN = 'ledger.example.test/aer1';
const RECEIPT_ID = (vector('receipt-core-valid').input as { id: string }).id;
const VALID_RAW = JSON.stringify(vector('receipt-core-valid').input);
const BAD_ID = '0b7c3f52-6f9e-4f7a-9a51-3f6d3f6f0001';
const BAD_RAW = JSON.stringify({ ...(vector('receipt-core-valid').input as object), id: BAD_ID, canonical_bytes: 'dGFtcGVyZWQ=' });

const logKey = generateSignerKey(ORIGIN);
const otherKey = generateSignerKey(ORIGIN); // same origin, another key: a wrong --vkey
const w1 = generateSignerKey('witness.one.test', SIG_COSIGNATURE_V1);
const w2 = generateSignerKey('witness.two.test', SIG_COSIGNATURE_V1);

/** The honest history: 5 timeline events, the valid receipt (leaf 5), the tampered receipt (leaf 6), 3 more. */
function honest(signer: NoteSigner = logKey.signer): FakeLog {
  return new FakeLog(ORIGIN, signer).appendTimeline(5).append([receiptEvent(RECEIPT_ID, VALID_RAW), receiptEvent(BAD_ID, BAD_RAW)]).appendTimeline(3, 'job-2');
}

/** The same number of events with event 3 rewritten and every later hash recomputed. */
function rewritten(): FakeLog {
  return new FakeLog(ORIGIN, logKey.signer).appendTimeline(2).appendTimeline(1, 'job-1', 'REWRITTEN').appendTimeline(2).append([receiptEvent(RECEIPT_ID, VALID_RAW), receiptEvent(BAD_ID, BAD_RAW)]).appendTimeline(3, 'job-2');
}

/** Flip one character of `s` at `at` to another base64 character. */
function flip(s: string, at: number): string {
  const c = s[at];
  return s.slice(0, at) + (c === 'A' ? 'B' : 'A') + s.slice(at + 1);
}

describe('aer1 log', () => {
  const tmp = new TmpDir();
  let srv: FakeLogServer;
  const vkey = logKey.verifierKey;
  /** A local port nothing listens on (a port just released; fetch refuses "bad ports" such as 9 outright). */
  let closedUrl = '';
  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    srv = await new FakeLogServer(honest()).start();
    srv.log.publish();
  });
  afterAll(async () => {
    await srv.close();
    tmp.cleanup();
  });
  beforeEach(() => {
    const log = honest();
    log.publish();
    srv.log = log;
    srv.checkpointOverride = null;
    srv.leafOverride = null;
    srv.receiptIndexOverride = null;
  });

  describe('verify-proof (offline)', () => {
    it('verifies a receipt proof in JSON: checkpoint signature, leaf hash, inclusion, the leaf as a ledger event, the receipt verdict (exit 0)', async () => {
      const i = srv.log.receiptIndex(RECEIPT_ID);
      expect(i).toBe(5);
      const file = tmp.write('r.proof.json', srv.log.jsonProof(i));
      const r = await cli(['log', 'verify-proof', file, '--vkey', vkey]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain('✓ checkpoint_signature: signed by ledger.example.test/aer1');
      expect(r.out).toContain('✓ inclusion: leaf 5 is in the tree of size 10');
      expect(r.out).toContain('✓ leaf_record: ledger event (format 2) at position 6 = leaf index + 1');
      expect(r.out).toContain(`Record: position 6, stream receipt:${RECEIPT_ID} #1, type ReceiptRecorded, recorded 2026-12-01T00:00:00.000Z, by key k1 (producer-one)`);
      expect(r.out).toContain(`Receipt: ${RECEIPT_ID}: AER-1 verdict VALID`);
      expect(r.lines[r.lines.length - 1]).toBe('Result: VERIFIED: leaf 5 is in log ledger.example.test/aer1 at tree size 10');

      const j = await cli(['log', 'verify-proof', file, '--vkey', vkey, '--json']);
      expect(j.code).toBe(0);
      const out = JSON.parse(j.out);
      expect(out).toMatchObject({ verified: true, failed: [], form: 'json', leaf_index: 5, checkpoint: { origin: ORIGIN, size: 10 }, receipt: { id: RECEIPT_ID, verdict: 'valid', reasons: [] } });
      expect(out.record).toMatchObject({ format: 2, position: 6, stream_id: `receipt:${RECEIPT_ID}`, type: 'ReceiptRecorded', key_id: 'k1' });
      expect(out.checks.map((c: { name: string; ok: boolean }) => `${c.name}:${c.ok}`)).toEqual(['proof_file:true', 'checkpoint_signature:true', 'tree_size:true', 'leaf_hash:true', 'inclusion:true', 'leaf_record:true', 'receipt:true']);
    });

    it('--receipt ID and --position N name the record the file must prove: another leaf fails leaf_is_record (exit 1)', async () => {
      const file = tmp.write('which.proof.json', srv.log.jsonProof(5));
      const good = await cli(['log', 'verify-proof', file, '--vkey', vkey, '--receipt', RECEIPT_ID.toUpperCase(), '--position', '6', '--json']);
      expect(good.code).toBe(0);
      expect(JSON.parse(good.out).checks.find((c: { name: string }) => c.name === 'leaf_is_record')).toMatchObject({ ok: true });
      // A valid proof of another receipt, of another position, of a timeline entry: each refused, named.
      const other = await cli(['log', 'verify-proof', file, '--vkey', vkey, '--receipt', BAD_ID]);
      expect(other.code).toBe(1);
      expect(other.out).toContain(`✗ leaf_is_record: the leaf is not the ReceiptRecorded event of receipt ${BAD_ID} (it is a ReceiptRecorded on stream receipt:${RECEIPT_ID})`);
      expect(other.out).toContain('Result: NOT VERIFIED: failed: leaf_is_record');
      const pos = await cli(['log', 'verify-proof', file, '--vkey', vkey, '--position', '7', '--json']);
      expect([pos.code, JSON.parse(pos.out).failed, JSON.parse(pos.out).verified]).toEqual([1, ['leaf_is_record'], false]);
      const entry = await cli(['log', 'verify-proof', tmp.write('entry.proof.json', srv.log.jsonProof(2)), '--vkey', vkey, '--receipt', RECEIPT_ID, '--json']);
      expect([entry.code, JSON.parse(entry.out).failed]).toEqual([1, ['leaf_is_record']]);
      expect((await cli(['log', 'verify-proof', file, '--vkey', vkey, '--position', '0'])).code).toBe(2);
    });

    it('verifies the c2sp.org/tlog-proof form with the leaf in its extra line (exit 0)', async () => {
      const file = tmp.write('r.tlog-proof', srv.log.tlogProof(5));
      const r = await cli(['log', 'verify-proof', file, '--vkey', vkey, '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ verified: true, form: 'tlog-proof', leaf_index: 5, receipt: { verdict: 'valid' } });
    });

    it('verifies a leaf that is not a receipt, with no receipt verdict (exit 0)', async () => {
      const r = await cli(['log', 'verify-proof', tmp.write('t.proof.json', srv.log.jsonProof(2)), '--vkey', vkey, '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ verified: true, receipt: null, record: { position: 3, type: 'TimelineEntryAppended' } });
    });

    it('verifies a leaf of format 1 (an event written before key attribution, hashed without the key)', async () => {
      const old = new FakeLog(ORIGIN, logKey.signer).append([receiptEvent(RECEIPT_ID, VALID_RAW)], 1).appendTimeline(2);
      old.publish();
      expect(old.leaves[0].toString('utf8')).toMatch(/^\["aer1-ledger-event\/1",1,/);
      const r = await cli(['log', 'verify-proof', tmp.write('f1.json', old.jsonProof(0)), '--vkey', vkey]);
      expect(r.code).toBe(0);
      expect(r.out).toContain('✓ leaf_record: ledger event (format 1) at position 1 = leaf index + 1');
      expect(r.out).toContain('by an unattributed writer (format 1)');
      expect(r.out).toContain(`Receipt: ${RECEIPT_ID}: AER-1 verdict VALID`);
    });

    it('fails a leaf that is not the canonical serialization of a ledger event (exit 1, leaf_record)', async () => {
      const canonical = new FakeLog(ORIGIN, logKey.signer).appendTimeline(3).leaves;
      // The same values written with other white space: an honest tree over these leaves, but leaf 1 is not an event's hash input.
      const leaves = [canonical[0], Buffer.from(JSON.stringify(JSON.parse(canonical[1].toString('utf8')), null, 1)), canonical[2]];
      const tree = TreeIntegrator.empty();
      const nodes = new Map<string, Buffer>();
      for (const nd of tree.appendLeaves(leaves).nodes.toArray()) nodes.set(`${nd.level}/${nd.index}`, Buffer.from(nd.hash));
      const note = signNote(checkpointNoteText({ origin: ORIGIN, size: 3, rootHash: tree.root(), extensions: [] }), [logKey.signer]);
      const proof = inclusionProofSync(1, 3, { readHashes: (ids) => ids.map((id) => nodes.get(`${id.level}/${id.index}`)!) });
      const file = { format: 'aer1-log-proof/1', leaf_index: 1, leaf: leaves[1].toString('base64'), leaf_hash: leafHash(leaves[1]).toString('base64'), tree_size: 3, proof: proof.map((h) => h.toString('base64')), checkpoint: note };
      const r = await failing(file);
      expect(r).toEqual({ code: 1, failed: ['leaf_record'], codes: { leaf_record: 'leaf_not_event' } });
    });

    /** Run verify-proof --json on `content`; returns the exit code and the failing checks with their codes. */
    async function failing(content: string | object, extra: string[] = []): Promise<{ code: number; failed: string[]; codes: Record<string, string | undefined> }> {
      const r = await cli(['log', 'verify-proof', tmp.write('x.proof', content), '--vkey', vkey, '--json', ...extra]);
      const out = JSON.parse(r.out);
      return { code: r.code, failed: out.failed, codes: Object.fromEntries(out.checks.filter((c: { ok: boolean }) => c.ok === false).map((c: { name: string; code?: string }) => [c.name, c.code])) };
    }

    it('names the failing checks of a proof with one byte changed: in the leaf, a proof line, a checkpoint line, the signature (exit 1 each)', async () => {
      const p = srv.log.jsonProof(5);
      const leaf = Buffer.from(p.leaf as string, 'base64');
      leaf[leaf.indexOf('producer-one')] = 'P'.charCodeAt(0);
      expect(await failing({ ...p, leaf: leaf.toString('base64') })).toEqual({ code: 1, failed: ['leaf_hash', 'inclusion'], codes: { leaf_hash: 'leaf_hash_mismatch', inclusion: 'root_mismatch' } });

      const proof = [...(p.proof as string[])];
      proof[1] = flip(proof[1], 10);
      expect(await failing({ ...p, proof })).toEqual({ code: 1, failed: ['inclusion'], codes: { inclusion: 'root_mismatch' } });

      const note = p.checkpoint as string;
      const lines = note.split('\n');
      const rootChanged = [lines[0], lines[1], flip(lines[2], 5), ...lines.slice(3)].join('\n');
      expect(await failing({ ...p, checkpoint: rootChanged })).toEqual({ code: 1, failed: ['checkpoint_signature'], codes: { checkpoint_signature: 'note_signature_invalid' } });
      const sizeChanged = [lines[0], '11', ...lines.slice(2)].join('\n');
      expect(await failing({ ...p, checkpoint: sizeChanged })).toEqual({ code: 1, failed: ['checkpoint_signature'], codes: { checkpoint_signature: 'note_signature_invalid' } });
      const sig = lines[4];
      const sigChanged = [...lines.slice(0, 4), flip(sig, sig.length - 20), ...lines.slice(5)].join('\n');
      expect(await failing({ ...p, checkpoint: sigChanged })).toEqual({ code: 1, failed: ['checkpoint_signature'], codes: { checkpoint_signature: 'note_signature_invalid' } });

      // The same in the tlog-proof form: the leaf (extra line), a proof line, the root line, the signature.
      const t = srv.log.tlogProof(5).split('\n');
      const extraAt = 1;
      const leafT = Buffer.from(t[extraAt].slice(6), 'base64');
      leafT[leafT.indexOf('producer-one')] = 'P'.charCodeAt(0);
      expect((await failing([t[0], `extra ${leafT.toString('base64')}`, ...t.slice(2)].join('\n'))).failed).toEqual(['inclusion']);
      expect(await failing([...t.slice(0, 3), flip(t[3], 7), ...t.slice(4)].join('\n'))).toEqual({ code: 1, failed: ['inclusion'], codes: { inclusion: 'root_mismatch' } });
      const blank = t.indexOf('');
      expect((await failing([...t.slice(0, blank + 3), flip(t[blank + 3], 4), ...t.slice(blank + 4)].join('\n'))).failed).toEqual(['checkpoint_signature']);
      const sigAt = blank + 5;
      expect((await failing([...t.slice(0, sigAt), flip(t[sigAt], t[sigAt].length - 9), ...t.slice(sigAt + 1)].join('\n'))).failed).toEqual(['checkpoint_signature']);
    });

    it('fails a proof whose stated tree size, leaf index or field is off, and a recorded receipt that no longer verifies (exit 1)', async () => {
      const p = srv.log.jsonProof(5);
      expect(await failing({ ...p, tree_size: 9 })).toEqual({ code: 1, failed: ['tree_size'], codes: { tree_size: 'tree_size_mismatch' } });
      expect((await failing({ ...p, leaf_index: 4 })).failed).toEqual(['inclusion', 'leaf_record']);
      expect(await failing({ ...p, leaf_hash: 'not base64!' })).toEqual({ code: 1, failed: ['proof_file'], codes: { proof_file: 'proof_file_malformed' } });
      expect(await failing(srv.log.tlogProof(5, false))).toEqual({ code: 1, failed: ['leaf_hash'], codes: { leaf_hash: 'leaf_missing' } });
      const bad = await failing(srv.log.jsonProof(6));
      expect(bad).toEqual({ code: 1, failed: ['receipt'], codes: { receipt: 'receipt_invalid' } });
      const text = await cli(['log', 'verify-proof', tmp.write('bad.json', srv.log.jsonProof(6)), '--vkey', vkey]);
      expect(text.out).toContain(`Receipt: ${BAD_ID}: AER-1 verdict INVALID (output_hash_mismatch)`);
      expect(text.out).toContain('Result: NOT VERIFIED: failed: receipt');
      expect(text.out).not.toMatch(/Result: VERIFIED/);
    });

    it('refuses a checkpoint signed by another key than --vkey (exit 1, checkpoint_signature)', async () => {
      const file = tmp.write('r.json', srv.log.jsonProof(5));
      const r = await cli(['log', 'verify-proof', file, '--vkey', otherKey.verifierKey, '--json']);
      expect(r.code).toBe(1);
      const out = JSON.parse(r.out);
      expect(out.failed).toEqual(['checkpoint_signature']);
      expect(out.checks.find((c: { name: string }) => c.name === 'checkpoint_signature').code).toBe('note_no_trusted_signature');
      expect(out.checks.find((c: { name: string }) => c.name === 'inclusion')).toMatchObject({ ok: null });
    });

    it('applies the witness quorum: k of the --witness keys must have cosigned (issue 15)', async () => {
      srv.log.publish([w1.signer]);
      const file = tmp.write('w.json', srv.log.jsonProof(5));
      const both = ['--witness', w1.verifierKey, '--witness', w2.verifierKey];
      const one = await cli(['log', 'verify-proof', file, '--vkey', vkey, ...both, '--quorum', '1']);
      expect(one.code).toBe(0);
      expect(one.out).toMatch(/✓ cosignatures: 1 of 2 witnesses cosigned, 1 needed: witness\.one\.test at 2026-05-28T/);
      const two = await cli(['log', 'verify-proof', file, '--vkey', vkey, ...both, '--quorum', '2', '--json']);
      expect(two.code).toBe(1);
      expect(JSON.parse(two.out)).toMatchObject({ verified: false, failed: ['cosignatures'] });
      const dflt = await cli(['log', 'verify-proof', file, '--vkey', vkey, ...both]); // default quorum: every witness given
      expect(dflt.code).toBe(1);
      expect(dflt.out).toContain('✗ cosignatures: 1 of 2 witnesses cosigned, 2 needed');
      // A cosignature line by a known witness that does not verify fails the note (signed-note).
      const p = srv.log.jsonProof(5);
      const lines = (p.checkpoint as string).split('\n');
      lines[5] = flip(lines[5], lines[5].length - 12);
      expect(await failing({ ...p, checkpoint: lines.join('\n') }, ['--witness', w1.verifierKey])).toEqual({ code: 1, failed: ['cosignatures'], codes: { cosignatures: 'cosignature_invalid' } });
    });

    it('exits 2 on usage errors, an unreadable file, or a file that is not a proof file', async () => {
      const file = tmp.write('r.json', srv.log.jsonProof(5));
      const cases: [string[], RegExp][] = [
        [['log', 'verify-proof', file], /--vkey VKEY .* is required/],
        [['log', 'verify-proof', file, '--vkey', 'nope'], /--vkey is not a verifier key/],
        [['log', 'verify-proof', file, '--vkey', w1.verifierKey], /is not a log key \(type 0x01\)/],
        [['log', 'verify-proof', file, '--vkey', vkey, '--quorum', '1'], /--quorum K needs the witnesses/],
        [['log', 'verify-proof', file, '--vkey', vkey, '--witness', w1.verifierKey, '--quorum', '2'], /--quorum 2 is more than the 1 witness given/],
        [['log', 'verify-proof', file, '--vkey', vkey, '--witness', vkey], /is not a witness key \(type 0x04\)/],
        [['log', 'verify-proof', tmp.path('absent.json'), '--vkey', vkey], /cannot read .*absent\.json: ENOENT/],
        [['log', 'verify-proof', tmp.write('other.json', { hello: 1 }), '--vkey', vkey], /is JSON, but not a proof file/],
        [['log', 'verify-proof', tmp.write('junk.txt', 'hello\n'), '--vkey', vkey], /is neither a c2sp\.org\/tlog-proof@v1 file nor JSON/],
      ];
      for (const [argv, err] of cases) {
        const r = await cli(argv);
        expect({ argv: argv.slice(2), code: r.code }).toEqual({ argv: argv.slice(2), code: 2 });
        expect(r.err).toMatch(err);
        expect(r.out).toBe('');
      }
    });

    it('checks a carried RFC 3161 timestamp with --tsa-certs, and says so when it is not checked', async () => {
      const tsa = await startOpenSslTsa();
      try {
        const note = srv.log.latest!;
        const stamped = await requestTimestamp(tsa.url, checkpointTimestampDigest(note), { certsPem: tsa.caPem });
        if (!stamped.ok) throw new Error(stamped.message);
        const file = tmp.write('ts.json', srv.log.jsonProof(5, { timestamp: stamped.token.toString('base64') }));
        const unchecked = await cli(['log', 'verify-proof', file, '--vkey', vkey]);
        expect(unchecked.code).toBe(0);
        expect(unchecked.out).toContain('– timestamp: an RFC 3161 token is carried but NOT checked');
        expect(unchecked.out).toContain('(the timestamp was not checked)');
        const ca = tmp.write('ca.pem', tsa.caPem);
        const checked = await cli(['log', 'verify-proof', file, '--vkey', vkey, '--tsa-certs', ca, '--json']);
        expect(checked.code).toBe(0);
        expect(JSON.parse(checked.out).timestamp).toEqual({ gen_time: stamped.genTime, tsa: stamped.tsaName });
        // A token for another checkpoint.
        srv.log.append([{ stream_id: 'timeline:job-9', type: 'TimelineEntryAppended', data: '{}' }]).publish();
        const other = tmp.write('ts2.json', srv.log.jsonProof(5, { timestamp: stamped.token.toString('base64') }));
        expect(await failing(readFileSync(other, 'utf8'), ['--tsa-certs', ca])).toEqual({ code: 1, failed: ['timestamp'], codes: { timestamp: 'tsa_imprint_mismatch' } });
      } finally {
        await tsa.close();
      }
    }, 60_000);
  });

  describe('monitor', () => {
    const monitor = (state: string, ...extra: string[]) => cli(['log', 'monitor', '--url', srv.url, '--vkey', vkey, '--state', state, ...extra]);

    it('trusts on first use, then accepts a grown consistent log and saves it; exit 0', async () => {
      const state = tmp.path('state-honest');
      const first = await monitor(state);
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/^FIRST RUN: no checkpoint was saved in .*state-honest; trusting this one on first use \(nothing earlier to compare it with\): ledger\.example\.test\/aer1 size 10, root .*\. Saved\.\n$/);
      expect(readFileSync(state, 'utf8')).toBe(srv.log.latest);
      expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]); // the temporary file was renamed

      const same = await monitor(state);
      expect(same.code).toBe(0);
      expect(same.out).toBe('CONSISTENT: ledger.example.test/aer1 unchanged at size 10 (same root)\n');

      srv.log.appendTimeline(7, 'job-3').publish();
      const grown = await monitor(state, '--json');
      expect(grown.code).toBe(0);
      expect(JSON.parse(grown.out)).toMatchObject({ result: 'consistent', origin: ORIGIN, saved: { size: 10 }, fetched: { size: 17 } });
      expect(readFileSync(state, 'utf8')).toBe(srv.log.latest);
      expect(srv.requests).toContain('/api/ledger/proof/consistency?first=10&second=17');
    });

    it('catches a rewritten history of the same size (different root): FORK, both checkpoints printed, state kept; exit 1', async () => {
      const state = tmp.path('state-fork');
      expect((await monitor(state)).code).toBe(0);
      const saved = readFileSync(state, 'utf8');
      const forked = rewritten();
      forked.publish();
      expect(forked.size).toBe(10);
      srv.log = forked;
      const r = await monitor(state);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^FORK: same size 10, different root \(saved .*, served .*\)\. The log has shown two histories; .*state-fork is kept as it was\.\n/);
      expect(r.out).toContain('Evidence (two checkpoints signed by the log that cannot both be true):');
      for (const line of saved.trim().split('\n').filter(Boolean)) expect(r.out).toContain(`    ${line}`);
      for (const line of forked.latest!.trim().split('\n').filter(Boolean)) expect(r.out).toContain(`    ${line}`);
      expect(readFileSync(state, 'utf8')).toBe(saved);
      // Again: still a fork, still not overwritten.
      const again = await monitor(state, '--json');
      expect(again.code).toBe(1);
      expect(JSON.parse(again.out)).toMatchObject({ result: 'fork', saved_checkpoint: saved, served_checkpoint: forked.latest });
      expect(readFileSync(state, 'utf8')).toBe(saved);
    });

    it('catches a rewritten history that also grew (the consistency proof fails): FORK; exit 1', async () => {
      const state = tmp.path('state-fork-grown');
      expect((await monitor(state)).code).toBe(0);
      const saved = readFileSync(state, 'utf8');
      const forked = rewritten();
      const forkedAt10 = forked.publish(); // the rewritten log also signed size 10: more evidence
      forked.appendTimeline(4, 'job-4').publish();
      srv.log = forked;
      const r = await monitor(state, '--json');
      expect(r.code).toBe(1);
      const out = JSON.parse(r.out);
      expect(out).toMatchObject({ result: 'fork', saved: { size: 10 }, fetched: { size: 14 }, saved_checkpoint: saved, served_checkpoint: forked.latest, log_checkpoint_at_saved_size: forkedAt10 });
      expect(out.error).toMatch(/consistency proof from size 10 to 14 does not verify \(root_mismatch: .*\)/);
      expect(readFileSync(state, 'utf8')).toBe(saved);
      const text = await monitor(state);
      expect(text.code).toBe(1);
      expect(text.out).toMatch(/\n {2}checkpoint the log now serves for size 10 \(.*\/api\/ledger\/checkpoints\/10; signed by the log\):\n/);
      for (const line of forkedAt10.trim().split('\n').filter(Boolean)) expect(text.out).toContain(`    ${line}`);
    });

    it('refuses a smaller tree than the saved one (ROLLBACK), a bad signature and a wrong --vkey; exit 1, state kept', async () => {
      const state = tmp.path('state-rollback');
      expect((await monitor(state)).code).toBe(0);
      const saved = readFileSync(state, 'utf8');
      const smaller = new FakeLog(ORIGIN, logKey.signer).appendTimeline(5).append([receiptEvent(RECEIPT_ID, VALID_RAW)]);
      smaller.publish();
      srv.log = smaller;
      const back = await monitor(state);
      expect(back.code).toBe(1);
      expect(back.out).toMatch(/^ROLLBACK: the log serves size 6, smaller than the saved size 10\./);
      expect(readFileSync(state, 'utf8')).toBe(saved);

      srv.log = honest();
      srv.log.publish();
      const lines = srv.log.latest!.split('\n');
      srv.checkpointOverride = [...lines.slice(0, 4), flip(lines[4], lines[4].length - 20), ...lines.slice(5)].join('\n');
      const bad = await monitor(state);
      expect(bad.code).toBe(1);
      expect(bad.out).toMatch(/^BAD SIGNATURE: the checkpoint served at .*\/checkpoint does not verify with --vkey ledger\.example\.test\/aer1: note_signature_invalid: the signature by ledger\.example\.test\/aer1 \(key [0-9a-f]{8}\) does not verify/);
      expect(bad.out).toContain(`    ${flip(lines[4], lines[4].length - 20)}`);
      expect(readFileSync(state, 'utf8')).toBe(saved);

      srv.checkpointOverride = null;
      const wrongState = tmp.path('state-wrong-key');
      const wrong = await cli(['log', 'monitor', '--url', srv.url, '--vkey', otherKey.verifierKey, '--state', wrongState, '--json']);
      expect(wrong.code).toBe(1);
      expect(JSON.parse(wrong.out)).toMatchObject({ result: 'bad_signature', error: 'note_no_trusted_signature: no signature by a trusted key' });
      expect(existsSync(wrongState)).toBe(false);
    });

    it('refuses a checkpoint without the witness quorum, and accepts one with it (issue 15)', async () => {
      const state = tmp.path('state-quorum');
      srv.log.publish([w1.signer]);
      const ws = ['--witness', w1.verifierKey, '--witness', w2.verifierKey];
      const missing = await monitor(state, ...ws, '--quorum', '2');
      expect(missing.code).toBe(1);
      expect(missing.out).toMatch(/^QUORUM NOT MET: the checkpoint of size 10 is not cosigned by enough witnesses \(1 of 2 witnesses cosigned, 2 needed: witness\.one\.test at /);
      expect(existsSync(state)).toBe(false);
      srv.log.publish([w1.signer, w2.signer]);
      const ok = await monitor(state, ...ws, '--quorum', '2');
      expect(ok.code).toBe(0);
      expect(ok.out).toMatch(/^FIRST RUN/);
    });

    it('exits 2 when the log cannot be reached, answers an error, or the state file does not verify (state kept)', async () => {
      const down = await cli(['log', 'monitor', '--url', closedUrl, '--vkey', vkey, '--state', tmp.path('state-down')]);
      expect(down.code).toBe(2);
      expect(down.err).toMatch(/^aer1: cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
      expect(down.out).toBe('');
      expect(existsSync(tmp.path('state-down'))).toBe(false);

      const hanging = createServer(() => undefined); // accepts, never answers
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
        const slow = await cli(['log', 'monitor', '--url', url, '--vkey', vkey, '--state', tmp.path('state-slow'), '--timeout', '1']);
        expect(slow.code).toBe(2);
        expect(slow.err).toBe(`aer1: cannot reach ${url}: no answer in 1 s\n`);
      } finally {
        hanging.closeAllConnections();
        await new Promise<void>((resolve) => hanging.close(() => resolve()));
      }

      const state = tmp.path('state-errors');
      expect((await monitor(state)).code).toBe(0);
      const saved = readFileSync(state, 'utf8');
      const empty = new FakeLog(ORIGIN, logKey.signer);
      srv.log = empty; // no checkpoint yet: 404
      const notFound = await monitor(state);
      expect(notFound.code).toBe(2);
      expect(notFound.err).toMatch(/\/checkpoint answered 404/);

      const tampered = tmp.write('state-tampered', saved.replace(/\n10\n/, '\n11\n'));
      srv.log = honest();
      srv.log.publish();
      const t = await monitor(tampered);
      expect(t.code).toBe(2);
      expect(t.err).toMatch(/the checkpoint saved in .*state-tampered does not verify with --vkey/);
      expect(readFileSync(tampered, 'utf8')).toBe(saved.replace(/\n10\n/, '\n11\n'));

      const usage = await cli(['log', 'monitor', '--url', srv.url, '--vkey', vkey]);
      expect(usage.code).toBe(2);
      expect(usage.err).toMatch(/--state FILE .* is required/);
      const badUrl = await cli(['log', 'monitor', '--url', 'ftp://x', '--vkey', vkey, '--state', state]);
      expect(badUrl.code).toBe(2);
      expect(badUrl.err).toMatch(/--url must be http or https/);
    });

    it('with --watch, checks until stopped and exits with the worst result seen', async () => {
      const state = tmp.path('state-watch');
      const stdout = new Capture();
      const stop = new AbortController();
      const done = monitorCommand({ url: srv.url, vkey, state, watch: 1 }, { stdout, stderr: new Capture(), stdin: process.stdin }, stop.signal);
      const waitFor = async (re: RegExp): Promise<void> => {
        for (let i = 0; i < 100 && !re.test(stdout.text); i++) await new Promise((r) => setTimeout(r, 50));
        expect(stdout.text).toMatch(re);
      };
      await waitFor(/FIRST RUN/);
      const saved = readFileSync(state, 'utf8');
      const forked = rewritten();
      forked.publish();
      srv.log = forked;
      await waitFor(/FORK/);
      srv.log = honest();
      srv.log.publish();
      await waitFor(/FORK[\s\S]*CONSISTENT/);
      stop.abort();
      expect(await done).toBe(1);
      expect(readFileSync(state, 'utf8')).toBe(saved);
      expect(stdout.text).toMatch(/^\d{4}-\d\d-\d\dT\S+Z FIRST RUN/);
    });
  });

  describe('inclusion', () => {
    const inclusion = (...extra: string[]) => cli(['log', 'inclusion', '--url', srv.url, '--vkey', vkey, ...extra]);

    it('proves a receipt is in the log from the checkpoint, the inclusion proof and the leaf (exit 0)', async () => {
      const r = await inclusion('--receipt', RECEIPT_ID);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`✓ leaf_is_receipt: the leaf is receipt ${RECEIPT_ID}'s ReceiptRecorded event`);
      expect(r.out).toMatch(/^Inclusion: http:\/\/127\.0\.0\.1:\d+, leaf 5 \(checkpoint, inclusion proof and leaf fetched now\)\n/);
      expect(r.out).toContain(`Receipt: ${RECEIPT_ID}: AER-1 verdict VALID`);
      expect(r.out).toContain('Result: VERIFIED: leaf 5 is in log ledger.example.test/aer1 at tree size 10');
      expect(srv.requests).toEqual(expect.arrayContaining([`/api/receipts/${RECEIPT_ID}/proof`, '/checkpoint', '/api/ledger/proof/inclusion?index=5&tree_size=10', '/api/ledger/leaves/5']));
      const byIndex = await inclusion('--index', '2', '--json');
      expect(byIndex.code).toBe(0);
      expect(JSON.parse(byIndex.out)).toMatchObject({ verified: true, leaf_index: 2, record: { position: 3 } });
    });

    it('exits 1 for a receipt the log does not hold, a leaf not yet checkpointed, a substituted leaf, a bad signature; 2 when unreachable', async () => {
      const none = await inclusion('--receipt', '00000000-0000-4000-8000-000000000000');
      expect(none.code).toBe(1);
      expect(none.out).toMatch(/the log holds no receipt 00000000-0000-4000-8000-000000000000 \(404\)/);

      srv.log.appendTimeline(2, 'job-5'); // appended, not yet in a checkpoint
      const later = await inclusion('--index', '11');
      expect(later.code).toBe(1);
      expect(later.out).toMatch(/leaf 11 is not under the latest checkpoint yet \(size 10\)/);

      srv.leafOverride = srv.log.leaves[4];
      const swapped = await inclusion('--receipt', RECEIPT_ID, '--json');
      expect(swapped.code).toBe(1);
      expect(JSON.parse(swapped.out)).toMatchObject({ verified: false, failed: ['leaf_hash'] });
      srv.leafOverride = null;

      srv.receiptIndexOverride = 6; // the other receipt's leaf, served for this one
      const other = await inclusion('--receipt', RECEIPT_ID, '--json');
      expect(other.code).toBe(1);
      expect(JSON.parse(other.out)).toMatchObject({ verified: false, failed: ['receipt', 'leaf_is_receipt'], receipt: { id: BAD_ID } });
      srv.receiptIndexOverride = 4; // a timeline event
      const notReceipt = await inclusion('--receipt', RECEIPT_ID, '--json');
      expect(JSON.parse(notReceipt.out)).toMatchObject({ verified: false, failed: ['leaf_is_receipt'] });
      srv.receiptIndexOverride = null;

      const wrong = await cli(['log', 'inclusion', '--url', srv.url, '--vkey', otherKey.verifierKey, '--index', '1']);
      expect(wrong.code).toBe(1);
      expect(wrong.out).toMatch(/NOT VERIFIED: the log's checkpoint does not verify with --vkey/);

      const down = await cli(['log', 'inclusion', '--url', closedUrl, '--vkey', vkey, '--index', '1']);
      expect(down.code).toBe(2);
      expect(down.err).toMatch(/cannot reach/);
      const neither = await inclusion();
      expect(neither.code).toBe(2);
      expect(neither.err).toMatch(/exactly one of --receipt ID and --index I/);
    });
  });

  describe('the real bin/aer1', () => {
    const bin = join(__dirname, '../../bin/aer1');
    it('monitor --watch runs until SIGTERM and exits 0 on an honest log; verify-proof exits 0', async () => {
      expect(existsSync(join(__dirname, '../../dist/src/cli/commands/log.js'))).toBe(true); // npm run build --silent
      const state = tmp.path('state-bin');
      const child = spawn(process.execPath, [bin, 'log', 'monitor', '--url', srv.url, '--vkey', vkey, '--state', state, '--watch', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      for (let i = 0; i < 200 && !/CONSISTENT/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(err).toBe('');
      expect(out).toMatch(/FIRST RUN[^\n]*\n.*CONSISTENT: ledger\.example\.test\/aer1 unchanged at size 10/s);
      expect(code).toBe(0);

      const file = tmp.write('bin.tlog-proof', srv.log.tlogProof(5));
      const v = spawn(process.execPath, [bin, 'log', 'verify-proof', file, '--vkey', vkey], { stdio: ['ignore', 'pipe', 'pipe'] });
      let vout = '';
      v.stdout.on('data', (d: Buffer) => (vout += d.toString()));
      expect(await new Promise<number | null>((resolve) => v.on('exit', (c) => resolve(c)))).toBe(0);
      expect(vout).toContain('Result: VERIFIED: leaf 5 is in log ledger.example.test/aer1 at tree size 10');
    }, 30_000);
  });
});
