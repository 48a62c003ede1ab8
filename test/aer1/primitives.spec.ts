/**
 * Unit tests of the small functions of the AER-1 core, with regression cases
 * for the implementation faults the spec README and the "three mistakes"
 * article describe (lenient decoders, replacement-character UTF-8, rolled-over
 * dates, non-ASCII-leaving JSON writers, case-insensitive hex, Merkle roots
 * over the wrong leaves or with the odd leaf promoted).
 *
 * Expected digests below were computed independently (Python hashlib/json with
 * ensure_ascii, and test/reference) and are written out as literals.
 */
import { createHash } from 'node:crypto';
import {
  daysInMonth,
  decodeStrictBase64,
  detectKind,
  entryDigest,
  entryDigestInput,
  isHex64,
  isLeapYear,
  isOutputHash,
  isRfc3339,
  isStrictBase64,
  isStrictUtf8,
  isUuid,
  MERKLE_CONSTRUCTION,
  merkleRoot,
  provenanceKind,
  sha256Hex,
  TimelineVerifier,
  uuidKey,
  verifyCommitment,
  verifyDocument,
  verifyReceipt,
  verifyTimeline,
  verifyWorkflow,
  writeJsonString,
  ZERO_DIGEST,
} from '../../src/core/aer1';
import {
  refBuildTimeline,
  refCoreReceipt,
  refEncodeBase64,
  refEntryDigest,
  refEntrySpec,
  refMerkleRoot,
  refRelink,
  refTransportReceipt,
  refWorkflow,
} from './helpers';

const sha = (b: string | Uint8Array): string => createHash('sha256').update(b).digest('hex');
const bytes = (...xs: number[]): Uint8Array => Uint8Array.from(xs);

/* ===================================================================== base64 */

describe('isStrictBase64 / decodeStrictBase64 (S4, S7.1, reading 1)', () => {
  test.each([
    ['', []],
    ['YQ==', [0x61]],
    ['YWI=', [0x61, 0x62]],
    ['YWJj', [0x61, 0x62, 0x63]],
    ['AAAA', [0, 0, 0]],
    ['+/8=', [0xfb, 0xff]],
    ['////', [0xff, 0xff, 0xff]],
    ['AA==', [0]],
    ['eyJzdGVwIjoxLCJqb2IiOiJqb2ItYWxwaGEifQ==', [...Buffer.from('{"step":1,"job":"job-alpha"}')]],
  ])('accepts %j', (s, expected) => {
    expect(isStrictBase64(s)).toBe(true);
    const d = decodeStrictBase64(s);
    expect(d).not.toBeNull();
    expect([...(d as Buffer)]).toEqual(expected);
  });

  test.each([
    ['YQ', 'unpadded'],
    ['YWI', 'unpadded'],
    ['YQ=', 'short padding'],
    ['YQ===', 'too much padding'],
    ['Y===', 'three pad characters'],
    ['====', 'padding only'],
    ['=YQ=', 'padding first'],
    ['YQ=A', 'data after a pad character'],
    ['YQ==YQ==', 'data after padding (two concatenated blocks)'],
    ['YWI=YWI=', 'data after single padding'],
    ['YR==', 'non-zero pad bits (two pads)'],
    ['YQ==\n', 'trailing newline'],
    ['YWJ=', 'non-zero pad bits (one pad)'],
    ['YWJj YWJ', 'a space inside'],
    ['YWJj\nYWJ', 'a line break inside'],
    ['YWJj\r\nYWJjZA==', 'CRLF inside (MIME style)'],
    ['\tYWJ', 'leading tab'],
    ['-_8=', 'base64url alphabet'],
    ['YWJj-_-_', 'base64url alphabet, length a multiple of 4'],
    ['YWJj\u00e9ZA=', 'a non-ASCII character'],
    ['YWJj\u{1d400}Z', 'an astral character'],
    ['YQ%3D', 'percent-encoded padding'],
    ['YWJj.A==', 'a dot'],
  ])('rejects %j (%s)', (s) => {
    expect(isStrictBase64(s)).toBe(false);
    expect(decodeStrictBase64(s)).toBeNull();
  });

  test('rejects inputs that Node\'s lenient decoder silently accepts (regression: lenient decoders)', () => {
    // Buffer.from(..., 'base64') repairs all of these; a verifier must not.
    const lenient: Array<[string, string]> = [
      ['YQ==YQ==', 'a'],
      ['YR==', 'a'],
      ['YW\nJj', 'abc'],
      ['YW Jj', 'abc'],
      ['YWJj-_8', 'abc\u00fb\u00ff'],
      ['YQ', 'a'],
    ];
    for (const [s, text] of lenient) {
      expect(Buffer.from(s, 'base64').toString('latin1')).toBe(text);
      expect(decodeStrictBase64(s)).toBeNull();
    }
  });

  test('decodeStrictBase64 returns null for non-strings, never throws', () => {
    for (const v of [undefined, null, 0, 12, true, {}, [], ['YQ=='], Buffer.from('YQ==')]) {
      expect(decodeStrictBase64(v)).toBeNull();
    }
  });

  test('a decoded value re-encodes to the same string', () => {
    for (let n = 0; n < 40; n++) {
      const b = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff));
      const s = b.toString('base64');
      expect(isStrictBase64(s)).toBe(true);
      expect((decodeStrictBase64(s) as Buffer).equals(b)).toBe(true);
    }
  });
});

/* ====================================================================== UTF-8 */

