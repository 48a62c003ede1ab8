/**
 * RFC 3161 over HTTP (RFC 3161 3.4): POST a TimeStampReq, verify the TimeStampResp with `verifyTimeStampResponse`.
 */
import { randomBytes } from 'node:crypto';
import {
  MAX_TIMESTAMP_RESPONSE_BYTES,
  TimestampVerification,
  TsaTrust,
  buildTimeStampRequest,
  verifyTimeStampResponse,
} from '../core/timestamp';

/** Reasons a request fails before there is an answer to verify (besides the `TsaReason`s of the answer). */
export const TSA_CLIENT_REASONS = ['tsa_unreachable', 'tsa_timeout', 'tsa_http_error', 'tsa_bad_content_type', 'tsa_response_too_large'] as const;
export type TsaClientReason = (typeof TSA_CLIENT_REASONS)[number];

/** A failure of the HTTP exchange itself. */
export interface TimestampRequestFailed {
  ok: false;
  code: TsaClientReason;
  message: string;
}

export type TimestampRequestResult = TimestampVerification | TimestampRequestFailed;

export interface RequestTimestampOptions {
  /** Whole-exchange deadline in milliseconds (default 10 000). */
  timeoutMs?: number;
  /** Largest answer body accepted, in bytes (default `MAX_TIMESTAMP_RESPONSE_BYTES`, 64 KiB). */
  maxBytes?: number;
}

/**
 * Asks the TSA at `url` to timestamp `digest` (SHA-256, 32 bytes) and verifies the answer.
 * Sends `application/timestamp-query` with a random 64-bit nonce and certReq true; expects HTTP 200 with
 * `application/timestamp-reply` (RFC 3161 3.4) of at most `maxBytes`; then `verifyTimeStampResponse`
 * against `trust` and that nonce. On success `token` is the TimeStampToken DER to store.
 * Never throws for network or TSA faults: every failure is `{ok: false, code, message}` with a code from
 * `TSA_CLIENT_REASONS` or `TSA_REASONS`. `fetchImpl` defaults to the global fetch (tests may inject one).
 * @throws TypeError only when `digest` is not 32 bytes.
 */
export async function requestTimestamp(
  url: string,
  digest: Buffer,
  trust: TsaTrust,
  fetchImpl: typeof fetch = fetch,
  opts: RequestTimestampOptions = {},
): Promise<TimestampRequestResult> {
  const nonce = BigInt('0x' + randomBytes(8).toString('hex')) | 1n; // positive, never 0
  const query = buildTimeStampRequest(digest, { nonce, certReq: true });
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? MAX_TIMESTAMP_RESPONSE_BYTES;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let body: Buffer;
  try {
    let res: Response;
    try {
      res = await fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
        body: query,
        signal: controller.signal,
        redirect: 'error',
      });
    } catch (e) {
      return failure(controller.signal.aborted ? 'tsa_timeout' : 'tsa_unreachable', `TSA ${url}: ${describe(e, controller.signal.aborted, timeoutMs)}`);
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      return failure('tsa_http_error', `TSA ${url} answered HTTP ${res.status}`);
    }
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/timestamp-reply') {
      await res.body?.cancel().catch(() => undefined);
      return failure('tsa_bad_content_type', `TSA ${url} answered content-type ${JSON.stringify(type)}, expected application/timestamp-reply`);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      return failure('tsa_response_too_large', `TSA ${url} answer of ${declared} bytes is over ${maxBytes}`);
    }
    try {
      const read = await readCapped(res, maxBytes);
      if (read === null) return failure('tsa_response_too_large', `TSA ${url} answer is over ${maxBytes} bytes`);
      body = read;
    } catch (e) {
      return failure(controller.signal.aborted ? 'tsa_timeout' : 'tsa_unreachable', `TSA ${url}: ${describe(e, controller.signal.aborted, timeoutMs)}`);
    }
  } finally {
    clearTimeout(timer);
  }
  return verifyTimeStampResponse(body, digest, trust, { nonce });
}

function failure(code: TsaClientReason, message: string): TimestampRequestFailed {
  return { ok: false, code, message };
}

function describe(e: unknown, aborted: boolean, timeoutMs: number): string {
  if (aborted) return `no answer within ${timeoutMs} ms`;
  return e instanceof Error ? `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}` : String(e);
}

/** The body, or null as soon as it passes `maxBytes` (the rest is not read). */
async function readCapped(res: Response, maxBytes: number): Promise<Buffer | null> {
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
