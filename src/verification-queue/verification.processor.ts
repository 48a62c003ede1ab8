import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { chainVerdict, jobAssessment, stepReceiptsAtHand, TimelineVerifier, uuidKey, verifyReceipt, verifyWorkflow, VerificationResultBase } from '../core/aer1';
import { assessJobCommitments } from '../timelines/timeline-verification.service';
import { isErasedRaw } from '../erasure/erased-records';
import { DatabaseService, Tx } from '../database/database.service';
import { pages, parseStoredJson, Queryable } from '../database/rows';
import { LedgerService, NO_CONCURRENCY_CHECK } from '../ledger/ledger.service';
import { streams } from '../ledger/streams';
import { receiptOf } from '../receipts/receipts.service';
import { ReceiptReads } from '../receipts/receipt-reads';
import { TimelineReads } from '../timelines/timeline-reads';
import { WorkflowReads } from '../workflows/workflow-reads';
import { ChunkData, ResultRecord, SeqTarget } from './batch.types';
import { VerificationBatchesRepository } from './verification-batches.repository';
import { BatchEvent, ResultsRecordedData } from './verification.events';
import { SYSTEM } from '../core/ledger/event-hash';
import { QUEUE_OPTIONS, VerificationQueueOptions } from './queue-options';
import { PublicUrls } from '../common/urls';
import { WebhookDispatcher } from '../webhooks/webhook.dispatcher';
import { MAX_BATCH_FAILURES } from '../webhooks/webhook.events';
import { LedgerMetrics } from '../metrics/ledger-metrics';

const IN_LIST = 500;

/** A chunk arrived before its batch's transaction committed (or the batch was rolled back): retried by the queue. */
export class BatchNotCommittedError extends Error {}

const parseStored = parseStoredJson;

/**
 * Verifies one chunk of a batch from what the ledger holds, with the core,
 * and records the results: used by the BullMQ workers and by the in-process
 * mode alike. Idempotent: results already recorded for the batch are skipped
 * (checked again inside the write transaction, which is serialized with
 * every other write, across processes on PostgreSQL), so a retried, stalled
 * or duplicated chunk never records a result twice. A record that does not
 * verify is a result (verdict `invalid` with reasons), not a failed job.
 */
