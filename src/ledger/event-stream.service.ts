import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { ServerResponse } from 'node:http';
import { ApiKeysService, KEY_CACHE_MS, Principal } from '../auth/api-keys.service';
import { mayReadWithheld } from '../auth/permissions';
import { LedgerError } from '../common/errors';
import { AppConfig } from '../config/configuration';
import { payloadState, StoredEvent } from '../core/ledger/event-hash';
import { DatabaseService } from '../database/database.service';
import { parseStoredJson } from '../database/rows';
import { EventsRepository } from './events.repository';
import { LedgerNotifier } from './ledger-notifier';

/** Events per read: the stream holds at most one page in memory per subscriber. */
const PAGE = 200;
/** Positions scanned per read with a `stream_prefix` (bounds a read when few events match). */
const SCAN_WINDOW = 5000;

/**
 * One event as the stream sends it (the `data:` of an SSE event whose `id:`
 * is `position`): every stored column, so a SIEM can recompute `event_hash`
 * and the chain itself with `aer1-ledger-event/<format>` (core/ledger/event-hash.ts).
 * `data` is the event data's JSON text exactly as stored; it is null, with
 * `data_withheld: true`, for a caller who may not read withheld content (a
 * compliance key) when the recording key's publication was `metadata` (S13).
 */
export interface StreamedEvent {
  position: number;
  stream_id: string;
  stream_position: number;
  type: string;
  recorded_at: string;
  format: number;
  key_id: string | null;
  key_name: string | null;
  prev_hash: string;
  event_hash: string;
  data: string | null;
  data_withheld?: true;
  /** Format 3 (issue 29): the fields of the leaf beyond format 2, and the payload's salt when `data` is sent (so the commitment can be checked). */
  stream_prev?: number | null;
  public_ids?: string | null;
  payload_commitment?: string | null;
  payload_salt?: string | null;
  /** The payload was erased (issue 29): `data` is null; the leaf fields still let the hash be recomputed (format 3). */
  data_erased?: true;
}

/** The stream form of a stored event (see {@link StreamedEvent}). */
export function streamedEvent(e: StoredEvent, mayReadWithheldContent: boolean): StreamedEvent {
  const erased = payloadState(e) === 'erased';
  const withheld = !erased && !mayReadWithheldContent && (parseStoredJson(e.data) as { publication?: unknown } | undefined)?.publication === 'metadata';
  const f3 = Number(e.format ?? 1) === 3;
  return {
    position: e.position,
    stream_id: e.stream_id,
    stream_position: e.stream_position,
    type: e.type,
    recorded_at: e.recorded_at,
    format: Number(e.format ?? 1),
    key_id: e.key_id ?? null,
    key_name: e.key_name ?? null,
    prev_hash: e.prev_hash,
    event_hash: e.event_hash,
    data: withheld || erased ? null : e.data,
    ...(withheld ? { data_withheld: true as const } : {}),
    ...(erased ? { data_erased: true as const } : {}),
    ...(f3 ? { stream_prev: e.stream_prev ?? null, public_ids: e.public_ids ?? null, payload_commitment: e.payload_commitment ?? null, payload_salt: withheld || erased ? null : (e.payload_salt ?? null) } : {}),
  };
}

/** Resolves when `res` drains or `signal` aborts (listeners removed either way). */
function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const finish = (): void => {
      res.off('drain', finish);
      signal.removeEventListener('abort', finish);
      resolve();
    };
    res.once('drain', finish);
    signal.addEventListener('abort', finish, { once: true });
  });
}

/** Where a stream starts: after `after` (0: from the first event), only streams starting with `prefix` (null: all). */
export interface StreamRequest {
  after: number;
  prefix: string | null;
}

/** The last message of a stream whose key was revoked (then the stream ends; reconnecting answers 401 `key_revoked`). */
export const KEY_REVOKED_EVENT = `event: key_revoked\ndata: ${JSON.stringify({ error: 'key_revoked', message: 'the API key of this stream was revoked; the stream ends here' })}\n\n`;

