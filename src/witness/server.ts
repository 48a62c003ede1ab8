/**
 * A tlog witness over node:http (c2sp.org/tlog-witness): small, no
 * framework, quick to start. Routes, with the submission and monitoring
 * prefixes both at the root:
 *
 * - `POST /add-checkpoint` ("add-checkpoint"): body `old <size>\n`, up to
 *   63 base64 proof lines, an empty line, the signed checkpoint (at most
 *   {@link MAX_ADD_CHECKPOINT_BODY} bytes, else 413). Answers:
 *   200 `text/plain; charset=utf-8`, this witness's cosignature line
 *   (type 0x04, timestamped with the current time in seconds) and a
 *   newline, only after the new checkpoint is on disk;
 *   409 `text/x.tlog.size`, `<latest cosigned size>\n`, when `old` is not it;
 *   400 malformed request or `old` above the checkpoint size; 403 no valid
 *   signature by a configured key of the origin, or a bad one; 404 origin not
 *   configured; 422 a size-0 checkpoint without the empty root, a proof from
 *   0, different roots at equal sizes, or a consistency proof that fails;
 *   413 body too large; 405 other methods; 503 the record could not be
 *   stored (nothing was cosigned). Errors other than 409 are JSON
 *   `{"error": "<code>", "message": "..."}`.
 * - `GET /<lowercase hex SHA-256 of the origin>/checkpoint` (monitor
 *   retrieval): the latest cosigned checkpoint with the log's signature(s)
 *   and this witness's cosignature, `text/plain; charset=utf-8`; 404 when
 *   none was cosigned for that origin.
 *
 * The check against the stored size and the durable write of the new record
 * run under a per-origin lock, so two concurrent requests cannot both be
 * cosigned from the same old size (the rollback race the spec describes).
 * A 422 on a validly signed checkpoint is evidence of a misbehaving log: its
 * request body is kept under `<state>/evidence/` (best effort).
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  AddCheckpointRequest,
  checkAddCheckpoint,
  cosignCheckpoint,
  formatCosignatureBody,
  formatSizeBody,
  originHash,
  NoteSigner,
  NoteVerifier,
  parseAddCheckpointRequest,
  requestOrigin,
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
} from '../core/tlog';
import { visibleSegments } from '../core/text';
import { WitnessStateStore } from './state';

/**
 * Largest add-checkpoint body accepted, in bytes: the old size line and 63
 * proof lines take under 3 KiB; the rest leaves room for a checkpoint with
 * far more than the 16 signatures signed-note requires verifiers to accept.
 */
export const MAX_ADD_CHECKPOINT_BODY = 128 * 1024;

/** What a witness needs to run. */
export interface WitnessConfig {
  /** This witness's key (type 0x04). */
  readonly signer: NoteSigner;
  /** The logs' keys (type 0x01); each key's name is its log's origin. Several keys may share an origin. */
  readonly logs: readonly NoteVerifier[];
  readonly store: WitnessStateStore;
  /** Current time in POSIX seconds (default: the clock). */
  readonly now?: () => number;
  /** One line per request (default: none). */
  readonly log?: (line: string) => void;
}

/** A value shown in a log line: escaped (no control or bidi characters) and cut short. */
function shown(s: string, max = 120): string {
  const e = visibleSegments(s)
    .map((g) => ('text' in g ? g.text : `\\u{${g.codePoint.toString(16)}}`))
    .join('');
  return JSON.stringify(e.length > max ? `${e.slice(0, max - 3)}...` : e);
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      total += c.length;
      if (total > limit) {
        done = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
  });
}

interface Answer {
  status: number;
  type: string;
  body: string;
  /** Extra fields for the request log line. */
  note?: string;
  headers?: Record<string, string>;
}

const jsonError = (status: number, code: string, message: string, note?: string): Answer => ({
  status,
  type: 'application/json',
  body: JSON.stringify({ error: code, message }) + '\n',
  note: note ?? `error=${code}`,
});

/**
 * The request handler of a witness (for `http.createServer`). Validates
 * the configuration: the signer must be type 0x04 and every log key type
 * 0x01 (throws Error otherwise).
 */
