/**
 * Property tests of the verifiers on generated documents. Valid timelines,
 * receipts and workflows are built in test code with the independent
 * reference (test/reference), then verified by src/aer1; single tamperings
 * must be caught with exactly the reason codes the spec assigns them.
 */
import * as fc from 'fast-check';
import { verifyCommitment, verifyReceipt, verifyTimeline, verifyWorkflow } from '../../src/core/aer1';
import {
  RefEntry,
  refBuildTimeline,
  refCoreReceipt,
  refDecodeBase64,
  refEncodeBase64,
  refEntryDigest,
  refIsUtf8,
  refMerkleRoot,
  refSha256Hex,
  refTransportReceipt,
  refWorkflow,
} from './helpers';

const RUNS = { numRuns: 150 };

/* ------------------------------------------------------------- generators */

const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const nonEmpty = (max: number) =>
  fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: max }), fc.string({ unit: anyCodeUnit, minLength: 1, maxLength: max }), fc.string({ minLength: 1, maxLength: max }));
/** A system name that neither starts nor ends with white space: non-space words joined by single spaces. */
const systemName = fc
  .array(fc.string({ unit: fc.constantFrom(...'ABCLMXYZ_-.0123456789\u0141\u00d6\u00e9\u4e2d'.split(''), '\u{1f600}'), minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 })
  .map((words) => words.join(' '));
const provenance = fc.oneof(fc.constant('OBSERVED VIA GATEWAY'), fc.constant('LOGGED BY AGENT'), systemName.map((n) => `EXECUTED BY ${n}`));
const entrySpec = fc.record({
  id: fc.oneof(fc.uuid(), nonEmpty(12)),
  tool: nonEmpty(16),
  provenance_class: provenance,
  bytes: fc.uint8Array({ minLength: 1, maxLength: 48 }),
});
const timelineArb = fc
  .record({ job: nonEmpty(10), entries: fc.array(entrySpec, { minLength: 1, maxLength: 30 }) })
  .map(({ job, entries }) => refBuildTimeline(entries.map((e) => ({ ...e, job_id: job }))));

function commitmentFor(t: RefEntry[]) {
  return { job_id: t[0].job_id, final_entry_digest: refEntryDigest(t[t.length - 1]), entry_count: t.length, published_at: '2026-10-02T08:00:00Z' };
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

/* ----------------------------------------------------------------- chains */

describe('generated timelines', () => {
  test('a generated -07 timeline verifies valid and names the reference final digest', () => {
    fc.assert(
      fc.property(timelineArb, (t) => {
        const r = verifyTimeline(t);
        expect(r.reasons).toEqual([]);
        expect(r.verdict).toBe('valid');
        expect(r.construction).toBe('-07');
        expect(r.entry_count).toBe(t.length);
        expect(r.final_entry_digest).toBe(refEntryDigest(t[t.length - 1]));
        expect(r.entries?.map((e) => e.entry_digest)).toEqual(t.map(refEntryDigest));
        const c = verifyCommitment({ timeline: t, commitment: commitmentFor(t) });
        expect(c.verdict).toBe('valid');
        expect(c.binding).toBe(true);
      }),
      RUNS,
    );
  });

  test('the same entries linked with the -06 construction are historical, never valid', () => {
    fc.assert(
      fc.property(fc.array(entrySpec, { minLength: 2, maxLength: 12 }), (specs) => {
        const t = refBuildTimeline(
          specs.map((e) => ({ ...e, job_id: 'job-06' })),
          '-06',
        );
        const r = verifyTimeline(t);
        expect(r.verdict).toBe('historical');
        expect(r.reasons).toEqual(['historical_06_construction']);
      }),
      { numRuns: 100 },
    );
  });

  test('flipping any bit of any entry\'s canonical bytes breaks the next link, or for the last entry the commitment', () => {
    fc.assert(
      fc.property(timelineArb, fc.nat(), fc.nat(), (t, pickEntry, pickBit) => {
        const commitment = commitmentFor(t);
        const i = pickEntry % t.length;
        const b = Uint8Array.from(refDecodeBase64(t[i].canonical_bytes) as Uint8Array);
        const bit = pickBit % (b.length * 8);
        b[bit >> 3] ^= 1 << (bit & 7);
        const tampered = t.map((e) => ({ ...e }));
        tampered[i].canonical_bytes = refEncodeBase64(b);

        const r = verifyTimeline(tampered);
        const c = verifyCommitment({ timeline: tampered, commitment });
        expect(c.binding).toBe(false);
        if (i < t.length - 1) {
          expect(r.verdict).toBe('invalid');
          expect(r.reasons).toEqual(['link_mismatch']);
        } else {
          // S7.3: the last entry has no successor; only the endpoint commitment sees it.
          expect(r.verdict).toBe('valid');
          expect(c.verdict).toBe('invalid');
          expect(c.reasons).toEqual(['commitment_final_digest_mismatch']);
        }
      }),
      RUNS,
    );
  });

  const MEMBERS = ['seq', 'job_id', 'close', 'id', 'tool', 'provenance_class', 'prev_digest'] as const;

  test('changing any one digest-bound member of any entry is caught with the spec\'s reason codes', () => {
    fc.assert(
      fc.property(timelineArb, fc.nat(), fc.constantFrom(...MEMBERS), fc.integer({ min: 1, max: 5 }), (t, pickEntry, member, delta) => {
        const n = t.length;
        const i = pickEntry % n;
        const last = i === n - 1;
        const commitment = commitmentFor(t);
        const tampered = t.map((e) => ({ ...e }));
        const e = tampered[i];
        switch (member) {
          case 'seq':
            e.seq = delta % 2 === 0 ? e.seq + delta : e.seq - delta;
            break;
          case 'job_id':
            e.job_id = e.job_id + '\u0000';
            break;
          case 'close':
            if (last) delete e.close;
            else e.close = true;
            break;
          case 'id':
            e.id = e.id + 'x';
            break;
          case 'tool':
            e.tool = 'x' + e.tool;
            break;
          case 'provenance_class':
            e.provenance_class = e.provenance_class === 'LOGGED BY AGENT' ? 'OBSERVED VIA GATEWAY' : 'LOGGED BY AGENT';
            break;
          case 'prev_digest': {
            const k = delta % 64;
            const c = e.prev_digest[k];
            e.prev_digest = e.prev_digest.slice(0, k) + (c === 'a' ? 'b' : 'a') + e.prev_digest.slice(k + 1);
            break;
          }
        }

        const expected = new Set<string>();
        if (!last) expected.add('link_mismatch'); // the entry's digest changed, so the next link fails
        if (member === 'seq') expected.add('seq_not_contiguous');
        if (member === 'job_id' && n > 1) expected.add('job_id_mismatch');
        if (member === 'close') expected.add(last ? 'not_closed' : 'close_not_last');
        if (member === 'prev_digest') expected.add(i === 0 ? 'genesis_prev_digest' : 'link_mismatch');

        const r = verifyTimeline(tampered);
        expect(sorted(r.reasons)).toEqual(sorted(expected));
        expect(r.verdict).toBe(expected.size > 0 ? 'invalid' : 'valid');

        // Whatever the chain alone says, the endpoint commitment to the original never binds the tampered timeline.
        const c = verifyCommitment({ timeline: tampered, commitment });
        expect(c.verdict).toBe('invalid');
        expect(c.binding).toBe(false);
        if (expected.size === 0) {
          // Only a relabeled last entry (or the job of a one-entry timeline) gets this far.
          expect(last).toBe(true);
          expect(c.reasons).toContain('commitment_final_digest_mismatch');
          if (member === 'job_id') expect(c.reasons).toContain('commitment_job_id_mismatch');
        }
      }),
      { numRuns: 200 },
    );
  });

  test('dropping entries from the end and rebuilding verifies as a chain, and only the commitment sees it (S7.3)', () => {
    fc.assert(
      fc.property(fc.array(entrySpec, { minLength: 2, maxLength: 20 }), fc.nat(), (specs, cut) => {
        const full = refBuildTimeline(specs.map((e) => ({ ...e, job_id: 'job-trunc' })));
        const keep = 1 + (cut % (specs.length - 1));
        const truncated = refBuildTimeline(specs.slice(0, keep).map((e) => ({ ...e, job_id: 'job-trunc' })));
        expect(verifyTimeline(truncated).verdict).toBe('valid');
        const c = verifyCommitment({ timeline: truncated, commitment: commitmentFor(full) });
        expect(sorted(c.reasons)).toEqual(['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch']);
      }),
      { numRuns: 100 },
    );
  });
});

/* --------------------------------------------------------------- receipts */

const utf8Bytes = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((s) => Buffer.from(s, 'utf8'));
const receiptArb = fc.record({ id: fc.uuid(), bytes: utf8Bytes, transport: fc.boolean(), prov: provenance }).map(({ id, bytes, transport, prov }) => ({
  bytes,
  receipt: transport ? refTransportReceipt(id, bytes, prov) : refCoreReceipt(id, bytes, prov),
}));

describe('generated receipts', () => {
  test('a receipt over UTF-8 bytes verifies valid in both forms', () => {
    fc.assert(
      fc.property(receiptArb, ({ bytes, receipt }) => {
        const r = verifyReceipt(receipt);
        expect(r.reasons).toEqual([]);
        expect(r.verdict).toBe('valid');
        expect(r.computed.output_hash).toBe('sha256:' + refSha256Hex(bytes));
        expect(r.computed.canonical_byte_length).toBe(bytes.length);
      }),
      RUNS,
    );
  });

  test('flipping any bit of the canonical bytes fails the commitment (and UTF-8 when the result is not UTF-8)', () => {
    fc.assert(
      fc.property(receiptArb, fc.nat(), ({ bytes, receipt }, pickBit) => {
        const b = Uint8Array.from(bytes);
        const bit = pickBit % (b.length * 8);
        b[bit >> 3] ^= 1 << (bit & 7);
        const r = verifyReceipt({ ...receipt, canonical_bytes: refEncodeBase64(b) });
        expect(r.verdict).toBe('invalid');
        const expected = refIsUtf8(b) ? ['output_hash_mismatch'] : ['invalid_utf8', 'output_hash_mismatch'];
        expect(sorted(r.reasons)).toEqual(expected);
      }),
      RUNS,
    );
  });

  test('a receipt whose hash matches arbitrary bytes is valid exactly when the bytes are UTF-8 (S4)', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uint8Array({ maxLength: 24 }), (id, b) => {
        const r = verifyReceipt(refCoreReceipt(id, b));
        expect(r.reasons).toEqual(refIsUtf8(b) ? [] : ['invalid_utf8']);
      }),
      RUNS,
    );
  });
});

