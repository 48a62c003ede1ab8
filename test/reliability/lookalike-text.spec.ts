/**
 * The pure rules behind issue 11 section 5 (src/core/text.ts): the
 * identifier rule, the visible marking shared by pages and `aer1`, and the
 * URL rule. The end-to-end behaviour is in lookalike-text.e2e-spec.ts.
 */
import { safe } from '../../src/cli/report';
import { httpUrlProblem, identifierProblem, visibleSegments, visibleText } from '../../src/core/text';
import { safeHttpUrl, userText } from '../../src/public-pages/html';

describe('identifier rule', () => {
  it.each([
    ['job-kyc-42', null],
    ['job-caf\u00E9', null],
    ['job kyc 42', null],
    ['\u{1D4B3}'.repeat(200), null],
    ['x'.repeat(200), null],
    ['x'.repeat(201), 'too_long'],
    ['job-\u202E24-cyk', 'format'],
    ['job\u200E', 'format'],
    ['job\u00AD', 'format'],
    ['job\uFE0F', 'format'],
    ['job\u{E0041}', 'format'],
    ['job\u0085', 'control'],
    ['job\u007F', 'control'],
    ['job\u0000', 'control'],
    ['job\tx', 'control'],
    ['job\u2028x', 'space'],
    ['job\u3000x', 'space'],
    ['job ', 'space'],
    [' job', 'space'],
    ['job-cafe\u0301', 'not_nfc'],
    ['job-\u212B', 'not_nfc'],
    ['job\uD800', 'lone_surrogate'],
    ['job\uDFFFx', 'lone_surrogate'],
  ])('%j -> %s', (id, reason) => {
    const p = identifierProblem('job_id', id);
    expect(p?.reason ?? null).toBe(reason);
    if (p) expect(p.code).toBe(reason === 'too_long' ? 'value_too_large' : 'unsupported_character');
  });
});

describe('visible marking, one set for pages and the terminal', () => {
  const hostile = 'a\u202Eb\u200Bc\u0007d\u009Be\uD800f\u{E0041}g\n';
  it('cuts text into plain runs and marked code points', () => {
    expect(visibleSegments(hostile)).toEqual([
      { text: 'a' }, { codePoint: 0x202e }, { text: 'b' }, { codePoint: 0x200b }, { text: 'c' }, { codePoint: 0x07 }, { text: 'd' },
      { codePoint: 0x9b }, { text: 'e' }, { codePoint: 0xd800 }, { text: 'f' }, { codePoint: 0xe0041 }, { text: 'g' }, { codePoint: 0x0a },
    ]);
    expect(visibleText('x\u2066y')).toBe('x<U+2066>y');
    // A surrogate pair (an emoji) is one visible character, not marked.
    expect(visibleSegments('\u{1F600}')).toEqual([{ text: '\u{1F600}' }]);
  });
  it('aer1 escapes them (was: only C0/C1, DEL, bidi and U+FEFF; zero-width and lone surrogates printed raw)', () => {
    expect(safe(hostile, 1000)).toBe('a\\u202eb\\u200bc\\u0007d\\u009be\\ud800f\\u{e0041}g\\u000a');
  });
  it('pages mark them inside <bdi>, keeping tab and line feed', () => {
    expect(userText('<b>\u202Ex\n').value).toBe('<bdi>&lt;b&gt;<span class="cp" title="invisible or control character U+202E">&lt;U+202E&gt;</span>x\n</bdi>');
  });
});

describe('URLs', () => {
  it.each([
    ['https://witness.example/jobs/x', null],
    ['http://127.0.0.1:3000/api/x?a=b@c', null],
    ['https://witness.example/a@b', null],
    ['http://127.0.0.1:4711@evil.example/jobs/x', 'url_has_userinfo'],
    ['https://user:pw@witness.example/', 'url_has_userinfo'],
    ['https://@witness.example/', 'url_has_userinfo'],
    ['javascript:alert(1)', 'not_http_url'],
    ['ftp://x.example/', 'not_http_url'],
    ['not a url', 'not_http_url'],
  ])('%s -> %s', (url, problem) => {
    expect(httpUrlProblem(url)).toBe(problem);
    expect(safeHttpUrl(url) === null).toBe(problem !== null);
  });
});
