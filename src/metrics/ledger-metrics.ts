/**
 * Prometheus metrics of the ledger (issue 17), through prom-client, in a
 * registry of their own (one per application: two apps in one process, as
 * in the tests, never share or collide).
 *
 * Bounded cardinality: no label ever carries an id, a key, a job, a receipt
 * or a raw path. Labels are the route template (`/api/receipts/:id`, or
 * {@link UNMATCHED_ROUTE}), the HTTP method (known methods, else `OTHER`),
 * the status code, the event type (a closed union per stream), the limiter
 * name, the queue state, and a witness name (configured, at most
 * {@link MAX_WITNESS_LABELS} distinct, later ones counted as `other`).
 *
 * When disabled (METRICS_ENABLED unset or false) every method returns at once
 * and nothing is recorded.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WriteObserver } from '../database/database.service';

/** The `route` label of a request that matched no route (unknown paths, static files of /docs). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Distinct witness labels kept; later names share the label `other`. */
export const MAX_WITNESS_LABELS = 32;
/** Which budget refused a request (src/common/rate-limit.ts). */
export type RateLimiter = 'public_read' | 'key_read' | 'heavy_read' | 'coverage_reports' | 'verification_batches' | 'tile_bandwidth';
/** Chunks of verification batches, by state (BullMQ's counts with REDIS_URL; in process: waiting and active). */
export type QueueState = 'waiting' | 'active' | 'delayed' | 'failed';
/** What {@link LedgerMetrics.setQueueDepthSource} reads at each scrape. */
export type QueueDepthSource = () => Promise<Partial<Record<QueueState, number>>>;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const QUEUE_STATES: QueueState[] = ['waiting', 'active', 'delayed', 'failed'];
/** Seconds: 1 ms to 30 s (HTTP answers, transactions, chunks). */
const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Events per write transaction (a single POST is 1; an NDJSON batch of 1,000 is 1,000). */
const GROUP_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

/**
 * The ledger's metrics. Other modules report through its typed methods; the
 * `/metrics` endpoint (metrics.controller.ts) serializes {@link scrape}.
 */
export class LedgerMetrics implements WriteObserver {
  readonly registry = new Registry();
  private readonly pending = new WeakMap<object, Map<string, number>>();
  private readonly witnesses = new Set<string>();
  private queueDepth: QueueDepthSource | null = null;
  private signedAtMs: number | null = null;
  private lastCheckpointSize = -1;

  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_class'>;
  private readonly eventsAppended: Counter<'type'>;
  private readonly groupSize: Histogram;
  private readonly txSeconds: Histogram<'outcome'>;
  private readonly commitSeconds: Histogram;
  private readonly queueWaitSeconds: Histogram;
  private readonly rateLimitRefusals: Counter<'limiter'>;
  private readonly chunkSeconds: Histogram<'outcome'>;
  private readonly checkpointSize: Gauge;
  private readonly checkpointSignedAt: Gauge;
  private readonly witnessSize: Gauge<'witness'>;
  private readonly witnessLag: Gauge<'witness'>;
  private readonly witnessCosignedAt: Gauge<'witness'>;

