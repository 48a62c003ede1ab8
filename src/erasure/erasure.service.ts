import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../auth/api-keys.service';
import { recordedBy, sameOwner } from '../auth/permissions';
import { ConflictError, LedgerError, UnprocessableError } from '../common/errors';
import { isObject } from '../core/aer1';
import { identifierProblem } from '../core/text';
import { RecordedBy } from '../core/ledger/event-hash';
import { ERASABLE_TYPES } from '../core/ledger/retained';
import { DatabaseService } from '../database/database.service';
import { pages as pagesOf, Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { LedgerService } from '../ledger/ledger.service';
import { streams } from '../ledger/streams';
import { OutcomeReads } from '../outcomes/outcome-reads';
import { ReceiptReads } from '../receipts/receipt-reads';
import { TimelineReads } from '../timelines/timeline-reads';
import { PayloadsErasedData } from './erasure.events';
import { ErasureTarget, erasurePageSize, erasureTargets, PagedErasure } from './erasure-pages';
import { ErasureRow, ErasuresRepository } from './erasures.repository';

/** At most this many receipt ids, job ids and positions together in one request. */
export const MAX_ERASURE_TARGETS = 1000;
/** At most this many events erased by one request (a job's entries, receipts and outcomes included). */
export const MAX_ERASED_EVENTS = 100_000;
/** `reason` and `legal_basis`: at most this many characters. */
const MAX_TEXT = 2000;

/** What to erase: receipts by id, jobs by id, events by position; why and on what basis. */
export interface ErasureRequest {
  receipt_ids: string[];
  job_ids: string[];
  positions: number[];
  reason: string;
  legal_basis: string;
}

/**
 * The answer of an erasure: its id, the positions erased (in order), when
 * (its first page), and the positions of its `PayloadsErased` events (one per
 * page of at most 1000 positions on PostgreSQL, 250 on SQLite ({@link erasurePageSize});
 * `erasure_position` is the first).
 */
export interface ErasureAnswer {
  erasure_id: string;
  positions: number[];
  erased_at: string;
  erasure_position: number;
  erasure_positions: number[];
  /** Receipts a named job's entries name but another owner recorded: not erased by the job (name them by receipt id). */
  not_erased?: { receipt_ids: string[]; reason: string };
}

/**
 * Erasure (issue 29): the payloads (and salts) of the named events are
 * deleted for good, page by page, each in the write that appends one
 * `PayloadsErased` event recording who erased what, when, why and on which basis. Format 3 leaves
 * hold no content, so every leaf, proof, checkpoint and cosignature stays
 * valid; a format 1/2 event erased keeps its stored hash, and every check
 * names it as no longer recomputable.
 */
@Injectable()
export class ErasureService {
  private readonly logger = new Logger('Erasure');

  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly events: EventsRepository,
    private readonly erasures: ErasuresRepository,
    private readonly receipts: ReceiptReads,
    private readonly timelines: TimelineReads,
    private readonly outcomes: OutcomeReads,
  ) {}

  /**
   * Parse a request body: `{receipt_ids?, job_ids?, positions?, reason,
   * legal_basis}`. 422 `invalid_erasure` naming the member; 422
   * `too_many_targets` above {@link MAX_ERASURE_TARGETS}.
   */
  parse(body: unknown): ErasureRequest {
    if (!isObject(body)) throw new UnprocessableError('invalid_erasure', 'the body is a JSON object: {"receipt_ids"?, "job_ids"?, "positions"?, "reason", "legal_basis"}');
    const unknown = Object.keys(body).filter((k) => !['receipt_ids', 'job_ids', 'positions', 'reason', 'legal_basis'].includes(k));
    if (unknown.length > 0) throw new UnprocessableError('invalid_erasure', `unknown member ${JSON.stringify(unknown[0].slice(0, 100))}`, { member: unknown[0].slice(0, 100) });
    const strings = (k: 'receipt_ids' | 'job_ids'): string[] => {
      const v = body[k];
      if (v === undefined) return [];
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 200)) throw new UnprocessableError('invalid_erasure', `${k} is an array of non-empty strings (at most 200 characters each)`, { member: k });
      return [...new Set(v as string[])];
    };
    const receipt_ids = strings('receipt_ids').map((s) => s.toLowerCase());
    const job_ids = strings('job_ids');
    // Ids with controls, bidi or invisible characters name no record (and a NUL is not text to PostgreSQL): 400, as everywhere.
    for (const id of [...receipt_ids, ...job_ids]) {
      const p = identifierProblem(receipt_ids.includes(id) ? 'receipt_ids' : 'job_ids', id);
      if (p) throw new LedgerError(400, p.code as 'unsupported_character', p.message, { member: receipt_ids.includes(id) ? 'receipt_ids' : 'job_ids' });
    }
    const pv = body.positions;
    if (pv !== undefined && (!Array.isArray(pv) || !pv.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 1))) {
      throw new UnprocessableError('invalid_erasure', 'positions is an array of ledger positions (integers >= 1)', { member: 'positions' });
    }
    const positions = [...new Set((pv ?? []) as number[])];
    for (const k of ['reason', 'legal_basis'] as const) {
      const v = body[k];
      if (typeof v !== 'string' || v.trim() === '' || v.length > MAX_TEXT) throw new UnprocessableError('invalid_erasure', `${k} is a non-empty string of at most ${MAX_TEXT} characters`, { member: k });
    }
    const n = receipt_ids.length + job_ids.length + positions.length;
    if (n === 0) throw new UnprocessableError('invalid_erasure', 'name at least one of receipt_ids, job_ids, positions', { member: 'receipt_ids' });
    if (n > MAX_ERASURE_TARGETS) throw new UnprocessableError('too_many_targets', `at most ${MAX_ERASURE_TARGETS} targets per request; split the request`, { limit: MAX_ERASURE_TARGETS });
    return { receipt_ids, job_ids, positions, reason: body.reason as string, legal_basis: body.legal_basis as string };
  }

  /**
   * Erase what `req` names, as `by`. 404 `erasure_target_not_found` naming
   * every unknown target (nothing erased); 422 `not_erasable` for a position
   * of a type that cannot be erased; 409 `already_erased` when everything
   * named was erased before. `origin`: `request` or `retention`. The targets
   * are resolved and their retained data computed on a read snapshot, without
   * the write lock; the payloads are then erased in pages of
   * {@link erasurePageSize} positions (one background write and one
   * `PayloadsErased` event each, see {@link PagedErasure}), so other writes
   * go on meanwhile and run before the next page.
   */
  async erase(req: ErasureRequest, by: Principal | RecordedBy, origin: PayloadsErasedData['origin'] = 'request'): Promise<ErasureAnswer> {
    const writer: RecordedBy = 'role' in by ? recordedBy(by) : by;
    const targets = await this.db.snapshot(async (q) => {
      const { positions, skipped } = await this.resolve(q, req);
      const held: ErasureTarget[] = [];
      // Read and prepared a page at a time, yielding between pages: SQLite reads block the event loop while they run.
      const page = erasurePageSize(this.db.dialect);
      for (let i = 0; i < positions.length; i += page) {
        held.push(...erasureTargets((await this.events.atPositions(q, positions.slice(i, i + page))).values()));
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (held.length === 0) throw new ConflictError('already_erased', 'every payload named was erased before', { positions: positions.slice(0, 100) });
      return { held, skipped };
    });
    const run = this.pagedErasure(req, writer, origin);
    await run.eraseAll(targets.held);
    if (run.erasedAt === null) throw new ConflictError('already_erased', 'every payload named was erased before', { positions: targets.held.slice(0, 100).map((t) => t.position) });
    await this.checkpointWal(run.erasure_id);
    const answer: ErasureAnswer = { erasure_id: run.erasure_id, positions: run.positions, erased_at: run.erasedAt, erasure_position: run.eventPositions[0], erasure_positions: run.eventPositions };
    return targets.skipped.length > 0 ? { ...answer, not_erased: { receipt_ids: targets.skipped, reason: "recorded by another owner than the job's: name them by receipt id to erase them" } } : answer;
  }

  /** A new erasure (its id drawn now) to write in pages: for {@link erase} and the retention run. */
  pagedErasure(why: Pick<ErasureRequest, 'reason' | 'legal_basis'>, by: RecordedBy, origin: PayloadsErasedData['origin']): PagedErasure {
    return new PagedErasure(this.db, this.ledger, this.events, { reason: why.reason, legal_basis: why.legal_basis }, by, origin);
  }

  /**
   * SQLite: the erased bytes are zeroed in the database file (secure_delete); the WAL still holds the pages written
   * before, until a checkpoint copies them back and truncates it. Checkpoint now rather than at the next automatic one.
   */
  async checkpointWal(erasureId: string): Promise<void> {
    if (this.db.dialect !== 'sqlite') return;
    await this.db.unsafeQuery('PRAGMA wal_checkpoint(TRUNCATE)').catch((e: unknown) => this.logger.warn(`wal_checkpoint after erasure ${erasureId}: ${e instanceof Error ? e.message : String(e)}`));
  }

  /** The positions `req` names, in order: 404 naming every unknown target, 422 for a position that cannot be erased. */
  private async resolve(tx: Queryable, req: ErasureRequest): Promise<{ positions: number[]; skipped: string[] }> {
    const out = new Set<number>();
    const skipped: string[] = [];
    const unknown: { receipt_ids: string[]; job_ids: string[]; positions: number[] } = { receipt_ids: [], job_ids: [], positions: [] };
    const receiptPositions = await this.receipts.positions(tx, req.receipt_ids);
    for (const id of req.receipt_ids) {
      const p = receiptPositions.get(id);
      if (p === undefined) unknown.receipt_ids.push(id);
      else out.add(p);
    }
    for (const jobId of req.job_ids) {
      if (!(await this.timelines.get(tx, jobId))) {
        unknown.job_ids.push(jobId);
        continue;
      }
      // A job: its entries (or import) and commitments, the receipts its entries name, its outcome reports.
      for (const p of await this.events.positionsOfTypes(tx, streams.timeline(jobId), ['TimelineEntryAppended', 'TimelineImported', 'EndpointCommitmentRecorded'])) out.add(p);
      // The receipts its entries name, when recorded by the job's own writers (same key or owner): an entry can name
      // anyone's receipt, and erasing a job must not reach into another owner's records (those are listed, not erased).
      const ids = await this.timelines.receiptIds(tx, jobId);
      const jobWriters = await this.events.writersOfStreamsAsOf(tx, [streams.timeline(jobId)], Number.MAX_SAFE_INTEGER, ['TimelineEntryAppended', 'TimelineImported']);
      const positions = await this.receipts.positions(tx, ids);
      for (const page of pagesOf([...positions.keys()], 500)) {
        const writers = await this.events.writersOfStreamsAsOf(tx, page.map((id) => streams.receipt(id)), Number.MAX_SAFE_INTEGER, ['ReceiptRecorded']);
        const byStream = new Map(writers.map((w) => [w.stream_id, w]));
        for (const id of page) {
          const w = byStream.get(streams.receipt(id));
          const own = w !== undefined && w.key_id !== null && jobWriters.some((j) => j.key_id !== null && sameOwner({ key_id: j.key_id, owner: j.owner }, { key_id: w.key_id as string, owner: w.owner }));
          if (own) out.add(positions.get(id)!);
          else skipped.push(id);
        }
      }
      for (const p of await this.outcomes.positionsOfJob(tx, jobId)) out.add(p);
      if (out.size > MAX_ERASED_EVENTS) throw new UnprocessableError('too_many_targets', `one erasure erases at most ${MAX_ERASED_EVENTS} events; name fewer jobs`, { limit: MAX_ERASED_EVENTS });
    }
    const named = await this.events.atPositions(tx, req.positions);
    const notErasable: { position: number; type: string }[] = [];
    for (const p of req.positions) {
      const e = named.get(p);
      if (!e) unknown.positions.push(p);
      else if (!ERASABLE_TYPES.has(e.type)) notErasable.push({ position: p, type: e.type });
      else out.add(p);
    }
    if (unknown.receipt_ids.length + unknown.job_ids.length + unknown.positions.length > 0) {
      const what = [...unknown.receipt_ids.map((i) => `receipt ${i}`), ...unknown.job_ids.map((i) => `job ${i}`), ...unknown.positions.map((p) => `position ${p}`)];
      throw new LedgerError(404, 'erasure_target_not_found', `not recorded: ${what.slice(0, 20).join(', ').slice(0, 2000)}${what.length > 20 ? `, and ${what.length - 20} more` : ''}; nothing was erased`, {
        unknown: { receipt_ids: unknown.receipt_ids.slice(0, 100), job_ids: unknown.job_ids.slice(0, 100), positions: unknown.positions.slice(0, 100) },
      });
    }
    if (notErasable.length > 0) {
      throw new UnprocessableError('not_erasable', `events of these types cannot be erased: ${notErasable.slice(0, 10).map((n) => `position ${n.position} (${n.type})`).join(', ')}; erasable: ${[...ERASABLE_TYPES].join(', ')}; nothing was erased`, {
        positions: notErasable.slice(0, 100),
      });
    }
    return { positions: [...out].sort((a, b) => a - b), skipped };
  }

  /** The erasures of those of `positions` that were erased, keyed by position (in the unit of work `q`, default the database). */
  erasuresOf(positions: readonly number[], q: Queryable = this.db): Promise<Map<number, ErasureRow>> {
    return this.erasures.ofPositions(q, positions);
  }

  /**
   * The ledger position of the newest `PayloadsErased` event (0: none): the
   * last page of the newest erasure. A pack waits for a checkpoint covering
   * it, so every erasure its members show is in the pack with its proof.
   * Two reads: the newest erasure, then its stream's last event.
   */
  async newestErasurePosition(q: Queryable = this.db): Promise<number> {
    const r = await q.query<{ erasure_id: string }>('SELECT erasure_id FROM erasures ORDER BY position DESC LIMIT 1');
    if (!r[0]) return 0;
    return (await this.events.lastPositionOf(q, streams.erasure(r[0].erasure_id))) ?? 0;
  }

  /**
   * What of job `jobId`'s evidence as of ledger position `asOf` was erased
   * since (its entries, commitments, the receipts its entries name, its
   * outcome reports): the count and the newest erasure, or null when nothing
   * was. For a report issued before an erasure: it can no longer be recomputed.
   */
  async erasedOfJob(jobId: string, asOf: number): Promise<{ count: number; erased_at: string; erasure_id: string } | null> {
    const positions = new Set<number>(await this.events.positionsOfTypes(this.db, streams.timeline(jobId), ['TimelineEntryAppended', 'TimelineImported', 'EndpointCommitmentRecorded']));
    for (const p of (await this.receipts.positions(this.db, await this.timelines.receiptIds(this.db, jobId))).values()) positions.add(p);
    for (const p of await this.outcomes.positionsOfJob(this.db, jobId)) positions.add(p);
    // Erased after the report was issued: by a PayloadsErased event above its position (evidence erased before, it read as erased).
    const erased = [...(await this.erasures.ofPositions(this.db, [...positions].filter((p) => p <= asOf))).values()].filter((r) => r.position > asOf);
    if (erased.length === 0) return null;
    const newest = erased.reduce((a, b) => (b.erased_at > a.erased_at ? b : a));
    return { count: erased.length, erased_at: newest.erased_at, erasure_id: newest.erasure_id };
  }

  /** The erasure of the event at `position` (null when its payload is held): for pages and verifiers. */
  erasureOf(position: number): Promise<ErasureRow | null> {
    return this.erasures.ofPosition(this.db, position);
  }

  /** One erasure by id with the positions it erased, or null. */
  async get(erasureId: string): Promise<(ErasureRow & { positions: number[]; event_positions: number[] }) | null> {
    const row = await this.erasures.get(this.db, erasureId);
    return row ? { ...row, positions: await this.erasures.positionsOf(this.db, erasureId), event_positions: await this.erasures.eventPositionsOf(this.db, erasureId) } : null;
  }
}
