import { randomUUID } from 'node:crypto';
import { payloadState, RecordedBy, StoredEvent } from '../core/ledger/event-hash';
import { retainedData } from '../core/ledger/retained';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { LedgerService, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { streams } from '../ledger/streams';
import { ErasureEvent, PayloadsErasedData } from './erasure.events';

/** At most this many positions are erased by one write transaction (one `PayloadsErased` event each). */
export const ERASURE_PAGE = 1000;

/**
 * Positions erased by one write on `dialect`: {@link ERASURE_PAGE} on
 * PostgreSQL; 250 on SQLite, whose writes run on the event loop and zero the
 * freed bytes (secure_delete), so a page holds concurrent writes for longer
 * (`npm run bench -- --only erasure`: concurrent write p99 during erasure).
 */
export function erasurePageSize(dialect: 'sqlite' | 'postgres'): number {
  return dialect === 'sqlite' ? 250 : ERASURE_PAGE;
}

/** One payload to erase, prepared outside the write lock: the event read, and its data minus content. */
export interface ErasureTarget {
  position: number;
  /** The hash of the event read: inside the write, a target is erased only if the event there still has it. */
  event_hash: string;
  retained: Record<string, unknown>;
}

/** The targets among `evs` (read outside the write lock) whose payloads are still held, with their retained data, in position order. */
export function erasureTargets(evs: Iterable<StoredEvent>): ErasureTarget[] {
  const out: ErasureTarget[] = [];
  for (const e of evs) {
    if (payloadState(e) === 'erased') continue;
    out.push({ position: e.position, event_hash: e.event_hash, retained: retainedData(e.type, JSON.parse(e.data) as unknown)! });
  }
  return out.sort((a, b) => a.position - b.position);
}

/**
 * One erasure written in pages (issue 29): each {@link erasePage} is one
 * write transaction that re-checks its targets (a payload erased meanwhile
 * is skipped, so nothing is erased twice), appends one `PayloadsErased`
 * event to the erasure's stream `erasure:<id>` and clears those payloads.
 * Writes of others go on between pages. Pages already written stay written
 * when a later one fails: every page is a complete record of what it erased.
 */
export class PagedErasure {
  readonly erasure_id = randomUUID();
  /** Positions erased so far, in order of the pages. */
  readonly positions: number[] = [];
  /** Positions of the erasure's `PayloadsErased` events, one per page written. */
  readonly eventPositions: number[] = [];
  /** When the first page was written (ISO 8601), null before. */
  erasedAt: string | null = null;

  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly events: EventsRepository,
    private readonly why: { reason: string; legal_basis: string },
    private readonly by: RecordedBy,
    private readonly origin: PayloadsErasedData['origin'],
  ) {}

  /** Targets per page on this database ({@link erasurePageSize}). */
  get pageSize(): number {
    return erasurePageSize(this.db.dialect);
  }

  /** Erase every target, {@link pageSize} at a time; returns the positions erased by these pages. */
  async eraseAll(targets: readonly ErasureTarget[]): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < targets.length; i += this.pageSize) out.push(...(await this.erasePage(targets.slice(i, i + this.pageSize))));
    return out;
  }

  /** One page (at most {@link pageSize} targets) in one write; returns the positions it erased (none: no event written). */
  async erasePage(targets: readonly ErasureTarget[]): Promise<number[]> {
    if (targets.length > this.pageSize) throw new Error(`an erasure page holds at most ${this.pageSize} targets`);
    if (targets.length === 0) return [];
    // Between pages, requests that arrived meanwhile get through the event loop to the write queue first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    // A background group of its own: a concurrent write never shares (and waits in) the page's transaction,
    // and every write queued meanwhile runs before it.
    const written = await this.db.write(async (tx) => {
      const held = await this.events.heldHashes(tx, targets.map((t) => t.position));
      const fresh = targets.filter((t) => held.get(t.position) === t.event_hash);
      if (fresh.length === 0) return null;
      const erased_at = new Date().toISOString();
      const retained: Record<string, Record<string, unknown>> = {};
      for (const t of fresh) retained[String(t.position)] = t.retained;
      const positions = fresh.map((t) => t.position);
      const data: PayloadsErasedData = { erasure_id: this.erasure_id, positions, reason: this.why.reason, legal_basis: this.why.legal_basis, erased_at, erased_by: { key_id: this.by.key_id, name: this.by.name }, origin: this.origin, retained };
      const version = this.eventPositions.length === 0 ? STREAM_DOES_NOT_EXIST : this.eventPositions.length;
      const [ev] = await this.ledger.append<ErasureEvent>(tx, streams.erasure(this.erasure_id), version, [{ type: 'PayloadsErased', data }], this.by);
      await this.events.erasePayloads(tx, positions);
      // A report's webhook event (coverage.report.issued) carried its findings and digest: cut to what is retained.
      for (const t of fresh) {
        const r = t.retained;
        if (r.erased !== true || typeof r.report_id !== 'string' || typeof r.report !== 'object' || r.report === null) continue;
        const kept = r.report as Record<string, unknown>;
        const body = JSON.stringify({ report_id: r.report_id, subject: kept.subject, result: kept.result, as_of_position: kept.as_of_position, issued_at: r.issued_at, findings: [], digest: null, erased: true });
        await tx.query("UPDATE webhook_events SET body = ? WHERE type = 'coverage.report.issued' AND event_key = ?", [body, r.report_id]);
      }
      return { positions, erased_at, position: ev.position };
    }, { background: true });
    if (!written) return [];
    this.erasedAt ??= written.erased_at;
    this.eventPositions.push(written.position);
    this.positions.push(...written.positions);
    return written.positions;
  }
}