/**
 * The live feed of ledger events as Server-Sent Events
 * (GET /api/ledger/events/stream). Each subscriber reads pages of the events
 * table as its socket drains (nothing is buffered beyond one page and the
 * socket's own buffer); an idle stream waits for this process's next commit
 * ({@link LedgerNotifier}) or polls the head every SSE_POLL_MS (appends by
 * other processes). Positions commit in order (appends are serialized), so
 * reading up to the committed head never skips an event that commits later.
 * Bounded per key and per process; ended cleanly at shutdown. A stream
 * lives no longer than its key: before each page of events is sent the key's
 * row is read again (a page read after a revocation committed is never
 * sent, whichever process revoked it), every stream re-reads it every
 * KEY_CACHE_MS on a timer of its own (also one waiting for a client that
 * stopped reading to drain its socket), and a revocation through this
 * process ends it at once; the stream then ends with a `key_revoked` event
 * ({@link KEY_REVOKED_EVENT}), or, when its socket is full, the socket is
 * closed; either way its slot is freed.
 */
@Injectable()
export class EventStreamService implements OnModuleDestroy {
  private readonly log = new Logger('EventStream');
  private readonly perKey = new Map<string, number>();
  private total = 0;
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private readonly heartbeatMs: number;
  private readonly pollMs: number;
  private readonly maxPerKey: number;
  private readonly maxTotal: number;

  constructor(
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
    private readonly notifier: LedgerNotifier,
    private readonly keys: ApiKeysService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.heartbeatMs = config.get('SSE_HEARTBEAT_MS', { infer: true });
    this.pollMs = config.get('SSE_POLL_MS', { infer: true });
    this.maxPerKey = config.get('SSE_MAX_PER_KEY', { infer: true });
    this.maxTotal = config.get('SSE_MAX_STREAMS', { infer: true });
  }

  /** Open streams now (for tests and /health-like reads). */
  get open(): number {
    return this.total;
  }

