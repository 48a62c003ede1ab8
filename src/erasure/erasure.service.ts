import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/api-keys.service';
import { recordedBy } from '../auth/permissions';
import { ConflictError, LedgerError, UnprocessableError } from '../common/errors';
import { isObject } from '../core/aer1';
import { payloadState, RecordedBy, StoredEvent } from '../core/ledger/event-hash';
import { ERASABLE_TYPES, retainedData } from '../core/ledger/retained';
import { DatabaseService, Tx } from '../database/database.service';
import type { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { LedgerService, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { streams } from '../ledger/streams';
import { OutcomeReads } from '../outcomes/outcome-reads';
import { ReceiptReads } from '../receipts/receipt-reads';
import { TimelineReads } from '../timelines/timeline-reads';
import { ErasureEvent, PayloadsErasedData } from './erasure.events';
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

/** The answer of an erasure: its id, the positions erased (in order), when, and the position of its `PayloadsErased` event. */
export interface ErasureAnswer {
  erasure_id: string;
  positions: number[];
  erased_at: string;
  erasure_position: number;
}

/**
 * Erasure (issue 29): the payloads (and salts) of the named events are
 * deleted for good, in the write that appends one `PayloadsErased` event
 * recording who erased what, when, why and on which basis. Format 3 leaves
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
   * named was erased before. `origin`: `request` or `retention`.
   */
  async erase(req: ErasureRequest, by: Principal | RecordedBy, origin: PayloadsErasedData['origin'] = 'request'): Promise<ErasureAnswer> {
    const writer: RecordedBy = 'role' in by ? recordedBy(by) : by;
    const answer = await this.db.write(async (tx) => {
      const positions = await this.resolve(tx, req);
      const evs = await this.events.atPositions(tx, positions);
      const fresh = positions.filter((p) => payloadState(evs.get(p)!) !== 'erased');
      if (fresh.length === 0) throw new ConflictError('already_erased', 'every payload named was erased before', { positions: positions.slice(0, 100) });
      return this.eraseIn(tx, fresh, evs, req, writer, origin);
    });
    // SQLite: the erased bytes are zeroed in the database file (secure_delete); the WAL still holds the pages written
    // before, until a checkpoint copies them back and truncates it. Checkpoint now rather than at the next automatic one.
    if (this.db.dialect === 'sqlite') {
      await this.db.unsafeQuery('PRAGMA wal_checkpoint(TRUNCATE)').catch((e: unknown) => this.logger.warn(`wal_checkpoint after erasure ${answer.erasure_id}: ${e instanceof Error ? e.message : String(e)}`));
    }
    return answer;
  }

  /** Erase `positions` (held payloads of erasable types, all in `evs`) inside `tx`: one `PayloadsErased` event, then the payloads cleared. */
  async eraseIn(tx: Tx, positions: number[], evs: ReadonlyMap<number, StoredEvent>, req: Pick<ErasureRequest, 'reason' | 'legal_basis'>, by: RecordedBy, origin: PayloadsErasedData['origin']): Promise<ErasureAnswer> {
    const retained: Record<string, Record<string, unknown>> = {};
    for (const p of positions) {
      const e = evs.get(p)!;
      retained[String(p)] = retainedData(e.type, JSON.parse(e.data) as unknown)!;
    }
    const erasure_id = randomUUID();
    const erased_at = new Date().toISOString();
    const data: PayloadsErasedData = { erasure_id, positions, reason: req.reason, legal_basis: req.legal_basis, erased_at, erased_by: { key_id: by.key_id, name: by.name }, origin, retained };
    const [ev] = await this.ledger.append<ErasureEvent>(tx, streams.erasure(erasure_id), STREAM_DOES_NOT_EXIST, [{ type: 'PayloadsErased', data }], by);
    await this.events.erasePayloads(tx, positions);
    return { erasure_id, positions, erased_at, erasure_position: ev.position };
  }

  /** The positions `req` names, in order: 404 naming every unknown target, 422 for a position that cannot be erased. */
  private async resolve(tx: Tx, req: ErasureRequest): Promise<number[]> {
    const out = new Set<number>();
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
      const ids = await this.timelines.receiptIds(tx, jobId);
      for (const p of (await this.receipts.positions(tx, ids)).values()) out.add(p);
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
    return [...out].sort((a, b) => a - b);
  }

  /** The erasures of those of `positions` that were erased, keyed by position (in the unit of work `q`, default the database). */
  erasuresOf(positions: readonly number[], q: Queryable = this.db): Promise<Map<number, ErasureRow>> {
    return this.erasures.ofPositions(q, positions);
  }

  /** The erasure of the event at `position` (null when its payload is held): for pages and verifiers. */
  erasureOf(position: number): Promise<ErasureRow | null> {
    return this.erasures.ofPosition(this.db, position);
  }

  /** One erasure by id with the positions it erased, or null. */
  async get(erasureId: string): Promise<(ErasureRow & { positions: number[] }) | null> {
    const row = await this.erasures.get(this.db, erasureId);
    return row ? { ...row, positions: await this.erasures.positionsOf(this.db, erasureId) } : null;
  }
}
