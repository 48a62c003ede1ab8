import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { DatabaseService, emptyTable, Tx } from '../database/database.service';
import { ExpectedVersionConflictError, UnavailableError } from '../common/errors';
import { AnyEvent, ExpectedVersion, NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from './event';
import { SaltPool } from './salt-pool';
import { CURRENT_EVENT_FORMAT, eventHashInput, LEDGER_GENESIS_HASH, LedgerChainReport, LedgerChainVerifier, payloadCommitment, RecordedBy, StoredEvent } from '../core/ledger/event-hash';
import { publicIdsTextOf } from '../core/ledger/public-ids';
import { sha256Hex } from '../core/aer1';
import { EventsRepository } from './events.repository';
import { ProjectionRegistry } from './projections';
import { LedgerNotifier } from './ledger-notifier';
import { LedgerMetrics } from '../metrics/ledger-metrics';
import { auditProjections, ProjectionAuditReport } from './projection-audit';
import { AppendGate } from './append-gate';
import { LEAF_SINK, LeafSink } from './leaf-sink';

export { NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from './event';
export type { ExpectedVersion } from './event';

const PAGE = 5000;

/**
 * The append-only, tamper-evident event ledger.
 *
 * Every event gets a gapless global position, a position in its stream
 * (`UNIQUE (stream_id, stream_position)`), the previous event's hash and its
 * own hash (see event-hash.ts). Appends name the stream version they expect;
 * a stale one is an {@link ExpectedVersionConflictError} (409). Projections
 * are updated in the same transaction, so a read model never shows an event
 * that did not commit. Each event is also a leaf of the RFC 6962 tree
 * (issue 14): its leaf goes to the {@link LeafSink} (the verifiable log's
 * tree writer) in the same transaction, so the tree always has exactly as
 * many leaves as the ledger has events.
 */
@Injectable()
export class LedgerService {
  /** Each format 3 event's 32 bytes of salt, fresh, never reused. */
  private readonly salts = new SaltPool();
  /** The head each open write transaction has appended up to (entries vanish with their Tx). */
  private readonly txHeads = new WeakMap<Tx, { position: number; event_hash: string }>();
  /** The head after the kept calls of each open commit group (see Tx.group). */
  private readonly groupHeads = new WeakMap<object, { position: number; event_hash: string }>();
  private readonly logger = new Logger('LedgerService');

  constructor(
    private readonly db: DatabaseService,
    private readonly projections: ProjectionRegistry,
    private readonly events: EventsRepository,
    private readonly notifier: LedgerNotifier,
    @Inject(LEAF_SINK) private readonly leaves: LeafSink,
    @Optional() private readonly metrics?: LedgerMetrics,
    @Optional() private readonly gate?: AppendGate,
    @Optional() config?: ConfigService<AppConfig, true>,
  ) {
    this.format2 = config?.get('LEDGER_EVENT_FORMAT', { infer: true }) === 2;
  }

  /** LEDGER_EVENT_FORMAT=2 (a bench and testing knob): new events are written in format 2, as before issue 29. */
  private readonly format2: boolean;

  /** Current version of a stream: the number of events in it (0 when empty). */
  streamVersion(tx: Tx, streamId: string): Promise<number> {
    return this.events.streamVersion(tx, streamId);
  }

  /** The last event's position and hash, or null for an empty ledger. */
  head(tx?: Tx): Promise<{ position: number; event_hash: string } | null> {
    return this.events.head(tx ?? this.db);
  }

  /**
   * Append `events` to `streamId` inside `tx` (call from {@link DatabaseService.write}),
   * written by `by` (the caller's API key, or {@link SYSTEM}): each event is
   * written in format 3 (issue 29): the leaf carries the key, the stream's
   * previous position, the record's public identifiers and `payload_commitment`
   * = SHA-256(salt || data) with 32 fresh random bytes of salt per event; the
   * data (the payload) and its salt are stored beside the leaf, never in it. `E` is the stream's event union
   * (`<module>.events.ts`): only its members can be appended. `expectedVersion`
   * is one of {@link ExpectedVersion}: a number that differs from the stream's
   * version is 409 `expected_version_conflict`. Returns the stored events; the
   * stream's next expected version is the last one's `stream_position`.
   */
  async append<E extends AnyEvent>(tx: Tx, streamId: string, expectedVersion: ExpectedVersion, events: readonly E[], by: RecordedBy): Promise<StoredEvent[]> {
    const refused = this.gate?.refusal;
    if (refused) throw new UnavailableError('log_unavailable', refused);
    if (this.format2) return this.appendFormat2(tx, streamId, expectedVersion, events, by);
    const streamHead = expectedVersion === STREAM_DOES_NOT_EXIST ? null : await this.events.streamHead(tx, streamId);
    const version = streamHead?.version ?? 0;
    if (expectedVersion !== NO_CONCURRENCY_CHECK && expectedVersion !== STREAM_DOES_NOT_EXIST && version !== expectedVersion) throw new ExpectedVersionConflictError(streamId, expectedVersion, version);
    // Inside one write no one else appends (writes are serialized), so the head this write last
    // wrote is still the head: remembered per Tx, not re-read. Each write of a commit group has a
    // Tx of its own, so its first append reads the head from the transaction (its group-mates'
    // work included; a group-mate rolled back to its savepoint left nothing, and its cache died with its Tx).
    // A later call of the same commit group starts from the head its kept group-mates left (a call
    // rolled back to its savepoint is never kept, so its head is never used).
    const head = this.txHeads.get(tx) ?? this.groupHeads.get(tx.group) ?? (await this.head(tx));
    let position = head?.position ?? 0;
    let prevHash = head?.event_hash ?? LEDGER_GENESIS_HASH;
    const recordedAt = new Date().toISOString();
    const stored: StoredEvent[] = [];
    let streamPosition = version;
    let streamPrev = streamHead?.position ?? 0;
    for (const e of events) {
      const data = JSON.stringify(e.data);
      const salt = this.salts.next();
      const ev: StoredEvent = {
        position: ++position,
        stream_id: streamId,
        stream_position: ++streamPosition,
        type: e.type,
        data,
        recorded_at: recordedAt,
        prev_hash: prevHash,
        format: CURRENT_EVENT_FORMAT,
        key_id: by.key_id,
        key_name: by.name,
        stream_prev: streamPrev,
        public_ids: publicIdsTextOf(e.type, e.data),
        payload_commitment: payloadCommitment(salt, data),
        payload_salt: salt.toString('hex'),
        event_hash: '',
      };
      streamPrev = position;
      const input = eventHashInput(ev);
      ev.event_hash = sha256Hex(input);
      this.leaves.add(tx, ev, input);
      await this.events.insert(tx, ev);
      await this.projections.apply(tx, ev, e.data); // data as appended: not parsed back from ev.data when it is plain JSON
      stored.push(ev);
      prevHash = ev.event_hash;
    }
    return this.appended(tx, stored, position, prevHash);
  }

  /**
   * LEDGER_EVENT_FORMAT=2 (bench and testing knob): {@link append} as it was
   * before issue 29, format 2: the key and the data in the leaf, no
   * `stream_prev`, public ids, commitment or salt.
   */
  private async appendFormat2<E extends AnyEvent>(tx: Tx, streamId: string, expectedVersion: ExpectedVersion, events: readonly E[], by: RecordedBy): Promise<StoredEvent[]> {
    const version = expectedVersion === STREAM_DOES_NOT_EXIST ? 0 : await this.streamVersion(tx, streamId);
    if (expectedVersion !== NO_CONCURRENCY_CHECK && expectedVersion !== STREAM_DOES_NOT_EXIST && version !== expectedVersion) throw new ExpectedVersionConflictError(streamId, expectedVersion, version);
    const head = this.txHeads.get(tx) ?? this.groupHeads.get(tx.group) ?? (await this.head(tx));
    let position = head?.position ?? 0;
    let prevHash = head?.event_hash ?? LEDGER_GENESIS_HASH;
    const recordedAt = new Date().toISOString();
    const stored: StoredEvent[] = [];
    let streamPosition = version;
    for (const e of events) {
      const base = {
        position: ++position,
        stream_id: streamId,
        stream_position: ++streamPosition,
        type: e.type,
        data: JSON.stringify(e.data),
        recorded_at: recordedAt,
        prev_hash: prevHash,
        format: 2 as const,
        key_id: by.key_id,
        key_name: by.name,
      };
      const input = eventHashInput(base);
      const ev: StoredEvent = { ...base, event_hash: sha256Hex(input) };
      this.leaves.add(tx, ev, input);
      await this.events.insert(tx, ev);
      await this.projections.apply(tx, ev, e.data);
      stored.push(ev);
      prevHash = ev.event_hash;
    }
    return this.appended(tx, stored, position, prevHash);
  }

  /** After an append: remember the write's head, tell waiting readers once the transaction commits, count the events. */
  private appended(tx: Tx, stored: StoredEvent[], position: number, prevHash: string): StoredEvent[] {
    if (stored.length > 0) {
      // Once per transaction: after it commits, tell this process's waiting readers (the event stream) the new head.
      if (!this.txHeads.has(tx)) {
        this.db.afterCommit(tx, () => this.notifier.committed(this.txHeads.get(tx)?.position ?? 0));
        tx.whenKept(() => this.groupHeads.set(tx.group, this.txHeads.get(tx)!));
      }
      this.txHeads.set(tx, { position, event_hash: prevHash });
    }
    this.metrics?.appended(tx, stored); // counted when tx commits
    return stored;
  }

  /** Events of one stream, in order. */
  readStream(streamId: string, tx?: Tx): Promise<StoredEvent[]> {
    return this.events.stream(tx ?? this.db, streamId);
  }

  /** All events from `after`+1 up to `upTo` (inclusive), in pages, in position order. */
  async *readAll(options: { after?: number; upTo?: number; tx?: Tx } = {}): AsyncGenerator<StoredEvent> {
    const q = options.tx ?? this.db;
    let after = options.after ?? 0;
    const upTo = options.upTo ?? Number.MAX_SAFE_INTEGER;
    for (;;) {
      const rows = await this.events.page(q, after, upTo, PAGE);
      for (const r of rows) yield r;
      if (rows.length < PAGE) return;
      // Let other requests run between pages: a whole-ledger read must not hold the event loop.
      await new Promise<void>((resolve) => setImmediate(resolve));
      after = rows[rows.length - 1].position;
    }
  }

  /** The full chain check in progress, shared by every caller that asks meanwhile (see {@link verifyChain}). */
  private running: Promise<LedgerChainReport> | null = null;

  /**
   * Recompute the whole ledger chain (GET /api/ledger/verify). Callers that
   * ask while a check runs share it (one scan of the ledger however many
   * clients ask at once; each later request scans again, so an edited row is
   * caught by the next check). When `expectedHead` is given (a head published
   * earlier), also check the ledger still holds it unchanged at a position the
   * chain check reached: the chain alone cannot show that its newest events
   * were removed.
   */
  async verifyChain(expectedHead?: { position: number; event_hash: string }): Promise<LedgerChainReport & { expected_head?: { ok: boolean; detail: string } }> {
    this.running ??= this.scanChain().finally(() => {
      this.running = null;
    });
    const report = await this.running;
    if (!expectedHead) return report;
    const reached = report.first_failure === null ? (report.head?.position ?? 0) : report.first_failure.position - 1;
    const seen = expectedHead.position <= reached ? await this.events.hashAt(this.db, expectedHead.position) : null;
    const ok = seen === expectedHead.event_hash;
    return {
      ...report,
      ok: report.ok && ok,
      expected_head: {
        ok,
        detail: ok ? `position ${expectedHead.position} holds the expected hash` : seen === null ? `position ${expectedHead.position} is missing or not reached: events were removed` : `position ${expectedHead.position} has hash ${seen}, expected ${expectedHead.event_hash}`,
      },
    };
  }

  private async scanChain(): Promise<LedgerChainReport> {
    const v = new LedgerChainVerifier();
    for await (const e of this.readAll()) if (!v.push(e)) break;
    return v.report();
  }

  /** The projection audit in progress, shared like {@link running}. */
  private auditing: Promise<ProjectionAuditReport> | null = null;

  /**
   * Check every row of every projection table against the events (see
   * projection-audit.ts): on one read snapshot, no write lock held. Callers
   * that ask while an audit runs share it; each later call audits again.
   */
  auditProjections(): Promise<ProjectionAuditReport> {
    this.auditing ??= this.db
      .snapshot((q) => auditProjections(q, this.db.dialect, this.projections))
      .then((r) => {
        if (!r.ok) {
          const failing = r.tables.filter((t) => !t.ok).map((t) => `${t.table} (first at position ${t.first_failure?.position ?? 'none'}: ${t.first_failure?.kind ?? '?'}${t.first_failure?.column ? ` ${t.first_failure.column}` : ''})`);
          this.logger.error(`projection_mismatch: the read models do not match the events as of position ${r.as_of_position}: ${[...(r.replay_failure ? [`replay failed at position ${r.replay_failure.position}`] : []), ...failing].join('; ')}`);
        }
        return r;
      })
      .finally(() => {
        this.auditing = null;
      });
    return this.auditing;
  }

  /** Empty every projection table and replay all events through the projections, in one transaction. */
  async rebuildProjections(): Promise<{ events: number; projections: string[] }> {
    return this.db.write(async (tx) => {
      const names: string[] = [];
      for (const p of this.projections.all()) {
        for (const t of p.tables) await emptyTable(tx, t);
        names.push(p.name);
      }
      let count = 0;
      const retained = await this.events.retainedPayloads(tx);
      for await (const e of this.readAll({ tx })) {
        await this.projections.apply(tx, e, undefined, retained);
        count++;
      }
      return { events: count, projections: names };
    });
  }
}

