/**
 * A deliberately simple reference for the AER-1 primitives, written
 * independently of src/aer1 so that the two can be cross-checked. It favours
 * obvious correctness over speed: every function takes the most direct route
 * the spec README describes, by a different method from the fast code.
 *
 *   base64      naive per-character lookup loop, then re-encode and compare
 *   UTF-8       the WHATWG decoder (TextDecoder, fatal) rather than a byte table
 *   RFC 3339    field slicing, then a Date round trip (no regular expression)
 *   S7.1        JSON.stringify of a key-sorted object, then ASCII-only post-processing
 *   S8.1        recursive list-based Merkle tree
 *
 * Test code only: never imported by src.
 */
import { createHash } from 'node:crypto';
import { TextDecoder } from 'node:util';

export const REF_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
export const REF_ZERO_DIGEST = '0000000000000000000000000000000000000000000000000000000000000000';

export function refSha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function refSha256(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/* ------------------------------------------------------------------ base64 */

/** Index of `ch` in the standard alphabet by a plain loop; -1 when absent. */
function alphabetIndex(ch: string): number {
  for (let i = 0; i < REF_ALPHABET.length; i++) if (REF_ALPHABET[i] === ch) return i;
  return -1;
}

/** RFC 4648 section 4 encoding with padding. */
export function refEncodeBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const rest = bytes.length - i;
    const a = bytes[i];
    const b = rest > 1 ? bytes[i + 1] : 0;
    const c = rest > 2 ? bytes[i + 2] : 0;
    const n = a * 65536 + b * 256 + c;
    out += REF_ALPHABET[Math.floor(n / 262144) % 64];
    out += REF_ALPHABET[Math.floor(n / 4096) % 64];
    out += rest > 1 ? REF_ALPHABET[Math.floor(n / 64) % 64] : '=';
    out += rest > 2 ? REF_ALPHABET[n % 64] : '=';
  }
  return out;
}

/**
 * Strict decode: standard alphabet, length a multiple of 4, `=` only as the
 * last one or two characters, and canonical (re-encoding gives back `s`).
 * Returns null on anything else.
 */
export function refDecodeBase64(s: string): Uint8Array | null {
  if (s.length % 4 !== 0) return null;
  const bits: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '=') {
      // Padding: only in the last two positions, and everything after it is padding too.
      if (i < s.length - 2) return null;
      for (let k = i; k < s.length; k++) if (s[k] !== '=') return null;
      break;
    }
    const v = alphabetIndex(ch);
    if (v < 0) return null;
    for (let b = 5; b >= 0; b--) bits.push((v >> b) & 1);
  }
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) {
    let byte = 0;
    for (let b = 0; b < 8; b++) byte = byte * 2 + bits[i + b];
    bytes.push(byte);
  }
  const out = Uint8Array.from(bytes);
  return refEncodeBase64(out) === s ? out : null;
}

/* ------------------------------------------------------------------- UTF-8 */

const FATAL_UTF8 = new TextDecoder('utf-8', { fatal: true });