  /**
   * Take a subscriber slot for `p`, or throw 429 `stream_limit_key` (the key
   * has SSE_MAX_PER_KEY streams open) / `stream_limit_server` (the process has
   * SSE_MAX_STREAMS) / 503 `queue_unavailable` while shutting down. Returns
   * the release function (idempotent).
   */
  reserve(p: Principal): () => void {
    if (this.stopping.signal.aborted) throw new LedgerError(503, 'queue_unavailable', 'the server is shutting down; reconnect with Last-Event-ID');
    const mine = this.perKey.get(p.key_id) ?? 0;
    if (mine >= this.maxPerKey) {
      throw new LedgerError(429, 'stream_limit_key', `key ${JSON.stringify(p.name)} has ${mine} event streams open, the most one key may hold (SSE_MAX_PER_KEY); close one first`, { limit: this.maxPerKey, retry_after_seconds: 5 });
    }
    if (this.total >= this.maxTotal) {
      throw new LedgerError(429, 'stream_limit_server', `this server has ${this.total} event streams open, the most it serves (SSE_MAX_STREAMS); try again later`, { limit: this.maxTotal, retry_after_seconds: 5 });
    }
    this.perKey.set(p.key_id, mine + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.perKey.get(p.key_id) ?? 1) - 1;
      if (n <= 0) this.perKey.delete(p.key_id);
      else this.perKey.set(p.key_id, n);
      this.total--;
    };
  }

  /**
   * Serve one stream on `res` until the client goes away or the server stops;
   * `release` (from {@link reserve}) is called at the end. Writes the SSE
   * headers itself; never throws (a read failure ends the stream, and the
   * client resumes with Last-Event-ID).
   */
  serve(res: ServerResponse, p: Principal, request: StreamRequest, release: () => void): void {
    const done = this.run(res, p, request)
      .catch((e: unknown) => this.log.warn(`event stream ended by an error: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        release();
        if (!res.writableEnded) res.end();
        this.running.delete(done);
      });
    this.running.add(done);
  }

  private async run(res: ServerResponse, p: Principal, request: StreamRequest): Promise<void> {
    const closed = new AbortController();
    const end = (): void => closed.abort();
    res.on('close', end);
    this.stopping.signal.addEventListener('abort', end, { once: true });
    let revoked = false;
    const unsubscribe = this.keys.onRevoke((id) => {
      if (id !== p.key_id) return;
      revoked = true;
      end();
    });
    let checkedAt = performance.now();
    /** False (and the stream marked revoked) once the key's row says so; read now. */
    const keyActive = async (): Promise<boolean> => {
      checkedAt = performance.now();
      if (!revoked && !(await this.keys.stillActive(p))) revoked = true;
      return !revoked;
    };
    const withheldOk = mayReadWithheld(p);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store, no-transform',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    // Tell EventSource clients to come back soon after a drop; they send Last-Event-ID.
    res.write('retry: 2000\n\n');
    // The key's row is read again every KEY_CACHE_MS whatever the loop is doing: a stream stuck
    // waiting for a client that stopped reading (a full socket) still ends on a revocation by another process.
    let checking = false;
    const keyTimer = setInterval(() => {
      if (checking || revoked || closed.signal.aborted || performance.now() - checkedAt < KEY_CACHE_MS) return;
      checking = true;
      keyActive()
        .then((active) => {
          if (!active) end();
        })
        .catch((e: unknown) => this.log.warn(`event stream key re-read failed: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => (checking = false));
    }, KEY_CACHE_MS);
    const heartbeat = setInterval(() => {
      // A comment line: keeps proxies from closing an idle stream; skipped while the client is not draining.
      if (!res.writableNeedDrain && !closed.signal.aborted) res.write(`: heartbeat ${new Date().toISOString()}\n\n`);
    }, this.heartbeatMs);
    try {
      let cursor = request.after; // every position <= cursor has been considered
      while (!closed.signal.aborted) {
        let head = (await this.events.head(this.db))?.position ?? 0;
        if (this.db.readsMaySeeUncommitted) head = Math.min(head, this.notifier.committedHead);
        if (head > cursor) {
          const upTo = request.prefix === null ? head : Math.min(head, cursor + SCAN_WINDOW);
          const rows = await this.events.pageWithPrefix(this.db, cursor, upTo, request.prefix, PAGE);
          // Read after the page: an event committed after the revocation is in the page only if the revocation is visible here.
          if (rows.length > 0 && !(await keyActive())) return;
          for (const r of rows) {
            if (closed.signal.aborted) return;
            const ok = res.write(`id: ${r.position}\ndata: ${JSON.stringify(streamedEvent(r, withheldOk))}\n\n`);
            // Backpressure: wait for the client to drain before reading (or sending) more.
            if (!ok) await drained(res, closed.signal);
          }
          cursor = rows.length === PAGE ? rows[rows.length - 1].position : upTo;
          await new Promise<void>((resolve) => setImmediate(resolve));
          continue;
        }
        await this.notifier.next(this.pollMs, closed.signal);
        if (performance.now() - checkedAt >= KEY_CACHE_MS && !closed.signal.aborted && !(await keyActive())) return;
      }
    } finally {
      clearInterval(heartbeat);
      clearInterval(keyTimer);
      unsubscribe();
      res.off('close', end);
      this.stopping.signal.removeEventListener('abort', end);
      if (revoked && !res.writableEnded && !res.destroyed) {
        // A client that stopped reading never gets the last event: its socket is closed instead of left open.
        if (res.writableNeedDrain) res.destroy();
        else res.write(KEY_REVOKED_EVENT);
      }
      if (this.stopping.signal.aborted && !res.writableEnded && !res.destroyed) res.write(': server shutting down; reconnect with Last-Event-ID\n\n');
    }
  }

  /** At shutdown, before the HTTP server closes: end every stream and wait for each to stop reading. */
  async onModuleDestroy(): Promise<void> {
    this.stopping.abort();
    await Promise.all([...this.running]);
  }
}