describe('isStrictUtf8 (S4, reading 2)', () => {
  test.each([
    ['empty', []],
    ['ASCII', [0x7b, 0x7d]],
    ['BOM', [0xef, 0xbb, 0xbf, 0x61]],
    ['U+0000', [0x61, 0x00, 0x62]],
    ['U+0080', [0xc2, 0x80]],
    ['U+07FF', [0xdf, 0xbf]],
    ['U+0800', [0xe0, 0xa0, 0x80]],
    ['U+D7FF (last before surrogates)', [0xed, 0x9f, 0xbf]],
    ['U+E000 (first after surrogates)', [0xee, 0x80, 0x80]],
    ['U+FFFD (a real replacement character)', [0xef, 0xbf, 0xbd]],
    ['U+FFFF', [0xef, 0xbf, 0xbf]],
    ['U+10000', [0xf0, 0x90, 0x80, 0x80]],
    ['U+10FFFF', [0xf4, 0x8f, 0xbf, 0xbf]],
    ['NFD cafe', [0x63, 0x61, 0x66, 0x65, 0xcc, 0x81]],
  ])('accepts %s', (_name, b) => {
    expect(isStrictUtf8(Uint8Array.from(b))).toBe(true);
  });

  test.each([
    ['overlong NUL C0 80', [0xc0, 0x80]],
    ['overlong "/" C0 AF', [0xc0, 0xaf]],
    ['overlong C1 BF', [0xc1, 0xbf]],
    ['overlong 3-byte E0 80 AF', [0xe0, 0x80, 0xaf]],
    ['overlong 3-byte E0 9F BF', [0xe0, 0x9f, 0xbf]],
    ['overlong 4-byte F0 80 80 AF', [0xf0, 0x80, 0x80, 0xaf]],
    ['overlong 4-byte F0 8F BF BF', [0xf0, 0x8f, 0xbf, 0xbf]],
    ['surrogate ED A0 80', [0xed, 0xa0, 0x80]],
    ['surrogate ED BF BF', [0xed, 0xbf, 0xbf]],
    ['surrogate pair encoded separately (CESU-8)', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
    ['above U+10FFFF: F4 90 80 80', [0xf4, 0x90, 0x80, 0x80]],
    ['F5 lead byte', [0xf5, 0x80, 0x80, 0x80]],
    ['FE', [0xfe]],
    ['FF', [0xff]],
    ['stray continuation 80', [0x61, 0x80]],
    ['stray continuation BF', [0xbf]],
    ['truncated 2-byte at end', [0x61, 0xc3]],
    ['truncated 3-byte at end', [0xe2, 0x82]],
    ['truncated 4-byte at end', [0xf0, 0x9f, 0x98]],
    ['truncated 3-byte before ASCII', [0xe2, 0x82, 0x41]],
    ['lead byte followed by lead byte', [0xc3, 0xc3, 0xa9]],
    ['5-byte form', [0xf8, 0x88, 0x80, 0x80, 0x80]],
  ])('rejects %s', (_name, b) => {
    expect(isStrictUtf8(Uint8Array.from(b))).toBe(false);
  });

  test('rejects what a replacement-character decoder silently repairs (regression)', () => {
    const bad = bytes(0x7b, 0x22, 0x61, 0x22, 0x3a, 0xc0, 0xaf, 0x7d);
    const repaired = Buffer.from(bad).toString('utf8');
    expect(repaired).toContain('\ufffd');
    expect(isStrictUtf8(bad)).toBe(false);
    // The repaired text re-encodes to different bytes, so a decode-then-encode check would see it only by luck.
    expect(Buffer.from(repaired, 'utf8').equals(Buffer.from(bad))).toBe(false);
  });
});

/* =================================================================== RFC 3339 */

describe('isRfc3339 (S3, reading 3)', () => {
  test.each([
    '2026-09-23T23:45:20.760Z',
    '2026-09-23T23:45:20Z',
    '2026-09-23t23:45:20.760z',
    '2026-09-23T23:45:20+05:30',
    '2026-09-23T23:45:20-00:00',
    '2026-09-23T23:45:20.123456789+23:59',
    '2026-01-31T00:00:00Z',
    '2026-12-31T23:59:59Z',
    '2024-02-29T12:00:00Z',
    '2000-02-29T12:00:00Z',
    '0000-02-29T00:00:00Z',
    '9999-12-31T23:59:59.9Z',
    '2026-04-30T00:00:00Z',
  ])('accepts %s', (s) => {
    expect(isRfc3339(s)).toBe(true);
  });

  test.each([
    ['2026-02-30T00:00:00Z', 'February 30'],
    ['2026-02-29T00:00:00Z', 'February 29 in a common year'],
    ['1900-02-29T00:00:00Z', '1900 is not a leap year'],
    ['2100-02-29T00:00:00Z', '2100 is not a leap year'],
    ['2026-04-31T00:00:00Z', 'April 31'],
    ['2026-06-31T00:00:00Z', 'June 31'],
    ['2026-09-31T00:00:00Z', 'September 31'],
    ['2026-11-31T00:00:00Z', 'November 31'],
    ['2026-01-32T00:00:00Z', 'January 32'],
    ['2026-00-10T00:00:00Z', 'month 00'],
    ['2026-13-10T00:00:00Z', 'month 13'],
    ['2026-01-00T00:00:00Z', 'day 00'],
    ['2026-09-23T24:00:00Z', 'hour 24'],
    ['2026-09-23T23:60:00Z', 'minute 60'],
    ['2026-09-23T23:59:60Z', 'second 60 (reading 3: 00-59)'],
    ['2026-09-23T23:45:20+24:00', 'offset hour 24'],
    ['2026-09-23T23:45:20+05:60', 'offset minute 60'],
    ['2026-09-23 23:45:20Z', 'space separator'],
    ['2026-09-23_23:45:20Z', 'underscore separator'],
    ['2026-09-23T23:45:20', 'no offset'],
    ['2026-09-23T23:45Z', 'no seconds'],
    ['2026-09-23', 'date only'],
    ['2026-9-23T23:45:20Z', 'one-digit month'],
    ['02026-09-23T23:45:20Z', 'five-digit year'],
    ['2026-09-23T23:45:20+0530', 'offset without colon'],
    ['2026-09-23T23:45:20+05', 'offset without minutes'],
    ['2026-09-23T23:45:20.Z', 'empty fraction'],
    ['2026-09-23T23:45:20,5Z', 'comma fraction'],
    ['2026-09-23T23:45:20Z\n', 'trailing newline'],
    [' 2026-09-23T23:45:20Z', 'leading space'],
    ['2026-09-23T23:45:20UTC', 'UTC instead of Z'],
    ['2026-09-23T23:45:20\u221205:00', 'U+2212 minus sign'],
    ['\u0662\u0660\u0662\u0666-09-23T23:45:20Z', 'Arabic-Indic digits'],
    ['\uff12\uff10\uff12\uff16-09-23T23:45:20Z', 'fullwidth digits'],
    ['', 'empty'],
  ])('rejects %j (%s)', (s) => {
    expect(isRfc3339(s)).toBe(false);
  });

  test('rejects non-strings', () => {
    for (const v of [undefined, null, 1727135120, new Date('2026-09-23T23:45:20Z'), {}, ['2026-09-23T23:45:20Z']]) {
      expect(isRfc3339(v)).toBe(false);
    }
  });

  test('does not roll over the dates that Date.parse rolls over (regression)', () => {
    const rolled: Array<[string, string]> = [
      ['2026-02-30T00:00:00Z', '2026-03-02T00:00:00.000Z'],
      ['2026-09-23T24:00:00Z', '2026-09-24T00:00:00.000Z'],
      ['1900-02-29T00:00:00Z', '1900-03-01T00:00:00.000Z'],
      ['2026-04-31T00:00:00Z', '2026-05-01T00:00:00.000Z'],
    ];
    for (const [s, rolledTo] of rolled) {
      expect(new Date(s).toISOString()).toBe(rolledTo);
      expect(isRfc3339(s)).toBe(false);
    }
  });

  test('isLeapYear and daysInMonth follow the Gregorian rules', () => {
    expect([1900, 2000, 2023, 2024, 2100, 2400, 0].map(isLeapYear)).toEqual([false, true, false, true, false, true, true]);
    expect(Array.from({ length: 12 }, (_, m) => daysInMonth(2026, m + 1))).toEqual([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]);
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(1900, 2)).toBe(28);
  });
});

