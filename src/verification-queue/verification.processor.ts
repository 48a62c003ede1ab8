import { Inject, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { TimelineVerifier, uuidKey, verifyReceipt, verifyWorkflow, VerificationResultBase } from '../core/aer1';
import { DatabaseService } from '../database/database.service';
import { LedgerService } from '../ledger/ledger.service';
import { streams } from '../ledger/streams';
import { receiptOf } from '../receipts/receipts.service';
import { ChunkData, ResultRecord, ResultsRecordedData, SeqTarget } from './batch.types';
import { SYSTEM } from '../core/ledger/event-hash';
import { QUEUE_OPTIONS, VerificationQueueOptions } from './queue-options';

const IN_LIST = 500;

/** A chunk arrived before its batch's transaction committed (or the batch was rolled back): retried by the queue. */
export class BatchNotCommittedError extends Error {}

function parseStored(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

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
  ) {}

  /**
   * Process one chunk; returns how many results it newly recorded. Logs one
   * `chunk verified` line: batch_id, chunk_index, count (targets in the chunk),
   * recorded, skipped (already recorded), duration_ms.
   */
  async processChunk(chunk: ChunkData): Promise<{ recorded: number; skipped: number }> {
    const started = performance.now();
    const r = await this.processChunkUnlogged(chunk);
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
    const batch = await this.db.query('SELECT batch_id FROM verification_batches WHERE batch_id = ?', [chunk.batch_id]);
    if (batch.length === 0) throw new BatchNotCommittedError(`batch ${chunk.batch_id} is not recorded (yet)`);
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
      await this.ledger.append(tx, streams.batch(chunk.batch_id), 'any', [{ type: 'VerificationResultsRecorded', data }], SYSTEM);
      return fresh.length;
    });
    if (recorded < results.length) this.log.warn(`batch ${chunk.batch_id} chunk ${chunk.chunk_index}: ${results.length - recorded} results were already recorded by another run`);
    return { recorded, skipped: chunk.targets.length - recorded };
  }

  private async recordedKeys(q: Pick<DatabaseService, 'query'>, chunk: ChunkData): Promise<Set<string>> {
    const seqs = chunk.targets.map((t) => t.seq);
    const rows = await q.query<{ target_kind: string; target_id: string }>(
      'SELECT target_kind, target_id FROM verification_results WHERE batch_id = ? AND seq >= ? AND seq <= ?',
      [chunk.batch_id, Math.min(...seqs), Math.max(...seqs)],
    );
    return new Set(rows.map((r) => `${r.target_kind}\u0000${r.target_id}`));
  }

  /** Verify targets from the stored records (never the verdict stored at ingestion). */
  async verifyTargets(targets: SeqTarget[]): Promise<ResultRecord[]> {
    const receipts = await this.rawById('SELECT id AS k, raw FROM receipts WHERE id IN', targets.filter((t) => t.kind === 'receipt').map((t) => t.id));
    const out: ResultRecord[] = [];
    for (const t of targets) {
      let result: Pick<VerificationResultBase, 'verdict' | 'reasons'> | null;
      if (t.kind === 'receipt') {
        const raw = receipts.get(t.id);
        result = raw === undefined ? null : verifyReceipt(parseStored(raw));
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
        reasons: result ? result.reasons : ['not_found'],
        verified_at: new Date().toISOString(),
      });
    }
    return out;
  }

  private async rawById(select: string, ids: string[]): Promise<Map<string, string>> {
    const map = new Map<string, string>();
    for (let i = 0; i < ids.length; i += IN_LIST) {
      const part = ids.slice(i, i + IN_LIST);
      const rows = await this.db.query<{ k: string; raw: string }>(`${select} (${part.map(() => '?').join(', ')})`, part);
      for (const r of rows) map.set(r.k, r.raw);
    }
    return map;
  }

  /** A job's timeline: the stored entries, in seq order, through the core's streaming verifier. */
  private async verifyJob(jobId: string): Promise<VerificationResultBase | null> {
    const v = new TimelineVerifier();
    // Below every stored seq, and within PostgreSQL's INTEGER range (a larger bound fails there as out of range).
    let after = -2_147_483_648;
    for (;;) {
      const rows = await this.db.query<{ seq: number | string; raw: string }>('SELECT seq, raw FROM timeline_entries WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT 1000', [jobId, after]);
      for (const r of rows) v.push(parseStored(r.raw));
      if (rows.length < 1000) break;
      after = Number(rows[rows.length - 1].seq);
    }
    return v.entryCount === 0 ? null : v.finish();
  }

  /** A workflow receipt with the step receipts the ledger holds (keyed by lowercase id). */
  private async verifyWorkflowRecord(workflowId: string): Promise<VerificationResultBase | null> {
    const row = (await this.db.query<{ raw: string }>('SELECT raw FROM workflows WHERE workflow_id = ?', [uuidKey(workflowId)]))[0];
    if (!row) return null;
    const workflow = parseStored(row.raw);
    const ids: string[] = [];
    const doc = workflow as { steps?: unknown };
    if (doc && typeof doc === 'object' && Array.isArray(doc.steps)) {
      for (const s of doc.steps as unknown[]) {
        const rid = (s as { receipt_id?: unknown } | null)?.receipt_id;
        if (typeof rid === 'string') ids.push(uuidKey(rid));
      }
    }
    const raws = await this.rawById('SELECT id AS k, raw FROM receipts WHERE id IN', [...new Set(ids)]);
    const map = new Map<string, unknown>();
    for (const [k, raw] of raws) map.set(k, receiptOf(parseStored(raw)));
    return verifyWorkflow(workflow, map);
  }
}