export function refIsUtf8(bytes: Uint8Array): boolean {
  try {
    FATAL_UTF8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/* ---------------------------------------------------------------- RFC 3339 */

function isAsciiDigits(t: string, n: number): boolean {
  if (t.length !== n) return false;
  for (const c of t) if (c < '0' || c > '9') return false;
  return true;
}

/**
 * RFC 3339 section 5.6 date-time with a real calendar date: the fields are
 * sliced at fixed positions, then checked by building a Date from them and
 * reading every field back (anything that rolls over is not a real date).
 */
export function refIsRfc3339(s: unknown): boolean {
  if (typeof s !== 'string') return false;
  const date = s.slice(0, 10);
  const sep = s.charAt(10);
  const time = s.slice(11, 19);
  let tail = s.slice(19);
  if (date.charAt(4) !== '-' || date.charAt(7) !== '-') return false;
  const [ys, ms, ds] = [date.slice(0, 4), date.slice(5, 7), date.slice(8, 10)];
  if (!isAsciiDigits(ys, 4) || !isAsciiDigits(ms, 2) || !isAsciiDigits(ds, 2)) return false;
  if (sep !== 'T' && sep !== 't') return false;
  if (time.charAt(2) !== ':' || time.charAt(5) !== ':') return false;
  const [hs, mis, ss] = [time.slice(0, 2), time.slice(3, 5), time.slice(6, 8)];
  if (!isAsciiDigits(hs, 2) || !isAsciiDigits(mis, 2) || !isAsciiDigits(ss, 2)) return false;
  if (tail.charAt(0) === '.') {
    let k = 1;
    while (k < tail.length && tail[k] >= '0' && tail[k] <= '9') k++;
    if (k === 1) return false;
    tail = tail.slice(k);
  }
  let oh = 0;
  let om = 0;
  if (tail !== 'Z' && tail !== 'z') {
    if (tail.length !== 6 || (tail[0] !== '+' && tail[0] !== '-') || tail[3] !== ':') return false;
    if (!isAsciiDigits(tail.slice(1, 3), 2) || !isAsciiDigits(tail.slice(4, 6), 2)) return false;
    oh = Number(tail.slice(1, 3));
    om = Number(tail.slice(4, 6));
  }
  const [y, mo, d, h, mi, se] = [ys, ms, ds, hs, mis, ss].map(Number);
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d); // setUTCFullYear, not Date.UTC: years 0-99 are not shifted to 19xx
  t.setUTCHours(h, mi, se, 0);
  if (
    t.getUTCFullYear() !== y ||
    t.getUTCMonth() !== mo - 1 ||
    t.getUTCDate() !== d ||
    t.getUTCHours() !== h ||
    t.getUTCMinutes() !== mi ||
    t.getUTCSeconds() !== se
  ) {
    return false;
  }
  const off = new Date(Date.UTC(2000, 0, 1, oh, om));
  return off.getUTCDate() === 1 && off.getUTCHours() === oh && off.getUTCMinutes() === om;
}

/* ------------------------------------------------------- S7.1 entry digest */

/** Escape U+007F and every UTF-16 code unit above it as a lowercase \uXXXX escape. */
function asciiOnly(json: string): string {
  let out = '';
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    out += c >= 0x7f ? '\\u' + c.toString(16).padStart(4, '0') : json[i];
  }
  return out;
}

/** JSON.stringify's RFC 8259 escaping, made ASCII-only. */
export function refWriteJsonString(s: string): string {
  return asciiOnly(JSON.stringify(s));
}

export interface RefDigestMembers {
  close: boolean;
  id: string;
  job_id: string;
  output_hash: string;
  prev_digest: string;
  provenance_class: string;
  seq: number;
  tool: string;
}

/** The S7.1 canonical object: members sorted by code point, no white space, ASCII-only. */
export function refCanonicalEntry(m: RefDigestMembers): string {
  const entries = Object.entries(m).sort(([a], [b]) => {
    const ca = [...a].map((c) => c.codePointAt(0) as number);
    const cb = [...b].map((c) => c.codePointAt(0) as number);
    for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i] - cb[i];
    return ca.length - cb.length;
  });
  if (!Number.isInteger(m.seq)) throw new Error('seq must be an integer');
  return asciiOnly(JSON.stringify(Object.fromEntries(entries)));
}

/** A chain entry as it appears in a timeline. */
export interface RefEntry {
  seq: number;
  job_id: string;
  id: string;
  tool: string;
  provenance_class: string;
  canonical_bytes: string;
  prev_digest: string;
  close?: boolean;
}

/** The S7.1 digest of an entry; throws when canonical_bytes is not strict base64. */
export function refEntryDigest(e: RefEntry): string {
  const bytes = refDecodeBase64(e.canonical_bytes);
  if (bytes === null) throw new Error('canonical_bytes is not strict base64');
  return refSha256Hex(
    refCanonicalEntry({
      close: e.close ?? false,
      id: e.id,
      job_id: e.job_id,
      output_hash: refSha256Hex(bytes),
      prev_digest: e.prev_digest,
      provenance_class: e.provenance_class,
      seq: e.seq,
      tool: e.tool,
    }),
  );
}

/** What a generator supplies for one entry; links and seq are filled in. */
export interface RefEntrySpec {
  job_id: string;
  id: string;
  tool: string;
  provenance_class: string;
  bytes: Uint8Array;
  seq?: number;
  close?: boolean;
}

/**
 * Build a timeline whose links follow the -07 construction (S7.1), or the
 * historical -06 one (prev_digest = SHA-256 of the previous decoded bytes).
 * By default seq counts from 1 and only the last entry closes.
 */
export function refBuildTimeline(specs: RefEntrySpec[], construction: '-07' | '-06' = '-07'): RefEntry[] {
  const out: RefEntry[] = [];
  let prev = REF_ZERO_DIGEST;
  specs.forEach((s, i) => {
    const e: RefEntry = {
      seq: s.seq ?? i + 1,
      job_id: s.job_id,
      id: s.id,
      tool: s.tool,
      provenance_class: s.provenance_class,
      canonical_bytes: refEncodeBase64(s.bytes),
      prev_digest: prev,
    };
    const close = s.close ?? i === specs.length - 1;
    if (close) e.close = true;
    out.push(e);
    prev = construction === '-07' ? refEntryDigest(e) : refSha256Hex(s.bytes);
  });
  return out;
}

