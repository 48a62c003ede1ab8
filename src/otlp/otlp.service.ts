/**
 * OpenTelemetry GenAI spans into job timelines (issue 31, docs/otlp.md).
 * One request is one write transaction: every accepted span is recorded
 * (its transport receipt, then its chain entry, links made here from the
 * stored head) or, on any error, nothing. Refused spans are answered in
 * `partial_success`, by reason and by name.
 */
import { Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { JsonObject } from '../core/aer1';
import { LedgerError, NotFoundError } from '../common/errors';
import { assertIdentifier } from '../core/text';
import { CLOSE_MARKER_TOOL } from '../core/coverage/types';
import { PublicUrls } from '../common/urls';
import { DatabaseService, Tx } from '../database/database.service';
import { LedgerService, NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import type { Principal } from '../auth/api-keys.service';
import { assertOwner, assertProvenance, recordedBy, sameOwner } from '../auth/permissions';
import { assertPlanOwner } from '../coverage/plan-owner';
import { ReceiptsService } from '../receipts/receipts.service';
import { ReceiptReads } from '../receipts/receipt-reads';
import { AppendDecider, EMPTY_HEAD, headOfStored, TimelineHead } from '../timelines/timelines.decider';
import { TimelineEvent } from '../timelines/timelines.events';
import type { TimelineRow } from '../timelines/timelines.repository';
import { TimelineReads } from '../timelines/timeline-reads';
import { CommitmentsService } from '../timelines/commitments.service';
import type { OtlpSpan } from './otlp-decode';
import { planSpans, provenanceOf, receiptDocument, senderOf, SpanRecord, SpanRejection, spanTime } from './otlp-spans';

/** Spans recorded between two turns of the event loop on PostgreSQL. */
const YIELD_EVERY = 64;

/** One entry to append: its receipt's exact text and the members its chain entry names. */
interface Item {
  receipt_id: string;
  receipt_text: string;
  /** The value `receipt_text` was written from by JSON.stringify (parsing the text gives an equal value), so it is not parsed back. */
  receipt_value: JsonObject;
  tool: string;
  bytes: Buffer;
  status: 'ok' | 'error';
  result_captured: boolean;
  close: boolean;
  /** The span it came from (null: the close endpoint). */
  record: SpanRecord | null;
}

/** What one job's appends came to. */
export interface JobAppended {
  job_id: string;
  appended: { seq: number; entry_digest: string; receipt_id: string; tool: string; status: string }[];
  head: { seq: number; entry_digest: string; closed: boolean };
  ledger_commitment?: { id: string; note: string; position: number } | null;
  url: string;
}

/** The answer of one export request, before it is written as OTLP. */
export interface ExportAnswer {
  /** Spans recorded now (tool calls and closes). */
  recorded: number;
  /** Spans already recorded with the same bytes (recorded once). */
  duplicates: number;
  /** Spans that are neither tool calls nor a close (or a close of nothing): not recorded. */
  not_recorded: number;
  rejected: SpanRejection[];
  jobs: JobAppended[];
}

/** Records OTLP spans and closes jobs. */
@Injectable()
export class OtlpService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly receipts: ReceiptsService,
    private readonly receiptRows: ReceiptReads,
    private readonly timelines: TimelineReads,
    private readonly events: EventsRepository,
    private readonly commitments: CommitmentsService,
  ) {}

  /**
   * Record the tool calls and closes of `spans` (docs/otlp.md) in one write
   * transaction. An `invoke_agent` close sets `close: true` on the last tool
   * call of its job in this request; with none, the ledger writes its closing
   * marker (tool `aer1.job.close`, the span's receipt). Receipt ids name the
   * sender's owner and the job (`spanReceiptId`, otlp-spans.ts). A span recorded before
   * (for the same owner and job) with the same receipt bytes counts as a
   * duplicate; with other bytes it is rejected (`span_conflict`); a receipt
   * under that id written by a key of another owner (through
   * `POST /api/receipts`) refuses it (`receipt_id_taken`); a span
   * counts as seen in this request only once its job accepted it; spans
   * of a closed job are rejected (`job_closed`), of an imported timeline
   * (`timeline_imported`), of another owner's job (`not_owner`,
   * `not_plan_owner`). 400 `otlp_attribute_type` before anything is read.
   */
  async export(spans: readonly OtlpSpan[], by: Principal): Promise<ExportAnswer> {
    const plan = planSpans(spans, senderOf(by));
    const provenance = provenanceOf(by);
    assertProvenance(by, provenance);
    const docs = plan.records.map((r) => receiptDocument(r, provenance));
    const texts = docs.map((d) => JSON.stringify(d));
    return this.db.write(async (tx) => {
      const answer: ExportAnswer = { recorded: 0, duplicates: 0, not_recorded: plan.not_recorded, rejected: [...plan.rejected], jobs: [] };
      const stored = await this.receiptRows.findRecorded(tx, plan.records.map((r) => r.receipt_id));
      const byJob = new Map<string, Item[]>();
      plan.records.forEach((r, k) => {
        const items = byJob.get(r.job_id) ?? [];
        items.push({ receipt_id: r.receipt_id, receipt_text: texts[k], receipt_value: docs[k], tool: r.tool, bytes: r.bytes, status: r.status, result_captured: r.result_captured, close: r.close, record: r });
        byJob.set(r.job_id, items);
      });
      for (const [jobId, items] of byJob) {
        const row = await this.timelines.get(tx, jobId);
        const refused = await this.refusal(tx, jobId, row, by);
        if (refused) {
          items.forEach((it) => answer.rejected.push(rejection(it.record!, refused.reason, refused.message)));
          continue;
        }
        const last = await this.lastEntry(tx, jobId);
        let closed = last?.head.closed ?? false;
        const accepted: Item[] = [];
        // Receipts taken in this request (id → text), marked only once accepted: a receipt id names one job, so per job.
        const seen = new Map<string, string>();
        let merged = 0;
        for (const it of items) {
          const r = it.record!;
          const before = stored.get(r.receipt_id);
          if (before && !(await this.ownReceipt(tx, before.position, by))) {
            // Only a receipt posted elsewhere (POST /api/receipts) under the id this owner's span derives: neither a duplicate nor this span.
            answer.rejected.push(rejection(r, 'receipt_id_taken', `span ${r.span.trace_id}/${r.span.span_id} (${JSON.stringify(r.span.name)}) of job ${JSON.stringify(jobId)} names receipt ${r.receipt_id}, which a key of another owner recorded; the span was not recorded`));
            continue;
          }
          const prior = before?.raw ?? seen.get(r.receipt_id);
          if (prior === it.receipt_text) {
            answer.duplicates++;
            continue;
          }
          if (prior !== undefined) {
            answer.rejected.push(rejection(r, 'span_conflict', `span ${r.span.trace_id}/${r.span.span_id} (${JSON.stringify(r.span.name)}) of job ${JSON.stringify(jobId)} is recorded already with other bytes (receipt ${r.receipt_id}); records are never altered (409)`));
            continue;
          }
          if (closed || (r.kind === 'agent_close' && row === null && accepted.length === 0)) {
            // A close of a job already closed (or of a job with nothing recorded) records nothing; a tool call is refused by name.
            if (r.kind === 'agent_close') answer.not_recorded++;
            else answer.rejected.push(rejection(r, 'job_closed', `job ${JSON.stringify(jobId)} is closed: tool call ${JSON.stringify(r.tool)} (span ${JSON.stringify(r.span.name)}, ${r.span.trace_id}/${r.span.span_id}) was not recorded`));
            continue;
          }
          const prev = accepted[accepted.length - 1];
          seen.set(r.receipt_id, it.receipt_text);
          if (r.kind === 'agent_close' && prev !== undefined) {
            // The close comes with the job's last tool call (agent closes follow every tool call): that entry closes, no closing marker.
            prev.close = true;
            closed = true;
            merged++;
            continue;
          }
          // A close with no tool call of its job in this request: the ledger's closing marker (tool aer1.job.close).
          accepted.push(it);
          closed = it.close;
        }
        if (accepted.length === 0) continue;
        answer.jobs.push(await this.append(tx, jobId, row, last, accepted, by));
        answer.recorded += accepted.length + merged;
      }
      return answer;
    });
  }

  /**
   * `POST /api/jobs/{id}/close`: close an appended timeline with the ledger's
   * closing marker (tool `aer1.job.close`, not counted as an action by
   * coverage; its receipt's bytes
   * `{"closed_by":"api","job_id":...}`, the key's provenance as for spans),
   * and issue the ledger's endpoint commitment. 404 `not_found` (no
   * timeline), 409 `timeline_closed`, `timeline_imported`; 403 `not_owner`,
   * `not_plan_owner`.
   */
  async close(jobId: string, by: Principal): Promise<JobAppended> {
    assertIdentifier('job_id', jobId);
    const provenance = provenanceOf(by);
    assertProvenance(by, provenance);
    return this.db.write(async (tx) => {
      const row = await this.timelines.get(tx, jobId);
      if (!row) throw new NotFoundError('timeline', jobId);
      const refused = await this.refusal(tx, jobId, row, by);
      if (refused) throw new LedgerError(refused.status, refused.reason === 'timeline_imported' ? 'timeline_imported' : refused.reason === 'not_owner' ? 'not_owner' : 'not_plan_owner', refused.message).withReasons();
      const last = await this.lastEntry(tx, jobId);
      if (last?.head.closed) throw new LedgerError(409, 'timeline_closed', `job ${JSON.stringify(jobId)} is closed at seq ${last.head.seq} already`).withReasons();
      const id = randomUUID();
      const bytes = Buffer.from(JSON.stringify({ closed_by: 'api', job_id: jobId }), 'utf8');
      const now = spanTime(BigInt(Date.now()) * 1_000_000n);
      const doc: JsonObject = {
        id,
        tool: CLOSE_MARKER_TOOL,
        timestamp: now,
        tool_context: { source: 'api', job_id: jobId },
        provenance_class: provenance,
        canonical_bytes: bytes.toString('base64'),
        canonical_byte_length: bytes.length,
        hash_algorithm: 'sha256',
        output_hash: `sha256:${sha256Hex(bytes)}`,
        verification_status: provenance === 'OBSERVED VIA GATEWAY' ? 'execution_observed' : 'agent_reported',
        status: 'ok',
      };
      return this.append(tx, jobId, row, last, [{ receipt_id: id, receipt_text: JSON.stringify(doc), receipt_value: doc, tool: CLOSE_MARKER_TOOL, bytes, status: 'ok', result_captured: true, close: true, record: null }], by);
    });
  }

  /** Why spans of `jobId` cannot be recorded by `by` (an imported timeline, another owner's, a plan of another owner), or null. */
  private async refusal(tx: Tx, jobId: string, row: TimelineRow | null, by: Principal): Promise<{ status: 403 | 409; reason: string; message: string } | null> {
    if (row?.source === 'import') return { status: 409, reason: 'timeline_imported', message: `the timeline of job ${JSON.stringify(jobId)} was imported complete; it cannot be extended` };
    try {
      if (row) assertOwner(by, await this.events.writerAt(tx, row.first_position), `the timeline of job ${JSON.stringify(jobId)}`);
      await assertPlanOwner(tx, jobId, by);
    } catch (e) {
      if (e instanceof LedgerError && (e.code === 'not_owner' || e.code === 'not_plan_owner')) return { status: 403, reason: e.code, message: e.message };
      throw e;
    }
    return null;
  }

  /** The receipt recorded at `position` was written by `by` or a key of its owner. */
  private async ownReceipt(tx: Tx, position: number | string, by: Principal): Promise<boolean> {
    const writer = await this.events.writerAt(tx, Number(position));
    return writer !== null && sameOwner(by, writer);
  }

  /** The last entry of an appended timeline, its head recomputed from its stored text (null: no entries). */
  private async lastEntry(tx: Tx, jobId: string): Promise<{ head: TimelineHead; value: JsonObject } | null> {
    const last = await this.timelines.lastEntry(tx, jobId);
    return last ? headOfStored(jobId, last) : null;
  }

  /**
   * Record each item's receipt, then append its chain entry: seq and
   * prev_digest (the S7.1 digest of the entry before) computed here, the
   * whole run checked by the timeline decider. A run that closes the
   * timeline is followed by the ledger's endpoint commitment.
   */
  private async append(tx: Tx, jobId: string, row: TimelineRow | null, last: { head: TimelineHead; value: JsonObject } | null, items: Item[], by: Principal): Promise<JobAppended> {
    const provenance = provenanceOf(by);
    let head = last?.head ?? EMPTY_HEAD;
    // Each entry is checked as it is built, and its digest (the next entry's prev_digest) is the one that check computes.
    const decider = new AppendDecider({ source: row?.source ?? null, head, last: last?.value }, jobId, by.publication, items.length);
    const entries: { seq: number; digest: string }[] = [];
    let n = 0;
    for (const it of items) {
      // PostgreSQL: let the event loop read the database's answers now and then, as the NDJSON batch does (ReceiptsService.ingestBatch).
      if (++n % YIELD_EVERY === 0 && tx.dialect === 'postgres') await new Promise<void>((resolve) => setImmediate(resolve));
      await this.receipts.recordIn(tx, it.receipt_text, by, null, it.receipt_value);
      const e: JsonObject = {
        seq: head.seq + 1,
        job_id: jobId,
        id: it.receipt_id,
        tool: it.tool,
        provenance_class: provenance,
        canonical_bytes: it.bytes.toString('base64'),
        prev_digest: head.digest,
        ...(it.close ? { close: true } : {}),
        status: it.status,
        result_captured: it.result_captured,
        ...(it.record ? { trace_id: it.record.span.trace_id, span_id: it.record.span.span_id } : {}),
      };
      const digest = decider.push(JSON.stringify(e), e, head.seq + 1) as string;
      entries.push({ seq: head.seq + 1, digest });
      head = { seq: head.seq + 1, digest, closed: it.close };
    }
    const decided = decider.decided();
    // Decided on the head read in this serialized write transaction; no timeline row: the stream is new.
    const stored = await this.ledger.append<TimelineEvent>(tx, streams.timeline(jobId), row ? NO_CONCURRENCY_CHECK : STREAM_DOES_NOT_EXIST, decided.events, recordedBy(by));
    const end = decided.head;
    const issued = end.closed ? await this.commitments.issueLedgerCommitment(tx, jobId, { entry_count: end.seq, final_entry_digest: end.digest }, stored[stored.length - 1].recorded_at, by) : undefined;
    return {
      job_id: jobId,
      appended: entries.map((x, k) => ({ seq: x.seq, entry_digest: x.digest, receipt_id: items[k].receipt_id, tool: items[k].tool, status: items[k].status })),
      head: { seq: end.seq, entry_digest: end.digest, closed: end.closed },
      ...(end.closed ? { ledger_commitment: issued } : {}),
      url: this.urls.job(jobId),
    };
  }
}

function rejection(r: SpanRecord, reason: string, message: string): SpanRejection {
  return { trace_id: r.span.trace_id, span_id: r.span.span_id, name: r.span.name, job_id: r.job_id, reason, message };
}

function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
