/**
 * The auditor's HTTP client of a ledger's log (`aer1 log monitor`,
 * `aer1 log inclusion`): GET with a timeout and a size cap; a network
 * failure, a timeout or an unusable answer is {@link LogUnreachable} (exit 2).
 */
import { decodeStrictBase64, isObject, JsonObject } from '../core/aer1';
import { CliError, errorText } from './io';
import { safe } from './report';

/** Largest answer read from the log, in bytes. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Default HTTP timeout, in seconds. */
export const DEFAULT_TIMEOUT_S = 30;

/** `--url` (or `flag`): an http(s) base URL, without a trailing slash. */
export function baseUrl(url: string | undefined, flag = '--url'): string {
  if (url === undefined) throw new CliError(`${flag} BASE (the ledger, e.g. http://localhost:3000) is required`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`${flag} must be a URL such as http://localhost:3000, got ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(`${flag} must be http or https, got ${u.protocol}`);
  if (u.search || u.hash) throw new CliError(`${flag} is a base URL, without ?query or #fragment`);
  return url.replace(/\/+$/, '');
}

/** The log could not be reached, timed out, or answered something unusable (exit 2). */
export class LogUnreachable extends CliError {}

interface Answer {
  status: number;
  body: Buffer;
}

/** GET `url` with a timeout (and `apiKey` as a Bearer token, when given); a body above {@link MAX_ANSWER_BYTES} or a network failure is a {@link LogUnreachable}. */
export async function httpGet(url: string, timeoutS: number, accept: string, apiKey?: string): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: accept, ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) }, signal: AbortSignal.timeout(timeoutS * 1000) });
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause ?? e;
    const timedOut = (e as Error).name === 'TimeoutError';
    throw new LogUnreachable(`cannot reach ${new URL(url).origin}: ${timedOut ? `no answer in ${timeoutS} s` : errorText(cause)}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw new LogUnreachable(`${url} answered ${declared} bytes, more than ${MAX_ANSWER_BYTES}`);
  }
  let body: Buffer;
  try {
    body = Buffer.from(await res.arrayBuffer());
  } catch (e) {
    throw new LogUnreachable(`reading ${url}: ${errorText((e as { cause?: unknown }).cause ?? e)}`);
  }
  if (body.length > MAX_ANSWER_BYTES) throw new LogUnreachable(`${url} answered more than ${MAX_ANSWER_BYTES} bytes`);
  return { status: res.status, body };
}

/** GET `url`; anything but 200 is a {@link LogUnreachable}. */
export async function getOk(url: string, timeoutS: number, accept: string, apiKey?: string): Promise<Buffer> {
  const a = await httpGet(url, timeoutS, accept, apiKey);
  if (a.status !== 200) throw new LogUnreachable(`${url} answered ${a.status}${shortBody(a.body)}`);
  return a.body;
}

/** The start of an answer's body, for an error message. */
export function shortBody(b: Buffer): string {
  const s = b.toString('utf8').trim();
  return s ? `: ${safe(s, 160)}` : '';
}

/** GET `url` as a JSON object, else a {@link LogUnreachable}. */
export async function getJson(url: string, timeoutS: number, apiKey?: string): Promise<JsonObject> {
  const body = await getOk(url, timeoutS, 'application/json', apiKey);
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    throw new LogUnreachable(`${url} did not answer JSON`);
  }
  if (!isObject(v)) throw new LogUnreachable(`${url} did not answer a JSON object`);
  return v;
}

/** A proof's `proof` member: at most 63 base64 SHA-256 hashes, else a {@link LogUnreachable}. */
export function hashList(v: unknown, url: string): Buffer[] {
  if (!Array.isArray(v) || v.length > 63) throw new LogUnreachable(`${url}: "proof" is not an array of at most 63 hashes`);
  return v.map((h) => {
    const b = decodeStrictBase64(h);
    if (b === null || b.length !== 32) throw new LogUnreachable(`${url}: a proof hash is not base64 of 32 bytes`);
    return b;
  });
}

/** One leaf of a `GET /api/ledger/leaves` page, checked: index in order, leaf hash 32 bytes, leaf bytes (or null) hashing to it. */
export interface PageLeaf {
  index: number;
  leaf: Buffer | null;
  leafHash: Buffer;
  withheld?: string;
}

/**
 * Leaves `[start, start + count)` from `GET BASE/api/ledger/leaves` (the log
 * may answer fewer: the caller pages on). Each leaf is checked: its index is
 * the next one, `leaf_hash` is base64 of 32 bytes and, when the bytes are
 * served, equals SHA-256(0x00 || leaf). Anything else is a {@link LogUnreachable}.
 */
export async function leavesPage(base: string, start: number, count: number, timeoutS: number, leafHashOf: (leaf: Buffer) => Buffer, apiKey?: string): Promise<PageLeaf[]> {
  const url = `${base}/api/ledger/leaves?start=${start}&count=${count}`;
  const doc = await getJson(url, timeoutS, apiKey);
  const list = doc.leaves;
  if (!Array.isArray(list) || list.length === 0 || list.length > count) throw new LogUnreachable(`${url}: "leaves" is not a list of 1..${count} leaves`);
  return list.map((l: unknown, k: number): PageLeaf => {
    const o = isObject(l) ? l : {};
    if (o.index !== start + k) throw new LogUnreachable(`${url}: leaf ${k} of the page has index ${String(o.index)}, not ${start + k}`);
    const h = decodeStrictBase64(o.leaf_hash);
    if (h === null || h.length !== 32) throw new LogUnreachable(`${url}: leaf ${start + k} has no base64 leaf_hash of 32 bytes`);
    if (o.leaf === null) return { index: start + k, leaf: null, leafHash: h, ...(typeof o.withheld === 'string' ? { withheld: o.withheld } : {}) };
    const leaf = decodeStrictBase64(o.leaf);
    if (leaf === null) throw new LogUnreachable(`${url}: leaf ${start + k} is not base64`);
    if (!leafHashOf(leaf).equals(h)) throw new LogUnreachable(`${url}: leaf ${start + k}'s bytes do not hash to its leaf_hash`);
    return { index: start + k, leaf, leafHash: h };
  });
}