@Injectable()
export class VerificationProcessor {
  private readonly log = new Logger('VerificationProcessor');

  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    @Inject(QUEUE_OPTIONS) private readonly options: VerificationQueueOptions,
    private readonly batches: VerificationBatchesRepository,
    private readonly receipts: ReceiptReads,
    private readonly timelines: TimelineReads,
    private readonly workflows: WorkflowReads,
    private readonly urls: PublicUrls,
    @Optional() private readonly webhooks?: WebhookDispatcher,
    @Optional() private readonly metrics?: LedgerMetrics,
  ) {}

  /**
   * Process one chunk; returns how many results it newly recorded. Logs one
   * `chunk verified` line: batch_id, chunk_index, count (targets in the chunk),
   * recorded, skipped (already recorded), duration_ms. Its duration goes to
   * `aer1_verification_chunk_seconds` (outcome ok, or error when it throws).
   */
  async processChunk(chunk: ChunkData): Promise<{ recorded: number; skipped: number }> {
    const started = performance.now();
    let r: { recorded: number; skipped: number };
    try {
      r = await this.processChunkUnlogged(chunk);
    } catch (e) {
      this.metrics?.chunkProcessed((performance.now() - started) / 1000, false);
      throw e;
    }
    this.metrics?.chunkProcessed((performance.now() - started) / 1000, true);
    this.log.log({
      msg: 'chunk verified',
      batch_id: chunk.batch_id,
      chunk_index: chunk.chunk_index,
      count: chunk.targets.length,
      recorded: r.recorded,
      skipped: r.skipped,
      duration_ms: Math.round(performance.now() - started),
    });
    return r;
  }

  private async processChunkUnlogged(chunk: ChunkData): Promise<{ recorded: number; skipped: number }> {
    if (!(await this.batches.exists(this.db, chunk.batch_id))) throw new BatchNotCommittedError(`batch ${chunk.batch_id} is not recorded (yet)`);
    const before = await this.recordedKeys(this.db, chunk);
    const todo = chunk.targets.filter((t) => !before.has(`${t.kind}\u0000${t.id}`));
    if (todo.length === 0) return { recorded: 0, skipped: chunk.targets.length };
    const results = await this.verifyTargets(todo);
    if (this.options.chunkDelayMs > 0) await sleep(this.options.chunkDelayMs);
    const recorded = await this.db.write(async (tx) => {
      const now = await this.recordedKeys(tx, chunk);
      const fresh = results.filter((r) => !now.has(`${r.kind}\u0000${r.id}`));
      if (fresh.length === 0) return 0;
      const data: ResultsRecordedData = { batch_id: chunk.batch_id, chunk_index: chunk.chunk_index, results: fresh };
      // Results are checked against those recorded, inside this serialized write: the stream's version says nothing more.
      await this.ledger.append<BatchEvent>(tx, streams.batch(chunk.batch_id), NO_CONCURRENCY_CHECK, [{ type: 'VerificationResultsRecorded', data }], SYSTEM);
      await this.recordIfCompleted(tx, chunk.batch_id);
      return fresh.length;
    });
    if (recorded < results.length) this.log.warn(`batch ${chunk.batch_id} chunk ${chunk.chunk_index}: ${results.length - recorded} results were already recorded by another run`);
    return { recorded, skipped: chunk.targets.length - recorded };
  }

  /**
   * Inside the write of a chunk's results: when the batch is now complete,
   * record `verification.batch.completed` with its failures in the webhook
   * feed, in the same transaction (a crash keeps both or neither). The event
   * key is the batch id, so a batch completed twice is one event.
   */
  private async recordIfCompleted(tx: Tx, batchId: string): Promise<void> {
    if (!this.webhooks) return;
    const b = await this.batches.get(tx, batchId);
    if (!b || b.completed_at === null) return;
    const failures = await this.batches.failures(tx, batchId, MAX_BATCH_FAILURES + 1);
    await this.webhooks.record(
      tx,
      'verification.batch.completed',
      {
        batch_id: batchId,
        url: this.urls.path(`/api/verification-batches/${batchId}`),
        total: b.total,
        invalid: b.invalid,
        completed_at: b.completed_at,
        failures: failures.slice(0, MAX_BATCH_FAILURES),
        failures_truncated: failures.length > MAX_BATCH_FAILURES,
      },
      batchId,
    );
  }

  private recordedKeys(q: Queryable, chunk: ChunkData): Promise<Set<string>> {
    const seqs = chunk.targets.map((t) => t.seq);
    return this.batches.recordedKeys(q, chunk.batch_id, Math.min(...seqs), Math.max(...seqs));
  }

  /** Verify targets from the stored records (never the verdict stored at ingestion); erased content (issue 29) is `erased`, never valid or invalid. */
  async verifyTargets(targets: SeqTarget[]): Promise<ResultRecord[]> {
    const receipts = await this.rawById(targets.filter((t) => t.kind === 'receipt').map((t) => t.id));
    const out: ResultRecord[] = [];
    for (const t of targets) {
      let result: { verdict: string; reasons: readonly string[] } | null;
      if (t.kind === 'receipt') {
        const raw = receipts.get(t.id);
        // Issue 29: erased content is not re-verified (verdict `erased`, never valid nor invalid).
        result = raw === undefined ? null : isErasedRaw(raw) ? { verdict: 'erased', reasons: [] } : verifyReceipt(parseStored(raw));
      } else if (t.kind === 'job') {
        result = await this.verifyJob(t.id);
      } else {
        result = await this.verifyWorkflowRecord(t.id);
      }
      out.push({
        kind: t.kind,
        id: t.id,
        seq: t.seq,
        verdict: result ? result.verdict : 'invalid',
        reasons: result ? [...result.reasons] : ['not_found'],
        verified_at: new Date().toISOString(),
      });
    }
    return out;
  }

  /** The stored texts of the receipts among `ids` (lowercase), keyed by id. */
  private async rawById(ids: string[]): Promise<Map<string, string>> {
    const map = new Map<string, string>();
    for (const part of pages(ids, IN_LIST)) for (const r of await this.receipts.rawByIds(this.db, part)) map.set(r.k, r.raw);
    return map;
  }

  /** A job's timeline: the stored entries, in seq order, through the core's streaming verifier. */
  /** A batch result for a job: the chain verdict, made invalid by a contradicting commitment (service reason codes, not only AER-1 ones). */
  private async verifyJob(jobId: string): Promise<{ verdict: string; reasons: readonly string[] } | null> {
    const v = new TimelineVerifier();
    // Below every stored seq, and within PostgreSQL's INTEGER range (a larger bound fails there as out of range).
    let after = -2_147_483_648;
    for (;;) {
      const rows = await this.timelines.entryPage(this.db, jobId, after, 1000);
      for (const r of rows) {
        if (isErasedRaw(r.raw)) v.pushErased({ seq: r.seq, close: r.close, provenance_class: r.provenance_class });
        else v.push(parseStored(r.raw));
      }
      if (rows.length < 1000) break;
      after = rows[rows.length - 1].seq;
    }
    if (v.entryCount === 0) return null;
    const result = v.finish();
    const verdict = chainVerdict(result);
    if (verdict === 'partly_erased') {
      const overall = jobAssessment(verdict, (await assessJobCommitments(this.db, jobId, result)).assessment);
      return overall === 'partly_erased' ? { verdict, reasons: [] } : { ...result, verdict: 'invalid', reasons: [overall] };
    }
    if (result.verdict !== 'valid') return result;
    // The job's one assessment (as GET /api/jobs/{id}/verify): a recorded commitment that contradicts the
    // visible chain makes the record invalid; a chain no commitment binds stays valid, with the reason said.
    const overall = jobAssessment(result.verdict, (await assessJobCommitments(this.db, jobId, result)).assessment);
    if (overall === 'clean') return result;
    if (overall === 'truncation_not_excluded') return { ...result, reasons: ['truncation_not_excluded'] };
    return { ...result, verdict: 'invalid', reasons: [overall] };
  }

  /** A workflow receipt with the step receipts the ledger holds (keyed by lowercase id). */
  private async verifyWorkflowRecord(workflowId: string): Promise<VerificationResultBase | null> {
    const raw = await this.workflows.rawOf(this.db, uuidKey(workflowId));
    if (raw === null) return null;
    const workflow = parseStored(raw);
    const ids: string[] = [];
    const doc = workflow as { steps?: unknown };
    if (doc && typeof doc === 'object' && Array.isArray(doc.steps)) {
      for (const s of doc.steps as unknown[]) {
        const rid = (s as { receipt_id?: unknown } | null)?.receipt_id;
        if (typeof rid === 'string') ids.push(uuidKey(rid));
      }
    }
    const raws = await this.rawById([...new Set(ids)]);
    const map = new Map<string, unknown>();
    for (const [k, raw] of raws) map.set(k, receiptOf(parseStored(raw)));
    return verifyWorkflow(workflow, stepReceiptsAtHand(map));
  }
}
