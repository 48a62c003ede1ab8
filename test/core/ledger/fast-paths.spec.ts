/**
 * The format 3 writer's fast paths give exactly what the straightforward
 * code gives, over random inputs: the payload commitment hashed from a
 * reused buffer (against a Hash fed the salt, then the payload's UTF-8), the
 * public ids written with names sorted once per type (against
 * `publicIdsText(publicIdsOf(...))`), and the salts cut from one pool
 * (each 32 bytes, never handed out twice, never changed afterwards).
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { COMMITMENT_SCRATCH_MAX, eventHashInput, payloadCommitment, payloadCommitmentReference, publicIdsText } from '../../../src/core/ledger/event-hash';
import { PUBLIC_IDS, publicIdsOf, publicIdsTextOf } from '../../../src/core/ledger/public-ids';
import { SaltPool } from '../../../src/ledger/salt-pool';

/** Any UTF-16 text: lone surrogates, astral characters, controls, ASCII. */
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 50 }), fc.string({ maxLength: 50 }), fc.string({ unit: fc.constantFrom('\ud800', '\udfff', 'é', '😀', '"', '\\', '\u007f', '\u0000'), maxLength: 40 }));

describe('payloadCommitment (reused buffer, one hash call)', () => {
  it('equals SHA-256(salt || UTF-8 of the payload) computed with a Hash, for any text and bytes, in any order of sizes', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uint8Array({ minLength: 0, maxLength: 64 }), fc.oneof(anyText, fc.uint8Array({ maxLength: 600 }))), { minLength: 1, maxLength: 8 }), (calls) => {
        for (const [saltBytes, p] of calls) {
          const salt = Buffer.from(saltBytes);
          const payload = typeof p === 'string' ? p : Buffer.from(p);
          const reference = 'sha256:' + createHash('sha256').update(salt).update(typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload).digest('hex');
          expect(payloadCommitment(salt, payload)).toBe(reference);
          expect(payloadCommitmentReference(salt, payload)).toBe(reference);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is right on both sides of the buffer growth and of the streamed limit, and after a larger payload has used the buffer', () => {
    const salt = Buffer.alloc(32, 7);
    const sizes = [0, 1, 16 * 1024 - 32, 16 * 1024, 100_000, Math.floor((COMMITMENT_SCRATCH_MAX - 32) / 3), Math.floor((COMMITMENT_SCRATCH_MAX - 32) / 3) + 1, COMMITMENT_SCRATCH_MAX, 5, 2 * COMMITMENT_SCRATCH_MAX];
    for (const n of sizes) {
      const text = 'é😀a'.repeat(Math.ceil(n / 4)).slice(0, n);
      expect(payloadCommitment(salt, text)).toBe(payloadCommitmentReference(salt, text));
      const bytes = Buffer.alloc(n, 0xab);
      expect(payloadCommitment(salt, bytes)).toBe(payloadCommitmentReference(salt, bytes));
    }
    // A known answer: SHA-256 of 32 zero bytes then "{}".
    expect(payloadCommitment(Buffer.alloc(32), '{}')).toBe('sha256:' + createHash('sha256').update(Buffer.concat([Buffer.alloc(32), Buffer.from('{}')])).digest('hex'));
  });
});

describe('publicIdsTextOf (names sorted once per type)', () => {
  const members = [...new Set(Object.values(PUBLIC_IDS).flatMap((spec) => spec.map(([, m]) => m)))];
  const value = fc.oneof(
    anyText,
    fc.integer(),
    fc.nat(),
    fc.constantFrom(0, -1, 1.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, -0),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.nat(), { maxKeys: 2 }),
  );
  const data = fc.oneof(
    { weight: 6, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...members), fc.string({ maxLength: 8 })), value, { maxKeys: 8 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, 'text', 5, true, [], ['a']) },
  );
  // Types the ledger writes, and others (never a name Object.prototype has: the reference would look it up there).
  const type = fc.oneof(fc.constantFrom(...Object.keys(PUBLIC_IDS)), fc.string({ maxLength: 12 }).filter((t) => !(t in {})));

  it('writes exactly publicIdsText(publicIdsOf(type, data)) for any type and data', () => {
    fc.assert(
      fc.property(type, data, (t, d) => {
        expect(publicIdsTextOf(t, d)).toBe(publicIdsText(publicIdsOf(t, d)));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes every listed member of every type in code-point order of the names', () => {
    expect(publicIdsTextOf('TimelineEntryAppended', { seq: 3, job_id: 'job-é', receipt_id: 'r-1', tool: 'x' })).toBe('{"job_id":"job-\\u00e9","receipt_id":"r-1","seq":3}');
    expect(publicIdsTextOf('PlanAmended', { plan_id: 'p', version: 2 })).toBe('{"plan_id":"p","plan_version":2}');
    expect(publicIdsTextOf('ReceiptRecorded', { id: 'a', raw: '{}' })).toBe('{"receipt_id":"a"}');
    expect(publicIdsTextOf('Unknown', { id: 'a' })).toBe('{}');
  });

  it('gives the same format 3 leaf as the straightforward code', () => {
    fc.assert(
      fc.property(type, data, fc.uint8Array({ minLength: 32, maxLength: 32 }), anyText, (t, d, s, key) => {
        const salt = Buffer.from(s);
        const payload = JSON.stringify(d) ?? 'null';
        const base = { position: 9, stream_id: 'receipt:x', stream_position: 1, type: t, data: payload, recorded_at: '2026-12-02T00:00:00.000Z', prev_hash: 'b'.repeat(64), format: 3, key_id: key, key_name: key, stream_prev: 0 };
        const fast = eventHashInput({ ...base, public_ids: publicIdsTextOf(t, d), payload_commitment: payloadCommitment(salt, payload) });
        const plain = eventHashInput({ ...base, public_ids: publicIdsText(publicIdsOf(t, d)), payload_commitment: payloadCommitmentReference(salt, payload) });
        expect(fast).toBe(plain);
      }),
      { numRuns: 500 },
    );
  });
});

describe('SaltPool', () => {
  it('hands out 32-byte salts, each once, that keep their bytes after the pool is refilled', () => {
    const pool = new SaltPool();
    const first = pool.next();
    const copy = Buffer.from(first);
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const s = pool.next();
      expect(s.length).toBe(32);
      seen.add(s.toString('hex'));
    }
    expect(seen.size).toBe(5000);
    expect(seen.has(copy.toString('hex'))).toBe(false);
    expect(first.equals(copy)).toBe(true);
    // Not zeros: the bytes come from the CSPRNG.
    expect(first.equals(Buffer.alloc(32))).toBe(false);
  });
});
