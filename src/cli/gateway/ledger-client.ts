/**
 * The gateway's side of the ledger's HTTP API (docs/api.md): record a
 * receipt (`POST /api/receipts`, idempotent by id: the same bytes again
 * answer 200) and append its chain entry to the job's timeline (`POST
 * /api/jobs/{id}/entries`, each entry extending the head the gateway
 * holds), and close the job's timeline when its session ends (`POST
 * /api/jobs/{id}/close`). Appends and closes are serialized per job in this
 * process; a head moved by another writer is read again, and an entry
 * already there (by receipt id) is not appended twice.
 */
import { ZERO_DIGEST } from '../../core/aer1';
import { entryFor, GatewayReceipt } from './receipt';

/** The ledger could not be reached or answered 5xx/429: the call may be recorded later. */
export class LedgerDownError extends Error {}

/** The ledger refused the record (4xx other than 429): it will not be recorded by trying again. */
export class LedgerRefusedError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

interface Head {
  seq: number;
  digest: string;
  closed: boolean;
}

/** How many times an append is tried again after another writer moved the head. */
const APPEND_TRIES = 5;

export class LedgerClient {
  private readonly heads = new Map<string, Head>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** False until the ledger answered, and after any request that could not reach it. */
  healthy = false;

  constructor(
    private readonly server: string,
    private readonly key: string,
    private readonly timeoutMs = 10_000,
  ) {}