/* -------------------------------------------------------------- workflows */

const workflowArb = fc
  .record({
    ids: fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 20, selector: (s) => s.toLowerCase() }),
    upper: fc.array(fc.boolean(), { maxLength: 20 }),
    wf: fc.uuid(),
    rc: fc.uuid(),
  })
  .filter(({ wf, rc }) => wf.toLowerCase() !== rc.toLowerCase())
  .map(({ ids, upper, wf, rc }) => {
    const stepIds = ids.map((id, i) => (upper[i] ? id.toUpperCase() : id));
    return { stepIds, doc: refWorkflow(wf, rc, stepIds) };
  });

describe('generated workflows', () => {
  test('with their step receipts they verify valid; without them, incomplete', () => {
    fc.assert(
      fc.property(workflowArb, ({ stepIds, doc }) => {
        const r = verifyWorkflow(doc);
        expect(r.reasons).toEqual([]);
        expect(r.verdict).toBe('valid');
        expect(r.merkle.computed).toBe(refMerkleRoot(stepIds));
        const alone = verifyWorkflow(doc.workflow);
        expect(alone.verdict).toBe('incomplete');
        expect(alone.reasons).toEqual(['step_receipts_unavailable']);
      }),
      RUNS,
    );
  });

  test('swapping two steps (seq renumbered) changes the root; dropping a receipt is incomplete; repeating the last id is rejected', () => {
    fc.assert(
      fc.property(workflowArb, fc.nat(), fc.nat(), ({ stepIds, doc }, a, b) => {
        const n = stepIds.length;
        const steps = doc.workflow.steps as Array<Record<string, unknown>>;
        if (n >= 2) {
          const i = a % n;
          const j = (i + 1 + (b % (n - 1))) % n;
          const swapped = steps.map((s) => ({ ...s }));
          [swapped[i], swapped[j]] = [swapped[j], swapped[i]];
          swapped.forEach((s, k) => (s.seq = k + 1));
          const r = verifyWorkflow({ ...doc, workflow: { ...doc.workflow, steps: swapped } });
          expect(r.reasons).toEqual(['merkle_root_mismatch']);
        }
        const dropped = verifyWorkflow({ ...doc, step_receipts: doc.step_receipts.filter((_, k) => k !== a % n) });
        expect(dropped.verdict).toBe('incomplete');
        expect(dropped.reasons).toEqual(['step_receipt_missing']);

        const dup = [...steps, { ...steps[n - 1], seq: n + 1 }];
        const dupIds = [...stepIds, stepIds[n - 1]];
        const sameRoot = refMerkleRoot(dupIds) === doc.workflow.merkle_root;
        const r = verifyWorkflow({ ...doc, workflow: { ...doc.workflow, steps: dup } });
        expect(r.verdict).toBe('invalid');
        // With an odd count the duplicated tail recomputes to the same root (S8.2 step 3): only the duplicate rule sees it.
        expect(sorted(r.reasons)).toEqual(sameRoot ? ['duplicate_step_receipt_id'] : ['duplicate_step_receipt_id', 'merkle_root_mismatch']);
        if (n % 2 === 1 && n > 1) expect(sameRoot).toBe(true);
      }),
      RUNS,
    );
  });
});
