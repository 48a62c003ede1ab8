/**
 * Property tests cross-checking the fast primitives of src/aer1 against the
 * deliberately simple reference in test/reference on generated inputs.
 */
import * as fc from 'fast-check';
import { createHash } from 'node:crypto';
import {
  decodeStrictBase64,
  EntryDigestInputWriter,
  entryDigestInput,
  isRfc3339,
  isStrictBase64,
  isStrictUtf8,
  merkleRoot,
  sha256HexOfStrictBase64,
  writeJsonString,
} from '../../src/core/aer1';
import { refCanonicalEntry, refDecodeBase64, refEncodeBase64, refIsRfc3339, refIsUtf8, refMerkleRoot, refWriteJsonString } from './helpers';

const RUNS = { numRuns: 200 };

/* ------------------------------------------------------------------ base64 */

const B64_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n\r\t.';

/** One random edit of a string: insert, delete or replace a character (from B64_CHARS or any code unit). */
const mutation = fc.record({
  op: fc.constantFrom('insert', 'delete', 'replace'),
  at: fc.nat(),
  ch: fc.oneof(fc.constantFrom(...B64_CHARS), fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))),
});
function mutate(s: string, edits: Array<{ op: string; at: number; ch: string }>): string {
  let out = s;
  for (const { op, at, ch } of edits) {
    const i = out.length === 0 ? 0 : at % (out.length + (op === 'insert' ? 1 : 0));
    if (op === 'insert') out = out.slice(0, i) + ch + out.slice(i);
    else if (op === 'delete') out = out.slice(0, i) + out.slice(i + 1);
    else out = out.slice(0, i) + ch + out.slice(i + 1);
  }
  return out;
}

/** Compare fast and reference decoders on one string. */
function sameBase64Answer(s: string): void {
  const fast = decodeStrictBase64(s);
  const ref = refDecodeBase64(s);
  expect(isStrictBase64(s)).toBe(ref !== null);
  if (ref === null) expect(fast).toBeNull();
  else expect(fast === null ? null : [...fast]).toEqual([...ref]);
  // The verifier's decode-and-hash path (reused buffer) gives the same answer.
  expect(sha256HexOfStrictBase64(s)).toBe(ref === null ? null : createHash('sha256').update(ref).digest('hex'));
}

describe('base64: fast vs reference', () => {
  test('random bytes round-trip through both encoders and decoders', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (b) => {
        const s = Buffer.from(b).toString('base64');
        expect(refEncodeBase64(b)).toBe(s);
        expect(isStrictBase64(s)).toBe(true);
        expect([...(decodeStrictBase64(s) as Buffer)]).toEqual([...b]);
        expect([...(refDecodeBase64(s) as Uint8Array)]).toEqual([...b]);
      }),
      RUNS,
    );
  });

  test('mutated base64 strings get the same answer from both', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), (b, edits) => {
        sameBase64Answer(mutate(Buffer.from(b).toString('base64'), edits));
      }),
      { numRuns: 400 },
    );
  });

  // Up to 512 characters the core validates and decodes in one pass; longer strings go through a regex and
  // Node's decoder; past 48 KiB of bytes the hash path allocates. Each side of each boundary is covered.
  test('mutated base64 strings on both sides of the one-pass limit (512 characters) get the same answer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 370, maxLength: 400 }), fc.array(mutation, { minLength: 0, maxLength: 2 }), (b, edits) => {
        sameBase64Answer(mutate(Buffer.from(b).toString('base64'), edits));
      }),
      { numRuns: 300 },
    );
  });

  test('canonical bytes larger than the reused decode buffer (48 KiB), valid and edited', () => {
    const b = Buffer.alloc(48 * 1024 + 2, 7);
    b[100] = 200;
    const s = b.toString('base64');
    sameBase64Answer(s);
    sameBase64Answer(s.slice(0, 1000) + '-' + s.slice(1001));
    sameBase64Answer(s.slice(0, -2) + 'B='); // pad bits set
    const exact = Buffer.alloc(48 * 1024, 1).toString('base64');
    sameBase64Answer(exact);
    sameBase64Answer(exact.slice(0, -1) + '!');
  });

  test('a hash through the reused buffer is not affected by a longer one before it', () => {
    const long = Buffer.alloc(300, 0xff).toString('base64');
    const short = Buffer.from([1, 2, 3, 4]).toString('base64');
    sha256HexOfStrictBase64(long);
    expect(sha256HexOfStrictBase64(short)).toBe(createHash('sha256').update(Buffer.from([1, 2, 3, 4])).digest('hex'));
  });

  test('short strings over the base64-ish alphabet get the same answer from both', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...B64_CHARS), maxLength: 12 }), sameBase64Answer),
      { numRuns: 400 },
    );
  });

  test('every last-character variant of a padded quad: accepted exactly when its pad bits are zero', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 20 }).filter((b) => b.length % 3 !== 0), fc.nat(63), (b, v) => {
        const s = Buffer.from(b).toString('base64');
        const body = s.replace(/=+$/, '');
        const variant = body.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[v] + s.slice(body.length);
        sameBase64Answer(variant);
        const padBits = s.endsWith('==') ? 0x0f : 0x03;
        expect(isStrictBase64(variant)).toBe((v & padBits) === 0);
      }),
      RUNS,
    );
  });
});