/* ============================================================== identifiers */

describe('isUuid / uuidKey (reading 4)', () => {
  const U = '130da435-e157-498e-af90-605866a86a27';
  test('accepts the 8-4-4-4-12 form in either case', () => {
    expect(isUuid(U)).toBe(true);
    expect(isUuid(U.toUpperCase())).toBe(true);
    expect(isUuid('130DA435-e157-498E-af90-605866A86A27')).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
  });
  test.each([
    [`{${U}}`],
    [`urn:uuid:${U}`],
    [U.replace(/-/g, '')],
    [U + '\n'],
    [' ' + U],
    [U.slice(0, -1)],
    [U + '0'],
    ['130da435-e157-498e-af90-605866a86a2g'],
    ['130da435e-157-498e-af90-605866a86a27'],
    ['130da435-e157-498e-af90_605866a86a27'],
    [''],
  ])('rejects %j', (s) => {
    expect(isUuid(s)).toBe(false);
  });
  test('rejects non-strings', () => {
    for (const v of [undefined, null, 1, {}, [U]]) expect(isUuid(v)).toBe(false);
  });
  test('uuidKey makes ids differing only in case the same key', () => {
    expect(uuidKey(U.toUpperCase())).toBe(U);
    expect(uuidKey('130DA435-e157-498E-af90-605866A86A27')).toBe(uuidKey(U));
  });
});

