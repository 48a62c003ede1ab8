import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isObject } from '../core/aer1';
import { BadInputError, NotFoundError } from '../common/errors';
import { identifierProblem, IDENTIFIER_MAX_LENGTH } from '../core/text';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { LedgerService, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { chunkTargets, Target, TARGET_KINDS, TargetKind } from './batch.types';
import { VerificationBatchesRepository } from './verification-batches.repository';
import { BatchEvent, BatchRequestedData } from './verification.events';
import { BatchDispatcher } from './dispatchers';
import type { Principal } from '../auth/api-keys.service';
import { recordedBy } from '../auth/permissions';
import { QUEUE_OPTIONS, VerificationQueueOptions } from './queue-options';

/** A parsed request: explicit targets, or everything recorded after an event position. */
type BatchRequest = { targets: Target[] } | { since: number; scope: unknown };

const MAX_TARGETS = 1_000_000;


/**
 * Results of a batch per outcome; the members add up to `done`. A target the
 * ledger does not hold is recorded with verdict `invalid` and reasons
 * `["not_found"]`: it is counted as `not_found` here, not as `invalid`.
 */
import type { BatchCounts } from '../core/batch-counts';
export type { BatchCounts };

/** The reasons column of a result whose target was not found (see VerificationProcessor.verifyTargets). */
const NOT_FOUND_REASONS = JSON.stringify(['not_found']);

/** Validate a request body: `{targets: [{kind, id}]}`, `{scope: 'all'}` or `{scope: {since_position: N}}`. */
export function parseBatchRequest(body: unknown): BatchRequest {
  if (!isObject(body)) throw new BadInputError('invalid_request', 'the body must be a JSON object with targets or scope');
  const hasTargets = body.targets !== undefined;
  const hasScope = body.scope !== undefined;
  if (hasTargets === hasScope) throw new BadInputError('invalid_request', 'give exactly one of targets or scope');
  if (hasScope) {
    if (body.scope === 'all') return { since: 0, scope: 'all' };
    const s = body.scope;
    if (isObject(s) && Object.keys(s).length === 1 && typeof s.since_position === 'number' && Number.isSafeInteger(s.since_position) && s.since_position >= 0) {
      return { since: s.since_position, scope: { since_position: s.since_position } };
    }
    throw new BadInputError('invalid_scope', 'scope must be "all" or {"since_position": <integer >= 0>}');
  }
  if (!Array.isArray(body.targets) || body.targets.length === 0) throw new BadInputError('invalid_targets', 'targets must be a non-empty array of {kind, id}');
  if (body.targets.length > MAX_TARGETS) throw new BadInputError('too_many_targets', `at most ${MAX_TARGETS} targets per batch`);
  const seen = new Set<string>();
  const targets: Target[] = [];
  body.targets.forEach((t: unknown, i: number) => {
    if (!isObject(t) || !TARGET_KINDS.includes(t.kind as TargetKind) || typeof t.id !== 'string' || t.id.length === 0 || t.id.includes('\u0000')) {
      // U+0000: no record can be stored under such an id on PostgreSQL, and its result could never be recorded (the batch would never complete).
      throw new BadInputError('invalid_targets', `targets[${i}] must be {kind: "receipt"|"job"|"workflow", id: <non-empty identifier, at most ${IDENTIFIER_MAX_LENGTH} characters>}`);
    }
    // The identifier rule of the service (src/common/text.ts): no record can have been written under any other id.
    const idProblem = identifierProblem(`targets[${i}].id`, t.id);
    if (idProblem) throw new BadInputError('invalid_targets', idProblem.message, { reason: idProblem.reason });
    const kind = t.kind as TargetKind;
    const id = kind === 'job' ? t.id : t.id.toLowerCase();
    const key = `${kind}\u0000${id}`;
    if (!seen.has(key)) {
      seen.add(key);
      targets.push({ kind, id });
    }
  });
  return { targets };
}

/**
 * Verification batches: recorded first (event `VerificationBatchRequested`
 * on stream `batch:<id>` with its full target list), then processed in
 * chunks by the dispatcher (BullMQ workers, or in process without Redis).
 */
@Injectable()
export class VerificationBatchesService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly dispatcher: BatchDispatcher,
    @Inject(QUEUE_OPTIONS) private readonly options: VerificationQueueOptions,
    private readonly batches: VerificationBatchesRepository,
    private readonly events: EventsRepository,
    private readonly guard: ProjectionGuard,
  ) {}

  statusUrl(id: string): string {
    return `${this.urls.base}/api/verification-batches/${id}`;
  }

  async submit(body: unknown, by: Principal): Promise<{ batch_id: string; total: number; status_url: string }> {
    const request = parseBatchRequest(body);
    await this.dispatcher.ensureAvailable();
    const batchId = randomUUID();
    // The target list is read outside the write lock (committed records only); only the append takes the lock.
    const targets = 'targets' in request ? request.targets : await this.targetsSince(this.db, request.since);
    const chunks = await this.db.write(async (tx) => {
      const data: BatchRequestedData = { batch_id: batchId, scope: 'targets' in request ? 'targets' : request.scope, total: targets.length, chunk_size: this.options.chunkSize, targets };
      // A fresh UUID names the stream.
      await this.ledger.append<BatchEvent>(tx, streams.batch(batchId), STREAM_DOES_NOT_EXIST, [{ type: 'VerificationBatchRequested', data }], recordedBy(by));
      const chunks = chunkTargets(batchId, targets, this.options.chunkSize);
      await this.dispatcher.enqueueInTx(chunks);
      return chunks;
    });
    this.dispatcher.afterCommit(batchId, chunks);
    return { batch_id: batchId, total: chunks.reduce((n, c) => n + c.targets.length, 0), status_url: this.statusUrl(batchId) };
  }

  /** Receipts, jobs and workflows recorded (by event position) after `since`, in position order. */
  private targetsSince(q: Queryable, since: number): Promise<Target[]> {
    return this.batches.targetsSince(q, since);
  }

  /**
   * Status and one page of results (seq order). `invalid` counts results with
   * verdict `invalid` (targets not found included, as before); `counts` splits
   * `done` by outcome: valid, invalid, historical, incomplete, not_found.
   * Throws NotFoundError for an unknown batch.
   */
  async get(id: string, offset = 0, limit = 100) {
    // The batch and its results checked against its events first: 409 `projection_mismatch` (ProjectionGuard).
    const key = id.toLowerCase();
    await this.guard.check(this.db, streams.batch(key), [
      { table: 'verification_batches', column: 'batch_id', value: key },
      { table: 'verification_results', column: 'batch_id', value: key },
    ]);
    const row = await this.batches.get(this.db, id.toLowerCase());
    if (!row) throw new NotFoundError('verification batch', id);
    const total = row.total;
    const done = row.done;
    const results = await this.batches.results(this.db, row.batch_id, limit, offset);
    const counts = await this.counts(row.batch_id);
    return {
      batch_id: row.batch_id,
      status: row.completed_at ? 'completed' : done > 0 ? 'running' : 'queued',
      scope: JSON.parse(row.scope) as unknown,
      total,
      done,
      invalid: row.invalid,
      counts,
      offset,
      limit,
      results,
      created_at: row.created_at,
      completed_at: row.completed_at,
      requested_by: await this.events.recordedByOne(this.db, row.position),
    };
  }

  /** Results recorded so far, per outcome ({@link BatchCounts}). */
  async counts(batchId: string): Promise<BatchCounts> {
    const rows = await this.batches.countsByVerdict(this.db, batchId, NOT_FOUND_REASONS);
    const counts: BatchCounts = { valid: 0, invalid: 0, historical: 0, incomplete: 0, not_found: 0 };
    for (const r of rows) {
      const n = r.n;
      if (r.matches && r.verdict === 'invalid') counts.not_found += n;
      else if (r.verdict === 'valid' || r.verdict === 'historical' || r.verdict === 'incomplete') counts[r.verdict] += n;
      else counts.invalid += n; // 'invalid' (and any verdict this version does not know: never counted as valid)
    }
    return counts;
  }
}