  private async call(method: string, path: string, body?: string): Promise<{ status: number; json: Record<string, unknown> }> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.server), {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      this.healthy = false;
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new LedgerDownError(`the ledger at ${this.server} cannot be reached (${cause})`);
    }
    const text = await res.text().catch(() => '');
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not JSON: the status says enough
    }
    if (res.status >= 500 || res.status === 429) {
      this.healthy = false;
      throw new LedgerDownError(`the ledger at ${this.server} answered ${res.status} ${typeof json.error === 'string' ? json.error : ''}`.trim());
    }
    this.healthy = true;
    return { status: res.status, json };
  }

  private refused(what: string, r: { status: number; json: Record<string, unknown> }): LedgerRefusedError {
    const code = typeof r.json.error === 'string' ? r.json.error : `http_${r.status}`;
    const message = typeof r.json.message === 'string' ? r.json.message : '';
    return new LedgerRefusedError(`the ledger refused ${what}: ${r.status} ${code}${message ? `: ${message}` : ''}`, code);
  }

  /**
   * Check that the ledger answers for `jobId` by reading its head, kept as
   * the job's head when none is known yet (so {@link isClosed} knows it);
   * throws {@link LedgerDownError} or {@link LedgerRefusedError}.
   */
  async probe(jobId: string): Promise<void> {
    const { head } = await this.readHead(jobId, 0, null);
    if (!this.heads.has(jobId)) this.heads.set(jobId, head);
  }

  /** True when this client holds a head of `jobId` (read, or moved by its own appends). */
  knows(jobId: string): boolean {
    return this.heads.has(jobId);
  }

  /** True when the head this client holds for `jobId` is closed: an entry would be refused (409 `timeline_closed`). */
  isClosed(jobId: string): boolean {
    return this.heads.get(jobId)?.closed === true;
  }

  /**
   * The job's head from the ledger, looking through the entries after
   * `after` for the receipt id `lookFor` (true when it is there).
   */
  private async readHead(jobId: string, after: number, lookFor: string | null): Promise<{ head: Head; found: boolean }> {
    let found = false;
    let from = lookFor === null ? Number.MAX_SAFE_INTEGER : after;
    for (;;) {
      const r = await this.call('GET', `/api/jobs/${encodeURIComponent(jobId)}/timeline?after=${from}&limit=1000`);
      if (r.status === 404) return { head: { seq: 0, digest: ZERO_DIGEST, closed: false }, found: false };
      if (r.status !== 200) throw this.refused(`the timeline read of job ${JSON.stringify(jobId)}`, r);
      const entries = (r.json.entries ?? []) as { id?: unknown }[];
      if (lookFor !== null && entries.some((e) => typeof e.id === 'string' && e.id.toLowerCase() === lookFor.toLowerCase())) found = true;
      const h = r.json.head as { seq: number; entry_digest: string; closed: boolean };
      const next = r.json.next_after;
      if (found || lookFor === null || typeof next !== 'number') return { head: { seq: Number(h.seq), digest: h.entry_digest, closed: h.closed === true }, found };
      from = next;
    }
  }

  /** Record `receipt` (its exact text `text`): 201 created or 200 the same bytes already. */
  async recordReceipt(receipt: GatewayReceipt, text: string): Promise<void> {
    const r = await this.call('POST', '/api/receipts', text);
    if (r.status !== 201 && r.status !== 200) throw this.refused(`receipt ${receipt.id}`, r);
  }

  /**
   * Append `receipt` to the timeline of `jobId` after every append queued
   * before it. `checkFirst`: look for the receipt id in the timeline first
   * (a delivery that may have landed before a crash). Resolves to the seq.
   */
  append(jobId: string, receipt: GatewayReceipt, checkFirst = false): Promise<number> {
    return this.inOrder(jobId, () => this.appendNow(jobId, receipt, checkFirst));
  }

  /**
   * Close the timeline of `jobId` after every append queued before it:
   * `POST /api/jobs/{id}/close` (docs/otlp.md), the ledger appending its
   * closing marker (tool `aer1.job.close`, provenance of this key) and
   * issuing its endpoint commitment. Resolves to the closing entry's seq and
   * the commitment's id, or null when there was nothing to close (no
   * timeline: 404; closed already: 409 `timeline_closed`). Throws
   * {@link LedgerDownError} or {@link LedgerRefusedError} (any other 4xx).
   */
  close(jobId: string): Promise<{ seq: number; commitment: string | null } | null> {
    return this.inOrder(jobId, async () => {
      const r = await this.call('POST', `/api/jobs/${encodeURIComponent(jobId)}/close`);
      if (r.status === 404 || (r.status === 409 && r.json.error === 'timeline_closed')) return null;
      if (r.status !== 201) throw this.refused(`the close of job ${JSON.stringify(jobId)}`, r);
      const h = r.json.head as { seq: number; entry_digest: string };
      this.heads.set(jobId, { seq: Number(h.seq), digest: h.entry_digest, closed: true });
      const c = r.json.ledger_commitment as { id?: unknown } | null | undefined;
      return { seq: Number(h.seq), commitment: typeof c?.id === 'string' ? c.id : null };
    });
  }

  /** Run `fn` after every append or close of `jobId` queued before it. */
  private inOrder<T>(jobId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(jobId) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(fn);
    this.queues.set(jobId, run);
    void run.finally(() => {
      if (this.queues.get(jobId) === run) this.queues.delete(jobId);
    }).catch(() => undefined);
    return run;
  }

  private async appendNow(jobId: string, receipt: GatewayReceipt, checkFirst: boolean): Promise<number> {
    let head = this.heads.get(jobId);
    if (head === undefined || checkFirst) {
      const read = await this.readHead(jobId, 0, checkFirst ? receipt.id : null);
      if (read.found) {
        this.heads.set(jobId, read.head);
        return -1;
      }
      head = read.head;
    }
    for (let attempt = 1; ; attempt++) {
      if (head.closed) throw new LedgerRefusedError(`the timeline of job ${JSON.stringify(jobId)} is closed; the call cannot be appended`, 'timeline_closed');
      const entry = entryFor(receipt, jobId, head.seq + 1, head.digest);
      const r = await this.call('POST', `/api/jobs/${encodeURIComponent(jobId)}/entries`, JSON.stringify(entry));
      if (r.status === 201) {
        const h = r.json.head as { seq: number; entry_digest: string; closed: boolean };
        this.heads.set(jobId, { seq: Number(h.seq), digest: h.entry_digest, closed: h.closed === true });
        return entry.seq;
      }
      this.heads.delete(jobId);
      const moved = r.status === 409 && (r.json.error === 'link_mismatch' || r.json.error === 'seq_not_contiguous');
      if (!moved || attempt >= APPEND_TRIES) throw this.refused(`the timeline entry of receipt ${receipt.id}`, r);
      // Another writer moved the head: read it again, and stop if this entry is already there.
      const read = await this.readHead(jobId, head.seq, receipt.id);
      if (read.found) {
        this.heads.set(jobId, read.head);
        return -1;
      }
      head = read.head;
    }
  }
}