describe('isHex64 / isOutputHash (reading 6, 9, 10; hex is compared case-sensitively)', () => {
  const h = sha('');
  test('known digest of the empty string', () => {
    expect(h).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex(new Uint8Array(0))).toBe(h);
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  test('isHex64', () => {
    expect(isHex64(h)).toBe(true);
    expect(isHex64(ZERO_DIGEST)).toBe(true);
    expect(isHex64(h.toUpperCase())).toBe(false);
    expect(isHex64(h.slice(1))).toBe(false);
    expect(isHex64(h + '0')).toBe(false);
    expect(isHex64('sha256:' + h)).toBe(false);
    expect(isHex64(h.slice(0, 63) + 'g')).toBe(false);
    expect(isHex64(null)).toBe(false);
  });
  test('isOutputHash', () => {
    expect(isOutputHash('sha256:' + h)).toBe(true);
    expect(isOutputHash(h)).toBe(false);
    expect(isOutputHash('sha256:' + h.toUpperCase())).toBe(false);
    expect(isOutputHash('SHA256:' + h)).toBe(false);
    expect(isOutputHash('sha512:' + h)).toBe(false);
    expect(isOutputHash('sha256: ' + h)).toBe(false);
    expect(isOutputHash('sha256:' + h + '\n')).toBe(false);
    expect(ZERO_DIGEST).toBe('0'.repeat(64));
  });
});

describe('provenanceKind (S5, reading 5)', () => {
  test.each([
    ['OBSERVED VIA GATEWAY', 'observed'],
    ['LOGGED BY AGENT', 'logged'],
    ['EXECUTED BY ZAMBO', 'executed'],
    ['EXECUTED BY LEDGER', 'executed'],
    ['EXECUTED BY ACME LEDGER', 'executed'],
    ['EXECUTED BY \u0141EDGER', 'executed'],
    ['EXECUTED BY X', 'executed'],
  ])('%j is %s', (s, kind) => {
    expect(provenanceKind(s)).toBe(kind);
  });
  test.each([
    'executed by ledger',
    'Executed By Ledger',
    'observed via gateway',
    'LOGGED BY AGENT ',
    ' LOGGED BY AGENT',
    'OBSERVED VIA GATEWAY\n',
    'OBSERVED BY GATEWAY',
    'LOGGED BY AGENTS',
    'EXECUTED BY ',
    'EXECUTED BY',
    'EXECUTED BYLEDGER',
    'EXECUTED BY  LEDGER',
    'EXECUTED BY LEDGER ',
    'EXECUTED BY LEDGER\t',
    'EXECUTED BY\tLEDGER',
    'EXECUTED BY \tLEDGER',
    'EXECUTED BY LEDGER\n',
    'EXECUTED BY \u00a0LEDGER',
    'EXECUTED  BY LEDGER',
    '',
  ])('rejects %j', (s) => {
    expect(provenanceKind(s)).toBeNull();
  });
  test('rejects non-strings', () => {
    for (const v of [undefined, null, 1, {}, ['LOGGED BY AGENT']]) expect(provenanceKind(v)).toBeNull();
  });
});

/* ======================================================= S7.1 canonical writer */

describe('writeJsonString (S7.1, reading 7)', () => {
  test.each([
    ['plain', '"plain"'],
    ['', '""'],
    ['a/b', '"a/b"'],
    ['"', '"\\""'],
    ['\\', '"\\\\"'],
    ['\b\f\n\r\t', '"\\b\\f\\n\\r\\t"'],
    ['\u0000\u0001\u001f', '"\\u0000\\u0001\\u001f"'],
    ['\u000b', '"\\u000b"'],
    ['~', '"~"'],
    ['\u007f', '"\\u007f"'],
    ['\u0080', '"\\u0080"'],
    ['caf\u00e9', '"caf\\u00e9"'],
    ['\u00ff\u0100', '"\\u00ff\\u0100"'],
    ['\u2028\u2029', '"\\u2028\\u2029"'],
    ['\uabcd', '"\\uabcd"'],
    ['\uffff', '"\\uffff"'],
    ['\u{1f600}', '"\\ud83d\\ude00"'],
    ['\u{10ffff}', '"\\udbff\\udfff"'],
    ['\ud800', '"\\ud800"'],
    ['r\u00e9sum\u00e9_fetch', '"r\\u00e9sum\\u00e9_fetch"'],
  ])('%j is written %s', (s, expected) => {
    expect(writeJsonString(s)).toBe(expected);
    expect(JSON.parse(writeJsonString(s))).toBe(s);
  });

  test('output is ASCII-only, unlike JSON.stringify (regression: writers that leave non-ASCII unescaped)', () => {
    const s = 'caf\u00e9 \u{1f600} \u007f';
    expect(JSON.stringify(s)).toBe('"caf\u00e9 \u{1f600} \u007f"');
    expect(writeJsonString(s)).toBe('"caf\\u00e9 \\ud83d\\ude00 \\u007f"');
    expect(/^[\x20-\x7e]*$/.test(writeJsonString(s))).toBe(true);
  });

  test('escapes use lowercase hex and DEL is escaped; "/" is not (regressions)', () => {
    expect(writeJsonString('\u00c9')).toBe('"\\u00c9"');
    expect(writeJsonString('\u00c9')).not.toBe('"\\u00C9"');
    expect(writeJsonString('del\u007f')).toBe('"del\\u007f"');
    expect(writeJsonString('a/b')).not.toBe('"a\\/b"');
  });
});

describe('entryDigestInput (S7.1)', () => {
  const members = {
    close: false,
    id: '0336ad78-2e44-53f8-90af-c91be407c1d8',
    job_id: 'job-alpha',
    output_hash: '60e63d3a70b25965304de4a69d336c67dade05774301680a28c6fe152d9d6057',
    prev_digest: ZERO_DIGEST,
    provenance_class: 'EXECUTED BY LEDGER',
    seq: 1,
    tool: 'fetch_page',
  };
  const EXPECTED =
    '{"close":false,"id":"0336ad78-2e44-53f8-90af-c91be407c1d8","job_id":"job-alpha",' +
    '"output_hash":"60e63d3a70b25965304de4a69d336c67dade05774301680a28c6fe152d9d6057",' +
    '"prev_digest":"0000000000000000000000000000000000000000000000000000000000000000",' +
    '"provenance_class":"EXECUTED BY LEDGER","seq":1,"tool":"fetch_page"}';

  test('writes the members in code-point order with no white space (corpus chain-valid-4, entry 1)', () => {
    expect(entryDigestInput(members)).toBe(EXPECTED);
    expect(sha(EXPECTED)).toBe('170a8013413de7e54aca747c60682c81c3ca02cf6b31a8d0661255e289b74021');
  });

  test('escapes strings and writes close true and an integer seq', () => {
    const s = entryDigestInput({ ...members, close: true, seq: 7, tool: 'emoji_\u{1f600} /\u007f\u00e9' });
    expect(s).toBe(EXPECTED.replace('"close":false', '"close":true').replace('"seq":1', '"seq":7').replace('"tool":"fetch_page"', '"tool":"emoji_\\ud83d\\ude00 /\\u007f\\u00e9"'));
    expect(sha(s)).toBe('3148323ffee3bf46381e6b5875678bec2ffef69627176f6b47a003a94f72b1ae');
  });

  test('seq parsed from 1.0 is written 1 (regression: writers that emit 1.0)', () => {
    const seq = (JSON.parse('{"seq": 1.0}') as { seq: number }).seq;
    expect(entryDigestInput({ ...members, seq })).toBe(EXPECTED);
    expect(entryDigestInput({ ...members, seq })).not.toContain('1.0');
  });

  test('entryDigest recomputes the corpus link values, including the 1.0 entry', () => {
    const e1 = {
      seq: 1,
      job_id: 'job-alpha',
      id: '0336ad78-2e44-53f8-90af-c91be407c1d8',
      tool: 'fetch_page',
      provenance_class: 'EXECUTED BY LEDGER',
      canonical_bytes: 'eyJzdGVwIjoxLCJqb2IiOiJqb2ItYWxwaGEifQ==',
      prev_digest: ZERO_DIGEST,
    };
    expect(entryDigest(e1)).toBe('170a8013413de7e54aca747c60682c81c3ca02cf6b31a8d0661255e289b74021');
    // Explicit close:false digests like an absent close.
    expect(entryDigest({ ...e1, close: false })).toBe('170a8013413de7e54aca747c60682c81c3ca02cf6b31a8d0661255e289b74021');
    expect(entryDigest({ ...e1, close: true })).not.toBe('170a8013413de7e54aca747c60682c81c3ca02cf6b31a8d0661255e289b74021');
    const floatEntry = JSON.parse(
      '{"seq": 1.0, "job_id": "job-float", "id": "a6c6ab24-14ba-5d18-a4da-9cd36682536f", "tool": "fetch_page", "provenance_class": "EXECUTED BY LEDGER", "canonical_bytes": "eyJzdGVwIjoxLCJqb2IiOiJqb2ItZmxvYXQifQ==", "prev_digest": "0000000000000000000000000000000000000000000000000000000000000000"}',
    );
    expect(entryDigest(floatEntry)).toBe('c7f54de79a8fc8cac29f8468399087bc5d5eb52b00484ad702787979da73aab7');
    // Malformed entries have no digest.
    expect(entryDigest({ ...e1, canonical_bytes: 'YQ' })).toBeNull();
    expect(entryDigest({ ...e1, seq: 1.5 })).toBeNull();
    expect(entryDigest({ ...e1, close: 'true' })).toBeNull();
    expect(entryDigest('not an entry')).toBeNull();
  });
});

/* ================================================================ S8.1 Merkle */

describe('merkleRoot (S8.1)', () => {
  const DRAFT_IDS = [
    'e80168eb-a6a1-4ec9-8478-ac108f9397ff',
    '514fe841-bbdd-4804-9ef4-6828842d8763',
    'a090bdad-f2cf-48c9-bc89-e9e17700fb15',
    'bf88a036-416b-456a-8e82-8c0991811d68',
    'ae795bf0-27f8-4cf2-8aef-3f8142b77217',
  ];
  const DRAFT_ROOT = '7c4817ca249edfeae259b98abf63ed38a31d9dbeebf5ee23139410a7a7f63b37';
  const DRAFT_RECEIPT_HASHES = [
    '11c3a071051a42cbf5cf4da60a7577b1dffeb0419e6dd8a258b19c4c0d0d108e',
    '68e3bcad3f46218672fd7ef7bf32f4a7089937dda2b8ade3cfe1050cec856285',
    '3da48b2d392fb79ed78f7ed0cc8e6c122fc1089947ff6d7f829748d7745840dd',
    '0f024f209392b918909df5478aadd3a9189520d74cfdf78e2ccf51b9f075f926',
    'f52d9c03605047ad0ac347e5e9cbc0e2e197a009d8ee5c7d775f86f360eca963',
  ];

  test('recomputes the draft example root over its five receipt ids', () => {
    expect(merkleRoot(DRAFT_IDS)).toBe(DRAFT_ROOT);
    expect(refMerkleRoot(DRAFT_IDS)).toBe(DRAFT_ROOT);
  });

  test('small trees: one leaf is the root, two are paired, three duplicate the last', () => {
    expect(merkleRoot([])).toBeNull();
    expect(merkleRoot(DRAFT_IDS.slice(0, 1))).toBe('609eb71e8855515d3d1988f17c714429b4433cfbd8a837f22182652d22ae1f51');
    expect(merkleRoot(DRAFT_IDS.slice(0, 1))).toBe(sha(DRAFT_IDS[0]));
    expect(merkleRoot(DRAFT_IDS.slice(0, 2))).toBe('25e3d0bbcaa2075f58e9851d3d0f9ec53089980c69002e1a092daecff69a2df2');
    expect(merkleRoot(DRAFT_IDS.slice(0, 3))).toBe('4860e25bbc8dba2382887cb08ccaf6cd88434bbda5aeda45c6a8373bb15f63e4');
  });

  test('accepts any iterable of ids', () => {
    expect(merkleRoot(new Set(DRAFT_IDS))).toBe(DRAFT_ROOT);
    expect(merkleRoot((function* () {
      yield* DRAFT_IDS;
    })())).toBe(DRAFT_ROOT);
  });

  test('a root over output hashes is not the root (regression: leaves are receipt ids)', () => {
    expect(merkleRoot(DRAFT_RECEIPT_HASHES)).toBe('801a12c4533d2bb721600750b131d0257e487b1f0b5db3c9e74f195423a3f837');
    expect(merkleRoot(DRAFT_RECEIPT_HASHES)).not.toBe(DRAFT_ROOT);
  });

  test('the odd digest is duplicated, not promoted (regression)', () => {
    const PROMOTED = '330133f6b8739cc50ff34d97f37440c1725eb5a9f2ca7f6c55e99807c4b9c3ad';
    expect(merkleRoot(DRAFT_IDS)).not.toBe(PROMOTED);
    const wf = {
      type: 'verifiable-workflow-receipt',
      version: '1',
      workflow_id: '42a3c2cf-2cdd-5b8a-aced-016e5a2fb634',
      receipt_id: '442243d2-9c32-53f7-817e-2def28fa5b07',
      session_id: 'receipt-test-001',
      goal: 'get BTC price',
      status: 'ok',
      steps: DRAFT_IDS.map((receipt_id, i) => ({
        seq: i + 1,
        tool: 'zambo_universal',
        receipt_id,
        receipt_hash: DRAFT_RECEIPT_HASHES[i],
        started_at: '2026-09-29T10:57:40.911Z',
        ended_at: '2026-09-29T10:57:41.147Z',
        status: 'ok',
      })),
      merkle_root: PROMOTED,
      output_hash: '16566e46433dd9a00e4437873102531be71fbae3872db8888b7ddc9282d90f54',
      verify_url: 'https://zambo.dev/workflow/42a3c2cf-2cdd-5b8a-aced-016e5a2fb634',
    };
    const r = verifyWorkflow(wf);
    expect(r.reasons.sort()).toEqual(['merkle_root_mismatch', 'step_receipts_unavailable']);
    expect(r.merkle).toEqual(expect.objectContaining({ declared: PROMOTED, computed: DRAFT_ROOT, confirmed: false }));
    const good = verifyWorkflow({ ...wf, merkle_root: DRAFT_ROOT });
    expect(good.verdict).toBe('incomplete');
    expect(good.reasons).toEqual(['step_receipts_unavailable']);
    expect(good.merkle.confirmed).toBe(true);
  });

  test('[r1..r5, r5] has the same root as [r1..r5]: why duplicate ids are rejected (S8.2 step 3)', () => {
    expect(merkleRoot([...DRAFT_IDS, DRAFT_IDS[4]])).toBe(DRAFT_ROOT);
  });

  test('leaves hash the id string as written: case matters to the root', () => {
    expect(merkleRoot(DRAFT_IDS.map((s) => s.toUpperCase()))).not.toBe(DRAFT_ROOT);
  });

  test('MERKLE_CONSTRUCTION documents leaf, node, odd-level rule and encoding (S8.1)', () => {
    expect(MERKLE_CONSTRUCTION).toMatch(/receipt_id/);
    expect(MERKLE_CONSTRUCTION).toMatch(/duplicates its last digest/);
    expect(MERKLE_CONSTRUCTION).toMatch(/lowercase hex/);
  });
});

/* ===================================================== hex compared exactly */

describe('hex is compared case-sensitively everywhere (regression)', () => {
  test('receipt output_hash', () => {
    const r = refCoreReceipt('130da435-e157-498e-af90-605866a86a27', Buffer.from('x'));
    const upper = { ...r, output_hash: 'sha256:' + String(r.output_hash).slice(7).toUpperCase() };
    expect(verifyReceipt(r).verdict).toBe('valid');
    expect(verifyReceipt(upper).reasons).toEqual(['invalid_output_hash_format']);
  });
  test('chain prev_digest', () => {
    const t = refBuildTimeline(refEntrySpec('job-case', 3));
    t[1].prev_digest = t[1].prev_digest.toUpperCase();
    expect(verifyTimeline(refRelink(t, 2)).reasons).toEqual(['link_mismatch']);
  });
  test('commitment final_entry_digest', () => {
    const t = refBuildTimeline(refEntrySpec('job-case', 2));
    const c = { job_id: 'job-case', final_entry_digest: refEntryDigest(t[1]), entry_count: 2, published_at: '2026-10-02T08:00:00Z' };
    expect(verifyCommitment({ timeline: t, commitment: c }).verdict).toBe('valid');
    expect(verifyCommitment({ timeline: t, commitment: { ...c, final_entry_digest: c.final_entry_digest.toUpperCase() } }).reasons).toEqual(['invalid_commitment']);
  });
  test('workflow merkle_root', () => {
    const d = refWorkflow('78526194-620f-5c62-9e10-939644f8bd70', '7b2ad81a-b68a-512c-ae7e-0b1a6ae21973', ['bde8773d-6233-579b-9a35-84be051b6a63']);
    expect(verifyWorkflow(d).verdict).toBe('valid');
    d.workflow.merkle_root = String(d.workflow.merkle_root).toUpperCase();
    expect(verifyWorkflow(d).reasons).toEqual(['invalid_field:merkle_root']);
  });
});

/* ============================================================ result objects */

describe('results list every failing check (reading 11)', () => {
  test('a multi-fault core receipt reports all its codes and failing checks', () => {
    const b = Buffer.from([0x7b, 0xc0, 0xaf, 0x7d]);
    const r = verifyReceipt({
      id: '{130da435-e157-498e-af90-605866a86a27}',
      receipt_schema_version: '0.4',
      created_at: '2026-02-30T10:00:00Z',
      tool: { name: 'live_price', version: '4.0.0' },
      provenance_class: 'logged by agent',
      canonical_bytes: b.toString('base64'),
      output_hash: 'sha256:' + sha(b).toUpperCase(),
      verification_status: 'execution_observed',
    });
    expect(r.verdict).toBe('invalid');
    expect(r.form).toBe('core');
    expect(r.reasons).toEqual([
      'invalid_id',
      'unsupported_schema_version',
      'invalid_timestamp',
      'invalid_tool',
      'unknown_provenance_class',
      'invalid_utf8',
      'invalid_output_hash_format',
      'invalid_verification_status',
    ]);
    expect(r.checks.filter((c) => c.ok === false).map((c) => c.name)).toEqual([
      'id',
      'receipt_schema_version',
      'created_at',
      'tool',
      'provenance_class',
      'canonical_bytes.utf8',
      'output_hash.format',
      'verification_status',
    ]);
    expect(r.checks.find((c) => c.name === 'output_commitment')?.ok).toBeNull();
  });

  test('a receipt missing everything reports every missing member', () => {
    expect(verifyReceipt({}).reasons).toEqual([
      'missing_field:id',
      'missing_field:receipt_schema_version',
      'missing_field:created_at',
      'missing_field:tool',
      'missing_field:provenance_class',
      'missing_field:canonical_bytes',
      'missing_field:output_hash',
      'missing_field:verification_status',
    ]);
    expect(verifyReceipt({ tool: 'x' }).reasons.sort()).toEqual(
      ['missing_field:id', 'missing_field:timestamp', 'missing_field:status', 'missing_field:provenance_class', 'missing_field:canonical_bytes', 'missing_field:output_hash', 'missing_field:verification_status'].sort(),
    );
  });

  test('a tampered receipt with bytes that are also not UTF-8 reports both', () => {
    const r = refCoreReceipt('130da435-e157-498e-af90-605866a86a27', Buffer.from('{"a":1}'));
    const r2 = { ...r, canonical_bytes: Buffer.from([0x7b, 0xff, 0x7d]).toString('base64') };
    expect(verifyReceipt(r2).reasons.sort()).toEqual(['invalid_utf8', 'output_hash_mismatch']);
  });

  test('a valid receipt result carries the computed values and its provenance meaning', () => {
    const b = Buffer.from('{"price":"64210.55","symbol":"BTC"}');
    const r = verifyReceipt(refCoreReceipt('38b2097d-75ca-5ae7-8135-da763ecf0256', b, 'LOGGED BY AGENT'));
    expect(r).toEqual(
      expect.objectContaining({
        kind: 'receipt',
        verdict: 'valid',
        reasons: [],
        form: 'core',
        id: '38b2097d-75ca-5ae7-8135-da763ecf0256',
        wrapped_in: null,
        computed: { output_hash: 'sha256:3f8dfebc3bdf8445321ba564aa800a906b41852559493ea4b8af557b5ec85581', canonical_byte_length: 35 },
      }),
    );
    expect(r.provenance.class).toBe('LOGGED BY AGENT');
    expect(r.provenance.kind).toBe('logged');
    expect(r.provenance.meaning).toMatch(/did not run or observe/);
    expect(r.checks.every((c) => c.ok !== false)).toBe(true);
    expect(r.limits.length).toBeGreaterThan(0);
  });

  test('a JSON-RPC tools/call response is unwrapped and its _receipt verified as returned', () => {
    const rec = refTransportReceipt('c90ac30c-bf8d-5452-a36f-8b58a3a40241', Buffer.from('{"result":{"ok":true}}'));
    const doc = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'ok' }], _receipt: rec } };
    const r = verifyReceipt(doc);
    expect(r.verdict).toBe('valid');
    expect(r.wrapped_in).toBe('jsonrpc');
    expect(r.form).toBe('transport');
    expect(r.computed.canonical_byte_length).toBe(22);
    expect(detectKind(doc)).toBe('receipt');
    const wrong = { ...doc, result: { ...doc.result, _receipt: { ...rec, canonical_byte_length: 23 } } };
    expect(verifyReceipt(wrong).reasons).toEqual(['canonical_byte_length_mismatch']);
  });

  test('a timeline with several faults reports each once, and its result fields', () => {
    const t = refBuildTimeline(refEntrySpec('job-x', 4));
    t[0].prev_digest = '1'.repeat(64);
    Object.assign(t[1], { job_id: 'job-other', close: true });
    t[2].seq = 9;
    delete t[3].close;
    const r = verifyTimeline(t);
    expect(r.verdict).toBe('invalid');
    expect([...r.reasons].sort()).toEqual(['close_not_last', 'genesis_prev_digest', 'job_id_mismatch', 'link_mismatch', 'not_closed', 'seq_not_contiguous']);
    expect(r.construction).toBeNull();
    expect(r.closed).toBe(false);
    expect(r.entry_count).toBe(4);
    expect(r.job_id).toBe('job-x');
    expect(r.truncation_excluded).toBe(false);
    expect(r.entries?.map((e) => e.entry_digest)).toEqual(t.map(refEntryDigest));
    const failing = r.checks.filter((c) => c.ok === false).map((c) => c.name);
    expect(failing.sort()).toEqual(['close_only_last', 'closed', 'genesis', 'links', 'one_job', 'sequence']);
  });

  test('a timeline whose last entry is malformed has no final digest, so no commitment can bind it', () => {
    const t = refBuildTimeline(refEntrySpec('job-m', 3));
    const commitment = { job_id: 'job-m', final_entry_digest: refEntryDigest(t[2]), entry_count: 3, published_at: '2026-10-02T08:00:00Z' };
    const bad = t.map((e) => ({ ...e }));
    bad[2].canonical_bytes = 'YQ';
    const r = verifyTimeline(bad);
    expect(r.reasons).toEqual(['invalid_base64']);
    expect(r.entries?.map((e) => e.entry_digest)).toEqual([refEntryDigest(t[0]), refEntryDigest(t[1]), null]);
    expect(r.final_entry_digest).toBeNull();
    const c = verifyCommitment({ timeline: bad, commitment });
    expect(c.binding).toBe(false);
    expect(c.reasons).toContain('invalid_base64');
    expect(c.computed.final_entry_digest).toBeNull();
  });

  test('a valid timeline result: -07 construction, final digest, provenance counts as recorded', () => {
    const specs = refEntrySpec('job-ok', 3);
    specs[1].provenance_class = 'LOGGED BY AGENT';
    const t = refBuildTimeline(specs);
    const r = verifyTimeline(t);
    expect(r.verdict).toBe('valid');
    expect(r.construction).toBe('-07');
    expect(r.final_entry_digest).toBe(refEntryDigest(t[2]));
    expect(r.closed).toBe(true);
    expect(r.provenance).toEqual({ 'EXECUTED BY LEDGER': 2, 'LOGGED BY AGENT': 1 });
    expect(r.checks.find((c) => c.name === 'truncation')?.ok).toBeNull();
  });

  test('a -06 timeline is historical with construction -06', () => {
    const r = verifyTimeline(refBuildTimeline(refEntrySpec('job-06', 3), '-06'));
    expect(r.verdict).toBe('historical');
    expect(r.reasons).toEqual(['historical_06_construction']);
    expect(r.construction).toBe('-06');
  });

  test('provenance classes named like Object.prototype members are counted (bug fix: prototype-keyed tally)', () => {
    for (const p of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const specs = refEntrySpec('job-proto', 2).map((s) => ({ ...s, provenance_class: p }));
      const r = verifyTimeline(refBuildTimeline(specs));
      expect(r.reasons).toEqual(['unknown_provenance_class']);
      expect(Object.keys(r.provenance)).toEqual([p]);
      expect(r.provenance[p]).toBe(2);
      expect(JSON.parse(JSON.stringify(r.provenance))).toEqual(JSON.parse(`{"${p}":2}`));
    }
  });

  test('a member inherited from a prototype is missing, not read (fast member check vs full check)', () => {
    const [first, second] = refBuildTimeline(refEntrySpec('job-inherit', 2));
    const { tool, ...rest } = second as unknown as Record<string, unknown>;
    // Not JSON.parse output, but a caller may build entries: `tool` is only reachable through the prototype.
    const inherited = Object.assign(Object.create({ tool }) as Record<string, unknown>, rest);
    expect(inherited.tool).toBe(tool);
    const r = verifyTimeline([first, inherited]);
    expect(r.verdict).toBe('invalid');
    expect(r.reasons).toEqual(['missing_field:tool']);
    expect(r.entries?.[1].entry_digest).toBeNull();
    expect(r.final_entry_digest).toBeNull();
    // The same entry with `tool` as its own member verifies.
    expect(verifyTimeline([first, { ...rest, tool }]).verdict).toBe('valid');
  });

  test('close present but undefined is malformed, absent close is false', () => {
    const [only] = refBuildTimeline(refEntrySpec('job-close', 1));
    const r = verifyTimeline([{ ...only, close: undefined }]);
    expect(r.reasons).toContain('invalid_close');
    expect(r.entries?.[0].entry_digest).toBeNull();
  });

  test('a commitment result exposes binding, computed values and witness metadata untouched', () => {
    const t = refBuildTimeline(refEntrySpec('job-w', 2));
    const commitment = {
      job_id: 'job-w',
      final_entry_digest: refEntryDigest(t[1]),
      entry_count: 2,
      published_at: '2026-10-02T08:00:00Z',
      witness: { name: 'w', key: [1, 2] },
      retrieved_at: '2026-10-03T00:00:00Z',
    };
    const r = verifyCommitment({ timeline: t, commitment, retrieved_from: 'https://witness.example/c' });
    expect(r.verdict).toBe('valid');
    expect(r.binding).toBe(true);
    expect(r.witness).toEqual({ witness: { name: 'w', key: [1, 2] }, retrieved_at: '2026-10-03T00:00:00Z', retrieved_from: 'https://witness.example/c' });
    expect(r.computed).toEqual({ job_id: 'job-w', final_entry_digest: refEntryDigest(t[1]), entry_count: 2 });
    const sub = verifyCommitment({ timeline: t.slice(0, 1), commitment });
    expect(sub.binding).toBe(false);
    expect([...sub.reasons].sort()).toEqual(['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch', 'not_closed']);
  });

  test('a commitment never binds a historical -06 timeline (reading 9)', () => {
    const t = refBuildTimeline(refEntrySpec('job-h', 2), '-06');
    const c = { job_id: 'job-h', final_entry_digest: refEntryDigest(t[1]), entry_count: 2, published_at: '2026-10-02T08:00:00Z' };
    const r = verifyCommitment({ timeline: t, commitment: c });
    expect(r.binding).toBe(false);
    expect(r.verdict).not.toBe('valid');
    expect(r.reasons).toContain('historical_06_construction');
  });

  test('a workflow result gives per-step outcomes', () => {
    const ids = ['bde8773d-6233-579b-9a35-84be051b6a63', 'c7bc4e8f-bdcd-5351-b278-f4cc680054d9', 'ef0fb6b5-7784-5e44-8d8a-b0cbff18ffeb'];
    const d = refWorkflow('78526194-620f-5c62-9e10-939644f8bd70', '7b2ad81a-b68a-512c-ae7e-0b1a6ae21973', ids);
    const ok = verifyWorkflow(d);
    expect(ok.verdict).toBe('valid');
    expect(ok.steps.map((s) => s.receipt)).toEqual(['verified', 'verified', 'verified']);
    expect(ok.steps.map((s) => s.receipt_hash_matches_output_hash)).toEqual([true, true, true]);
    expect(ok.merkle.computed).toBe(refMerkleRoot(ids));
    expect(ok.merkle.confirmed).toBe(true);
    expect(ok.output_hash_confirmed).toBe(false);
    const partial = verifyWorkflow({ ...d, step_receipts: [d.step_receipts[0], { ...d.step_receipts[2], output_hash: 'sha256:' + '0'.repeat(64) }] });
    expect(partial.verdict).toBe('invalid');
    expect([...partial.reasons].sort()).toEqual(['step_receipt_invalid', 'step_receipt_missing']);
    expect(partial.steps.map((s) => s.receipt)).toEqual(['verified', 'missing', 'failed']);
    expect(partial.steps[2].reasons).toEqual(['output_hash_mismatch']);
    const alone = verifyWorkflow(d.workflow);
    expect(alone.steps.map((s) => s.receipt)).toEqual(['not_supplied', 'not_supplied', 'not_supplied']);
    const viaMap = verifyWorkflow(d.workflow, new Map(d.step_receipts.map((r) => [String(r.id).toLowerCase(), r])));
    expect(viaMap.verdict).toBe('valid');
  });

  test('verifiers never throw on junk and answer invalid', () => {
    const junk: unknown[] = [null, undefined, 0, 1.5, 'text', true, [], {}, [null], [[]], { timeline: null, commitment: null }, { workflow: null }, { steps: 'x' }, { jsonrpc: '2.0', result: { _receipt: 5 } }, JSON.parse('{"__proto__":{"x":1},"constructor":1}')];
    for (const j of junk) {
      for (const kind of ['receipt', 'chain', 'commitment', 'workflow', 'auto'] as const) {
        const r = verifyDocument(j, kind);
        expect(r.verdict).toBe('invalid');
        expect(r.reasons.length).toBeGreaterThan(0);
      }
    }
    expect(verifyTimeline([]).reasons).toEqual(['empty_timeline']);
    expect(verifyTimeline({}).reasons).toEqual(['not_array']);
    expect(verifyReceipt('x').reasons).toEqual(['not_object']);
    expect(verifyWorkflow(7).reasons).toEqual(['not_object']);
    expect(verifyCommitment([]).reasons).toEqual(['not_object']);
  });
});