/** Recompute every prev_digest after entry `from` so the -07 links hold again (a rebuilt chain, S7.3). */
export function refRelink(entries: RefEntry[], from = 1): RefEntry[] {
  const out = entries.map((e) => ({ ...e }));
  for (let i = Math.max(from, 1); i < out.length; i++) out[i].prev_digest = refEntryDigest(out[i - 1]);
  return out;
}

/* ----------------------------------------------------------- S8.1 Merkle */

/** Merkle root over receipt ids: leaves SHA-256(UTF-8 id), odd levels duplicate the last digest. */
export function refMerkleRoot(ids: string[]): string | null {
  if (ids.length === 0) return null;
  const up = (level: Buffer[]): Buffer => {
    if (level.length === 1) return level[0];
    const even = level.length % 2 === 0 ? level : [...level, level[level.length - 1]];
    const next: Buffer[] = [];
    for (let i = 0; i < even.length; i += 2) next.push(refSha256(Buffer.concat([even[i], even[i + 1]])));
    return up(next);
  };
  return up(ids.map((id) => refSha256(Buffer.from(id, 'utf8')))).toString('hex');
}

/* ------------------------------------------------------------- receipts */

/** A core-form receipt (S3) committing to `bytes`. */
export function refCoreReceipt(id: string, bytes: Uint8Array, provenance = 'EXECUTED BY LEDGER'): Record<string, unknown> {
  return {
    id,
    receipt_schema_version: '0.3',
    created_at: '2026-09-23T23:45:20.760Z',
    tool: { name: 'live_price', version: '4.0.0', scope: 'public' },
    provenance_class: provenance,
    canonical_bytes: refEncodeBase64(bytes),
    output_hash: 'sha256:' + refSha256Hex(bytes),
    verification_status: 'verified',
  };
}

/** A transport-form `_receipt` (the guide's raw MCP form) committing to `bytes`. */
export function refTransportReceipt(id: string, bytes: Uint8Array, provenance = 'EXECUTED BY ZAMBO'): Record<string, unknown> {
  return {
    id,
    tool: 'zambo_universal',
    timestamp: '2026-09-29T10:57:40.911Z',
    tool_context: { name: 'zambo_universal', version: '1.2.0', scope: 'public' },
    receipt_schema_version: '0.3',
    provenance_class: provenance,
    canonical_bytes: refEncodeBase64(bytes),
    canonical_byte_length: bytes.length,
    hash_algorithm: 'sha256',
    output_hash: 'sha256:' + refSha256Hex(bytes),
    verification_status: 'execution_observed',
    status: 'ok',
  };
}

/** A workflow receipt (S8) over `stepIds`, with its step receipts; the root is computed by {@link refMerkleRoot}. */
export function refWorkflow(
  workflowId: string,
  receiptId: string,
  stepIds: string[],
  options: { root?: string | null; stepBytes?: (i: number) => Uint8Array } = {},
): { workflow: Record<string, unknown>; step_receipts: Record<string, unknown>[] } {
  const bytesOf = options.stepBytes ?? ((i: number) => Buffer.from(`{"step":${i + 1}}`, 'utf8'));
  const receipts = stepIds.map((id, i) => refCoreReceipt(id.toLowerCase(), bytesOf(i)));
  const steps = stepIds.map((id, i) => {
    const t = (s: number) => `2026-09-29T10:${String(10 + (i % 40)).padStart(2, '0')}:${String(s).padStart(2, '0')}.100Z`;
    return {
      seq: i + 1,
      tool: 'live_price',
      receipt_id: id,
      receipt_hash: String(receipts[i].output_hash).slice('sha256:'.length),
      started_at: t(10),
      ended_at: t(12),
      status: 'ok',
    };
  });
  const workflow = {
    type: 'verifiable-workflow-receipt',
    version: '1',
    workflow_id: workflowId,
    receipt_id: receiptId,
    session_id: 'session-ref',
    goal: 'reference workflow',
    status: 'ok',
    steps,
    merkle_root: options.root === undefined ? refMerkleRoot(stepIds) : options.root,
    output_hash: refSha256Hex('final output'),
    verify_url: `https://ledger.example/workflow/${workflowId}`,
  };
  return { workflow, step_receipts: receipts };
}
