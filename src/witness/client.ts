/**
 * The log's side of c2sp.org/tlog-witness "add-checkpoint": submit a signed
 * checkpoint with a consistency proof to one witness and classify its
 * answer. No retries here (the caller owns backoff and learns the witness's
 * size from a conflict).
 */
import { formatAddCheckpointRequest, NoteVerifier, parseNote, parseSizeBody, verifyCosignature } from '../core/tlog';

/** Largest witness response read, in bytes (a cosignature line is about 150). */
export const MAX_WITNESS_RESPONSE = 64 * 1024;

/** Default time allowed for one submission, in milliseconds. */
export const DEFAULT_WITNESS_TIMEOUT_MS = 10_000;

/** The outcome of one submission. */
export type WitnessSubmitResult =
  /** 200: the signature lines the witness returned (without newlines); verified when `witness` was given. */
  | { readonly status: 'cosigned'; readonly cosignatureLines: string[] }
  /** 409: the witness's latest cosigned size (resubmit with that old size and a proof from it). */
  | { readonly status: 'conflict'; readonly size: number }
  /** Any other answer, or a 200/409 whose body does not follow the spec: `http` status and the body text (cut at 2000 chars). */
  | { readonly status: 'rejected'; readonly http: number; readonly body: string }
  /** No HTTP answer: connection refused, reset, or `timeoutMs` elapsed. */
  | { readonly status: 'unreachable'; readonly error: string };

export interface SubmitOptions {
  /** Milliseconds for the whole exchange (default {@link DEFAULT_WITNESS_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  /**
   * The witness's key (type 0x04): when given, a 200 counts as `cosigned`
   * only with at least one line by this key that verifies over the
   * checkpoint, and only those lines are returned; otherwise `rejected`.
   */
  readonly witness?: NoteVerifier;
}

async function readCapped(res: Response, limit: number): Promise<string | null> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * POST `<url>/add-checkpoint` with `old <oldSize>`, the proof hashes
 * (32 bytes each, at most 63) and the signed checkpoint note, and classify
 * the answer. `url` is the witness's submission prefix (its base URL; a
 * trailing slash is fine). Never throws for network or protocol trouble
 * (those are `unreachable` / `rejected`); throws TlogError
 * witness_request_malformed when the request itself cannot be formed.
 */
export async function submitToWitness(url: string, oldSize: number, proof: readonly Uint8Array[], signedCheckpointNote: string, opts: SubmitOptions = {}): Promise<WitnessSubmitResult> {
  const body = formatAddCheckpointRequest({ oldSize, proof: proof.map((p) => Buffer.from(p)), checkpoint: signedCheckpointNote });
  const target = `${url.replace(/\/+$/, '')}/add-checkpoint`;
  const signal = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_WITNESS_TIMEOUT_MS);
  let res: Response;
  let text: string | null;
  try {
    res = await fetch(target, { method: 'POST', body, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, signal, redirect: 'error' });
    text = await readCapped(res, MAX_WITNESS_RESPONSE);
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const why = err.name === 'TimeoutError' || err.name === 'AbortError' ? `timed out after ${opts.timeoutMs ?? DEFAULT_WITNESS_TIMEOUT_MS} ms` : (err.cause?.code ?? err.cause?.message ?? err.message);
    return { status: 'unreachable', error: String(why) };
  }
  const rejected = (why?: string): WitnessSubmitResult => ({ status: 'rejected', http: res.status, body: why ?? (text ?? '').slice(0, 2000) });
  if (text === null) return rejected(`the response exceeds ${MAX_WITNESS_RESPONSE} bytes`);
  if (res.status === 409) {
    if (!/^text\/x\.tlog\.size\s*(;|$)/i.test(res.headers.get('content-type') ?? '')) return rejected();
    try {
      return { status: 'conflict', size: parseSizeBody(text) };
    } catch (_) {
      return rejected();
    }
  }
  if (res.status !== 200) return rejected();
  // The body is signature lines: append it to the checkpoint and parse the note (the spec's suggestion).
  const sigs = (() => {
    if (text.length === 0 || !text.endsWith('\n')) return null;
    try {
      const withLines = parseNote(`${signedCheckpointNote}${text}`);
      const own = parseNote(signedCheckpointNote);
      return { text: withLines.text, lines: withLines.signatures.slice(own.signatures.length) };
    } catch (_) {
      return null;
    }
  })();
  if (sigs === null || sigs.lines.length === 0) return rejected();
  if (!opts.witness) return { status: 'cosigned', cosignatureLines: sigs.lines.map((s) => s.line) };
  const valid: string[] = [];
  for (const s of sigs.lines) {
    if (s.name !== opts.witness.name || s.keyId !== opts.witness.keyId) continue;
    try {
      verifyCosignature(sigs.text, s, opts.witness);
      valid.push(s.line);
    } catch (_) {
      return rejected(`a cosignature by ${opts.witness.name} does not verify`);
    }
  }
  return valid.length > 0 ? { status: 'cosigned', cosignatureLines: valid } : rejected(`no cosignature by ${opts.witness.name}`);
}