/* ------------------------------------------------------------------- UTF-8 */

/** Bytes biased towards UTF-8 boundaries: lead bytes, continuation edges and invalid bytes. */
const edgeByte = fc.oneof(
  fc.constantFrom(0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xfe, 0xff),
  fc.integer({ min: 0x80, max: 0xbf }),
);

describe('UTF-8: fast vs TextDecoder(fatal)', () => {
  test('arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        expect(isStrictUtf8(b)).toBe(refIsUtf8(b));
      }),
      { numRuns: 300 },
    );
  });

  test('bytes biased to sequence boundaries', () => {
    fc.assert(
      fc.property(fc.array(edgeByte, { maxLength: 12 }), (xs) => {
        const b = Uint8Array.from(xs);
        expect(isStrictUtf8(b)).toBe(refIsUtf8(b));
      }),
      { numRuns: 1000 },
    );
  });

  test('UTF-8 of random strings is valid; truncating or editing it gives the same answer from both', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 20 }), fc.nat(), fc.nat(255), fc.boolean(), (s, at, byte, truncate) => {
        const b = Buffer.from(s, 'utf8');
        expect(isStrictUtf8(b)).toBe(true);
        expect(refIsUtf8(b)).toBe(true);
        if (b.length === 0) return;
        const i = at % b.length;
        const edited = truncate ? b.subarray(0, i) : Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i + 1)]);
        expect(isStrictUtf8(edited)).toBe(refIsUtf8(edited));
      }),
      RUNS,
    );
  });

  test('every single code point encodes to valid UTF-8 and every 2-byte sequence agrees', () => {
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) {
        const x = Uint8Array.of(a, b);
        if (isStrictUtf8(x) !== refIsUtf8(x)) throw new Error(`disagree on ${a.toString(16)} ${b.toString(16)}`);
      }
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff), (c) => {
        expect(isStrictUtf8(Buffer.from(String.fromCodePoint(c), 'utf8'))).toBe(true);
      }),
      RUNS,
    );
  });
});

/* ---------------------------------------------------------------- RFC 3339 */

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const dateTimeParts = fc.record({
  y: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(1900, 2000, 2024, 2026, 2100, 2400)),
  mo: fc.integer({ min: 0, max: 13 }),
  d: fc.integer({ min: 0, max: 32 }),
  h: fc.integer({ min: 0, max: 25 }),
  mi: fc.integer({ min: 0, max: 61 }),
  s: fc.integer({ min: 0, max: 61 }),
  frac: fc.option(fc.stringMatching(/^[0-9]{0,4}$/), { nil: undefined }),
  sep: fc.constantFrom('T', 't', ' ', 'T', 'T'),
  tz: fc.oneof(fc.constantFrom('Z', 'z', '', 'UTC'), fc.record({ sign: fc.constantFrom('+', '-'), oh: fc.integer({ min: 0, max: 25 }), om: fc.integer({ min: 0, max: 61 }) })),
});
function formatDateTime(p: {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  frac: string | undefined;
  sep: string;
  tz: string | { sign: string; oh: number; om: number };
}): string {
  const tz = typeof p.tz === 'string' ? p.tz : `${p.tz.sign}${pad(p.tz.oh, 2)}:${pad(p.tz.om, 2)}`;
  return `${pad(p.y, 4)}-${pad(p.mo, 2)}-${pad(p.d, 2)}${p.sep}${pad(p.h, 2)}:${pad(p.mi, 2)}:${pad(p.s, 2)}${p.frac === undefined ? '' : '.' + p.frac}${tz}`;
}

