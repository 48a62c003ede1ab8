/**
 * The canonical JSON writer of S7.1 (spec README reading 7).
 *
 * Only what the entry digest needs: an object with fixed, code-point-sorted
 * members whose values are strings, one integer and one boolean. No white
 * space. Strings are escaped as an ASCII-only JSON writer does: `\"` `\\`
 * `\b` `\f` `\n` `\r` `\t`; other characters below U+0020, U+007F and every
 * character above U+007E as `\u` with four lowercase hex digits (characters
 * above U+FFFF as their UTF-16 surrogate pair); `/` is not escaped.
 */

/** Characters that pass through unescaped: U+0020..U+007E except `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** What JSON.stringify leaves unescaped but S7.1 escapes: U+007F and every UTF-16 code unit above it. */
const NOT_ASCII = /[\x7f-\uffff]/;
const NOT_ASCII_ALL = /[\x7f-\uffff]/g;

function escapeCodeUnit(ch: string): string {
  return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0');
}

/** Write `s` as an ASCII-only JSON string literal, quotes included. */
export function writeJsonString(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  // JSON.stringify escapes exactly as above below U+007F (ECMA-262 QuoteJSONString: the same short
  // forms, other control characters and lone surrogates as \u with lowercase hex) and leaves the rest
  // as is; what remains above U+007E is then escaped code unit by code unit (a pair as its two halves).
  const json = JSON.stringify(s);
  return NOT_ASCII.test(json) ? json.replace(NOT_ASCII_ALL, escapeCodeUnit) : json;
}

/** The members bound by the S7.1 entry digest, already checked for type. */
export interface DigestMembers {
  close: boolean;
  id: string;
  job_id: string;
  /** Bare lowercase hex SHA-256 of the decoded canonical bytes (no `sha256:` prefix). */
  output_hash: string;
  prev_digest: string;
  provenance_class: string;
  /** An integer; written in integer form (1, never 1.0). */
  seq: number;
  tool: string;
}

/**
 * The S7.1 canonical JSON object for one chain entry: members in code-point
 * order `close, id, job_id, output_hash, prev_digest, provenance_class, seq, tool`.
 * Preconditions: `seq` is a safe integer; `output_hash` is the lowercase hex
 * digest computed by the verifier (written without an escaping pass).
 */
export function entryDigestInput(m: DigestMembers): string {
  return (
    '{"close":' + (m.close ? 'true' : 'false') +
    ',"id":' + writeJsonString(m.id) +
    ',"job_id":' + writeJsonString(m.job_id) +
    ',"output_hash":"' + m.output_hash + '"' + // computed lowercase hex: nothing to escape
    ',"prev_digest":' + writeJsonString(m.prev_digest) +
    ',"provenance_class":' + writeJsonString(m.provenance_class) +
    ',"seq":' + String(m.seq) +
    ',"tool":' + writeJsonString(m.tool) +
    '}'
  );
}

/** Distinct values per member whose written part {@link EntryDigestInputWriter} keeps. */
const MAX_KEPT_PARTS = 1024;

/** `before` + the written `value` + `after`, kept per distinct value while there is room. */
function keptPart(kept: Map<string, string>, value: string, before: string, after: string): string {
  let p = kept.get(value);
  if (p === undefined) {
    p = `${before}${writeJsonString(value)}${after}`;
    if (kept.size < MAX_KEPT_PARTS) kept.set(value, p);
  }
  return p;
}

/**
 * Writes the same string as {@link entryDigestInput}, for a verifier that
 * writes millions of entries: the parts that repeat across entries (job_id,
 * provenance class, tool, each with the member names around it) are written
 * once per distinct value, and the result is built by one template literal.
 * Building the input string is the verifier's largest cost after SHA-256
 * itself (bench/RESULTS.md); a test checks that both writers agree.
 */
export class EntryDigestInputWriter {
  private readonly jobParts = new Map<string, string>();
  private readonly classParts = new Map<string, string>();
  private readonly toolParts = new Map<string, string>();

  /**
   * The S7.1 input for these members (preconditions as {@link entryDigestInput}).
   * `prevIsHex` may be set when `prevDigest` is known to be lowercase hex
   * (a digest the caller computed), which needs no escaping pass.
   */
  write(close: boolean, id: string, jobId: string, outputHash: string, prevDigest: string, provenanceClass: string, seq: number, tool: string, prevIsHex: boolean): string {
    const head = close ? '{"close":true,"id":' : '{"close":false,"id":';
    const job = keptPart(this.jobParts, jobId, ',"job_id":', ',"output_hash":"');
    const klass = keptPart(this.classParts, provenanceClass, ',"provenance_class":', ',"seq":');
    const tail = keptPart(this.toolParts, tool, ',"tool":', '}');
    if (PLAIN.test(id) && (prevIsHex || PLAIN.test(prevDigest))) {
      return `${head}"${id}"${job}${outputHash}","prev_digest":"${prevDigest}"${klass}${seq}${tail}`;
    }
    return `${head}${writeJsonString(id)}${job}${outputHash}","prev_digest":${writeJsonString(prevDigest)}${klass}${seq}${tail}`;
  }
}