  /**
   * @param enabled false: every method is a no-op and the registry stays empty.
   * @param options.defaultMetrics also collect prom-client's process and Node.js
   *   metrics (`process_*`, `nodejs_*`); the application turns it on.
   */
  constructor(
    readonly enabled: boolean,
    options: { defaultMetrics?: boolean } = {},
  ) {
    const r = [this.registry];
    this.httpRequests = new Counter({ name: 'aer1_http_requests_total', help: 'HTTP requests answered, by method, route template and status code', labelNames: ['method', 'route', 'status'], registers: r });
    this.httpDuration = new Histogram({ name: 'aer1_http_request_duration_seconds', help: 'Time from the request to the end of its answer, by method, route template and status class (2xx..5xx)', labelNames: ['method', 'route', 'status_class'], buckets: SECONDS_BUCKETS, registers: r });
    this.eventsAppended = new Counter({ name: 'aer1_events_appended_total', help: 'Ledger events appended in committed write transactions, by event type', labelNames: ['type'], registers: r });
    this.groupSize = new Histogram({ name: 'aer1_append_group_size', help: 'Events appended per committed write transaction (the group size of a commit: concurrent writes grouped into one commit count together)', buckets: GROUP_BUCKETS, registers: r });
    this.txSeconds = new Histogram({ name: 'aer1_write_transaction_seconds', help: 'Write transactions (commit groups) from BEGIN to the end of COMMIT or ROLLBACK, by outcome (commit, rollback: a whole group, or one write of a group rolled back to its savepoint)', labelNames: ['outcome'], buckets: SECONDS_BUCKETS, registers: r });
    this.commitSeconds = new Histogram({ name: 'aer1_write_commit_seconds', help: 'The COMMIT of a write transaction alone (its durable flush)', buckets: SECONDS_BUCKETS, registers: r });
    this.queueWaitSeconds = new Histogram({ name: 'aer1_write_queue_wait_seconds', help: 'Time each write waited in the in-process write queue before its group began', buckets: SECONDS_BUCKETS, registers: r });
    this.rateLimitRefusals = new Counter({ name: 'aer1_rate_limit_refusals_total', help: 'Requests refused with 429 by a budget or limit (public_read, key_read, heavy_read, coverage_reports, verification_batches)', labelNames: ['limiter'], registers: r });
    this.chunkSeconds = new Histogram({ name: 'aer1_verification_chunk_seconds', help: 'Verification batch chunks processed in this process, by outcome (ok, error)', labelNames: ['outcome'], buckets: SECONDS_BUCKETS, registers: r });
    const depthSource = (): QueueDepthSource | null => this.queueDepth;
    const signedAtMs = (): number | null => this.signedAtMs;
    new Gauge({
      name: 'aer1_verification_queue_depth',
      help: 'Verification batch chunks not yet done, by state (read at each scrape)',
      labelNames: ['state'],
      registers: r,
      async collect() {
        this.reset();
        const source = depthSource();
        if (!source) return;
        let depth: Partial<Record<QueueState, number>>;
        try {
          depth = await source();
        } catch {
          return; // Redis unreachable: no sample (absent() alerts), /health says why
        }
        for (const s of QUEUE_STATES) if (typeof depth[s] === 'number') this.set({ state: s }, depth[s]);
      },
    });
    this.checkpointSize = new Gauge({ name: 'aer1_checkpoint_size', help: 'Tree size of the newest checkpoint signed by this process (NaN before the first)', registers: r });
    this.checkpointSignedAt = new Gauge({ name: 'aer1_checkpoint_signed_timestamp_seconds', help: 'Unix time the newest checkpoint was signed (NaN before the first)', registers: r });
    new Gauge({
      name: 'aer1_checkpoint_age_seconds',
      help: 'Seconds since the newest checkpoint was signed, at scrape time (NaN before the first)',
      registers: r,
      collect() {
        const at = signedAtMs();
        this.set(at === null ? NaN : Math.max(0, (Date.now() - at) / 1000));
      },
    });
    this.checkpointSize.set(NaN);
    this.checkpointSignedAt.set(NaN);
    this.witnessSize = new Gauge({ name: 'aer1_witness_cosigned_size', help: 'Tree size of the newest checkpoint each witness cosigned', labelNames: ['witness'], registers: r });
    this.witnessLag = new Gauge({ name: 'aer1_witness_lag_entries', help: 'Entries between the newest checkpoint and the newest one each witness cosigned', labelNames: ['witness'], registers: r });
    this.witnessCosignedAt = new Gauge({ name: 'aer1_witness_cosigned_timestamp_seconds', help: 'Unix time of each witness\'s newest cosignature', labelNames: ['witness'], registers: r });
    if (enabled && options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** The text exposition format (`text/plain; version=0.0.4`) of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type of {@link scrape}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * One HTTP answer. `route` is the route template (`/api/receipts/:id`), never
   * the URL; null or empty for a request no route matched ({@link UNMATCHED_ROUTE}).
   * `seconds` from the request's arrival to the end of the answer.
   */
  httpRequest(method: string, route: string | null | undefined, status: number, seconds: number): void {
    if (!this.enabled) return;
    const m = METHODS.has(method.toUpperCase()) ? method.toUpperCase() : 'OTHER';
    const routeLabel = route ? route : UNMATCHED_ROUTE;
    const code = Number.isInteger(status) && status >= 100 && status <= 599 ? status : 0;
    this.httpRequests.inc({ method: m, route: routeLabel, status: String(code) });
    this.httpDuration.observe({ method: m, route: routeLabel, status_class: code ? `${Math.floor(code / 100)}xx` : 'unknown' }, seconds);
  }

  /**
   * Events appended inside write transaction `tx` (LedgerService.append).
   * Counted only when that transaction commits ({@link writeFinished}).
   */
  appended(tx: object, events: readonly { type: string }[]): void {
    if (!this.enabled || events.length === 0) return;
    let byType = this.pending.get(tx);
    if (!byType) this.pending.set(tx, (byType = new Map()));
    for (const e of events) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
  }

  /**
   * See WriteObserver.writeFinished (src/database/database.service.ts): records the
   * times, and on commit the events appended and the group size (events of all
   * the calls the commit covered: a commit group of concurrent writes is one).
   */
  writeFinished(txs: readonly object[], committed: boolean, times: { waited: readonly number[]; total: number; commit: number }): void {
    if (!this.enabled) return;
    const counts: Map<string, number>[] = [];
    for (const tx of txs) {
      const byType = this.pending.get(tx);
      this.pending.delete(tx);
      if (byType) counts.push(byType);
    }
    for (const w of times.waited) this.queueWaitSeconds.observe(w);
    this.txSeconds.observe({ outcome: committed ? 'commit' : 'rollback' }, times.total);
    if (!committed) return;
    this.commitSeconds.observe(times.commit);
    if (counts.length === 0) return;
    let n = 0;
    for (const byType of counts) {
      for (const [type, count] of byType) {
        this.eventsAppended.inc({ type }, count);
        n += count;
      }
    }
    this.groupSize.observe(n);
  }

  /** A request refused with 429 by `limiter`. */
  rateLimited(limiter: RateLimiter): void {
    if (!this.enabled) return;
    this.rateLimitRefusals.inc({ limiter });
  }

  /** One verification chunk processed in this process, in `seconds`; `ok` false when it threw (it is retried). */
  chunkProcessed(seconds: number, ok: boolean): void {
    if (!this.enabled) return;
    this.chunkSeconds.observe({ outcome: ok ? 'ok' : 'error' }, seconds);
  }

  /** Where the queue depth is read at each scrape (the batch dispatcher registers itself; the last call wins). */
  setQueueDepthSource(source: QueueDepthSource): void {
    if (!this.enabled) return;
    this.queueDepth = source;
  }

  /**
   * A checkpoint of tree size `size` was signed at `signedAtMs` (Unix
   * milliseconds). Sets `aer1_checkpoint_size` and the signing time; the age
   * (`aer1_checkpoint_age_seconds`) is computed at each scrape. An older
   * checkpoint than the one already reported (smaller size) is ignored.
   */
  checkpointSigned(size: number, signedAtMs: number): void {
    if (!this.enabled) return;
    if (!Number.isSafeInteger(size) || size < 0 || !Number.isFinite(signedAtMs)) throw new RangeError(`checkpointSigned: bad size ${size} or time ${signedAtMs}`);
    if (size < this.lastCheckpointSize) return;
    this.lastCheckpointSize = size;
    this.signedAtMs = signedAtMs;
    this.checkpointSize.set(size);
    this.checkpointSignedAt.set(signedAtMs / 1000);
  }

  /**
   * Witness `witnessName` (a configured witness: its name, never a key)
   * cosigned a checkpoint of tree size `size` while the newest checkpoint
   * has size `latestSize`: sets `aer1_witness_cosigned_size`,
   * `aer1_witness_lag_entries` (`latestSize - size`, never below 0) and
   * `aer1_witness_cosigned_timestamp_seconds` (now). Past
   * {@link MAX_WITNESS_LABELS} distinct names, the rest share `other`.
   */
  witnessCosigned(witnessName: string, size: number, latestSize: number, atMs: number = Date.now()): void {
    if (!this.enabled) return;
    if (!Number.isSafeInteger(size) || !Number.isSafeInteger(latestSize) || size < 0 || latestSize < 0) throw new RangeError(`witnessCosigned: bad sizes ${size}, ${latestSize}`);
    const witness = this.witnessLabel(witnessName);
    this.witnessSize.set({ witness }, size);
    this.witnessLag.set({ witness }, Math.max(0, latestSize - size));
    this.witnessCosignedAt.set({ witness }, atMs / 1000);
  }

  private witnessLabel(name: string): string {
    const n = name.slice(0, 100);
    if (this.witnesses.has(n)) return n;
    if (this.witnesses.size >= MAX_WITNESS_LABELS) return 'other';
    this.witnesses.add(n);
    return n;
  }
}