describe('RFC 3339: fast vs Date round trip', () => {
  test('generated date-times (valid and out of range) get the same answer from both', () => {
    fc.assert(
      fc.property(dateTimeParts, (p) => {
        const s = formatDateTime(p);
        expect(isRfc3339(s)).toBe(refIsRfc3339(s));
      }),
      { numRuns: 1000 },
    );
  });

  test('in-range generated date-times are accepted by both', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), fc.integer({ min: -1439, max: 1439 }), (d, offsetMin) => {
        const local = new Date(d.getTime() + offsetMin * 60_000);
        if (local.getUTCFullYear() < 0 || local.getUTCFullYear() > 9999) return;
        const iso = local.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
        const sign = offsetMin < 0 ? '-' : '+';
        const a = Math.abs(offsetMin);
        const s = iso.slice(0, 23) + `${sign}${pad(Math.floor(a / 60), 2)}:${pad(a % 60, 2)}`;
        expect(isRfc3339(s)).toBe(true);
        expect(refIsRfc3339(s)).toBe(true);
      }),
      RUNS,
    );
  });

  test('mutated date-times get the same answer from both', () => {
    fc.assert(
      fc.property(dateTimeParts, fc.array(mutation, { minLength: 1, maxLength: 2 }), (p, edits) => {
        const s = mutate(formatDateTime(p), edits.map((e) => ({ ...e, ch: '0123456789:-+.TtZz '[e.at % 19] })));
        expect(isRfc3339(s)).toBe(refIsRfc3339(s));
      }),
      { numRuns: 500 },
    );
  });
});

/* ------------------------------------------------------- S7.1 canonical writer */

/** Any UTF-16 code unit, including lone surrogates. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'binary-ascii', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: anyCodeUnit, maxLength: 20 }),
);

describe('canonical JSON writer: fast vs JSON.stringify + ASCII post-processing', () => {
  test('writeJsonString agrees with the reference, is ASCII-only and parses back', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const w = writeJsonString(s);
        expect(w).toBe(refWriteJsonString(s));
        expect(/^"[\x20-\x7e]*"$/.test(w)).toBe(true);
        expect(JSON.parse(w)).toBe(s);
      }),
      { numRuns: 500 },
    );
  });

  test('entryDigestInput agrees with the reference object writer', () => {
    fc.assert(
      fc.property(
        fc.record({
          close: fc.boolean(),
          id: anyString,
          job_id: anyString,
          output_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
          prev_digest: anyString,
          provenance_class: anyString,
          seq: fc.maxSafeInteger(),
          tool: anyString,
        }),
        (m) => {
          expect(entryDigestInput(m)).toBe(refCanonicalEntry(m));
          expect(JSON.parse(entryDigestInput(m))).toEqual(m);
        },
      ),
      RUNS,
    );
  });

  test('EntryDigestInputWriter (kept parts) writes what entryDigestInput writes, entry after entry', () => {
    // Few distinct job ids, classes and tools so that kept parts are reused; some need escaping.
    const repeated = fc.constantFrom('job-1', 'LOGGED BY AGENT', 'caf\u00e9', 'tab\there', 'quote"d', '\u{1F600}', '');
    const member = fc.oneof(repeated, anyString);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            close: fc.boolean(),
            id: anyString,
            job_id: member,
            output_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
            prev_digest: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), anyString),
            provenance_class: member,
            seq: fc.maxSafeInteger(),
            tool: member,
          }),
          { minLength: 1, maxLength: 12 },
        ),
        (entries) => {
          const writer = new EntryDigestInputWriter();
          for (const m of entries) {
            const hex = /^[0-9a-f]{64}$/.test(m.prev_digest);
            expect(writer.write(m.close, m.id, m.job_id, m.output_hash, m.prev_digest, m.provenance_class, m.seq, m.tool, hex)).toBe(refCanonicalEntry(m));
          }
        },
      ),
      RUNS,
    );
  });
});

/* ------------------------------------------------------------- S8.1 Merkle */

describe('Merkle root: fast vs recursive list construction', () => {
  test('1..70 random UUIDs (either case)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase())), { minLength: 1, maxLength: 70 }), (ids) => {
        expect(merkleRoot(ids)).toBe(refMerkleRoot(ids));
      }),
      RUNS,
    );
  });

  test('every size from 1 to 70 over the same id pool', () => {
    const pool = Array.from({ length: 70 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const roots = new Set<string>();
    for (let n = 1; n <= 70; n++) {
      const r = merkleRoot(pool.slice(0, n));
      expect(r).toBe(refMerkleRoot(pool.slice(0, n)));
      roots.add(r as string);
    }
    expect(roots.size).toBe(70);
  });

  test('non-ASCII id strings are hashed as UTF-8 by both', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 9 }), (ids) => {
        expect(merkleRoot(ids)).toBe(refMerkleRoot(ids));
      }),
      RUNS,
    );
  });
});