export function createWitnessHandler(config: WitnessConfig): (req: IncomingMessage, res: ServerResponse) => void {
  const { signer, store } = config;
  if (signer.type !== SIG_COSIGNATURE_V1) throw new Error(`the witness key ${signer.name} is not a cosignature key (type 0x04)`);
  const byOrigin = new Map<string, NoteVerifier[]>();
  for (const k of config.logs) {
    if (k.type !== SIG_ED25519) throw new Error(`the log key ${k.name} is not an Ed25519 log key (type 0x01)`);
    const list = byOrigin.get(k.name) ?? [];
    if (!list.some((x) => x.keyId === k.keyId && x.publicKey.equals(k.publicKey))) list.push(k);
    byOrigin.set(k.name, list);
  }
  const now = config.now ?? (() => Math.floor(Date.now() / 1000));
  const log = config.log ?? (() => undefined);
  const byHash = (hex: string): string | null => store.origins().find((o) => originHash(o) === hex) ?? null;

  async function addCheckpoint(body: Buffer): Promise<Answer> {
    let req: AddCheckpointRequest;
    let origin: string;
    try {
      req = parseAddCheckpointRequest(body);
      origin = requestOrigin(req);
    } catch (e) {
      return jsonError(400, 'witness_request_malformed', (e as Error).message);
    }
    const keys = byOrigin.get(origin) ?? null;
    const who = `origin=${shown(origin)} old=${req.oldSize}`;
    if (keys === null) return jsonError(404, 'witness_unknown_origin', 'this witness does not follow that log', `${who} error=witness_unknown_origin`);
    return store.withOriginLock(origin, async (): Promise<Answer> => {
      const latest = store.get(origin);
      const d = checkAddCheckpoint(req, keys, latest);
      if (!d.ok) {
        if (d.status === 409) {
          return { status: 409, type: 'text/x.tlog.size', body: formatSizeBody(d.size as number), note: `${who} error=${d.code} size=${d.size}` };
        }
        let note = `${who} error=${d.code}`;
        if (d.status === 422) {
          // Signed by the log and inconsistent with what it cosigned: keep it (spec: MAY log it as proof of misbehaviour).
          const saved = await store.saveEvidence(origin, body).catch(() => null);
          if (saved) note += ` evidence=${saved}`;
        }
        return { ...jsonError(d.status, d.code, d.message), note };
      }
      const timestamp = Math.max(1, now());
      const line = cosignCheckpoint(d.text, signer, timestamp);
      const logLines = d.note.verified.map((s) => s.line);
      const stored = `${d.text}\n${[...logLines, line].map((l) => l + '\n').join('')}`;
      try {
        await store.put({ origin, size: d.checkpoint.size, rootHash: d.checkpoint.rootHash, note: stored });
      } catch (e) {
        return jsonError(503, 'witness_storage_failed', 'the checkpoint could not be stored; nothing was cosigned', `${who} error=witness_storage_failed (${(e as Error).message})`);
      }
      return { status: 200, type: 'text/plain; charset=utf-8', body: formatCosignatureBody([line]), note: `${who} size=${d.checkpoint.size} cosigned` };
    });
  }

  async function route(req: IncomingMessage): Promise<Answer> {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/add-checkpoint') {
      if (req.method !== 'POST') return { ...jsonError(405, 'method_not_allowed', 'add-checkpoint is a POST'), headers: { Allow: 'POST' } };
      let body: Buffer;
      try {
        body = await readBody(req, MAX_ADD_CHECKPOINT_BODY);
      } catch (e) {
        if (e instanceof BodyTooLarge) return { ...jsonError(413, 'body_too_large', `the body exceeds ${MAX_ADD_CHECKPOINT_BODY} bytes`), headers: { Connection: 'close' } };
        throw e;
      }
      return addCheckpoint(body);
    }
    const m = /^\/([0-9a-f]{64})\/checkpoint$/.exec(path);
    if (m) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return { ...jsonError(405, 'method_not_allowed', 'use GET'), headers: { Allow: 'GET, HEAD' } };
      const origin = byHash(m[1]);
      const rec = origin === null ? null : store.get(origin);
      if (!rec) return jsonError(404, 'witness_no_checkpoint', 'this witness has cosigned no checkpoint for that origin');
      return { status: 200, type: 'text/plain; charset=utf-8', body: rec.note, note: `origin=${shown(rec.origin)} size=${rec.size}` };
    }
    return jsonError(404, 'not_found', 'no such endpoint');
  }

  return (req, res) => {
    const started = Date.now();
    route(req)
      .catch((e): Answer => jsonError(500, 'internal_error', 'internal error', `error=internal_error (${(e as Error).message})`))
      .then((a) => {
        const bytes = Buffer.from(a.body, 'utf8');
        res.writeHead(a.status, { 'Content-Type': a.type, 'Content-Length': String(bytes.length), 'Cache-Control': 'no-store', ...(a.headers ?? {}) });
        res.end(req.method === 'HEAD' ? undefined : bytes);
        log(`${new Date().toISOString()} ${req.method} ${shown((req.url ?? '').slice(0, 200))} ${a.status} ${a.note ?? ''} ${Date.now() - started}ms`.replace(/ +/g, ' '));
      })
      .catch(() => res.destroy());
  };
}

/** A running witness. */
export interface RunningWitness {
  readonly server: Server;
  /** `http://host:port` of the bound address. */
  readonly url: string;
  readonly port: number;
  /** Stop accepting, finish requests in flight, then release the state directory. */
  close(): Promise<void>;
}

/** Listen on `host:port` (port 0: any free port) with {@link createWitnessHandler}. */
export async function startWitness(config: WitnessConfig, host: string, port: number): Promise<RunningWitness> {
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, createWitnessHandler(config));
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const shownHost = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  let closing: Promise<void> | null = null;
  return {
    server,
    url: `http://${shownHost}:${a.port}`,
    port: a.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }).then(() => config.store.close());
      return closing;
    },
  };
}

/**
 * Parse `HOST:PORT` (`[v6addr]:PORT` for IPv6): the port is required, a
 * decimal from 0 to 65535 (0 picks a free port). Throws Error with a
 * one-line reason.
 */
export function parseListen(s: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):([0-9]{1,5})$/.exec(s);
  if (!m) throw new Error(`--listen is HOST:PORT (e.g. 127.0.0.1:7380 or [::1]:7380), got ${JSON.stringify(s.slice(0, 100))}`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`the port ${m[3]} is above 65535`);
  return { host: m[1] ?? m[2], port };
}