/* ============================================================ streaming */

describe('TimelineVerifier streaming', () => {
  test('10,000 entries: the streaming path and the array path give the same final digest', () => {
    const N = 10_000;
    const specs = Array.from({ length: N }, (_, i) => ({
      job_id: 'job-long',
      id: `id-${i}`,
      tool: i % 7 === 0 ? `t\u00e9l\u00e9-${i}` : 'fetch_page',
      provenance_class: i % 3 === 0 ? 'OBSERVED VIA GATEWAY' : 'EXECUTED BY LEDGER',
      bytes: Buffer.from(`{"i":${i}}`),
    }));
    const t = refBuildTimeline(specs);
    const expectedFinal = refEntryDigest(t[N - 1]);

    const v = new TimelineVerifier();
    for (const e of t) v.push(e);
    expect(v.entryCount).toBe(N);
    const streamed = v.finish();
    const arrayed = verifyTimeline(t);

    expect(streamed.verdict).toBe('valid');
    expect(arrayed.verdict).toBe('valid');
    expect(streamed.final_entry_digest).toBe(expectedFinal);
    expect(arrayed.final_entry_digest).toBe(expectedFinal);
    expect(streamed.entry_count).toBe(N);
    expect(streamed.entries).toBeUndefined();
    expect(arrayed.entries).toHaveLength(N);
    expect(streamed.provenance).toEqual({ 'OBSERVED VIA GATEWAY': 3334, 'EXECUTED BY LEDGER': 6666 });

    // A fault deep in the stream is found by both paths, with the same reasons.
    const bad = t.map((e) => ({ ...e }));
    bad[7777].tool = 'relabeled';
    const v2 = new TimelineVerifier();
    for (const e of bad) v2.push(e);
    const s2 = v2.finish();
    expect(s2.reasons).toEqual(['link_mismatch']);
    expect(verifyTimeline(bad).reasons).toEqual(['link_mismatch']);
    expect(s2.checks.find((c) => c.name === 'links')?.detail).toMatch(/^recomputed -07 digests do not match: entry 7779 /);
    expect(refEncodeBase64(Buffer.from('{"i":0}'))).toBe(t[0].canonical_bytes);
  }, 30_000);
});
