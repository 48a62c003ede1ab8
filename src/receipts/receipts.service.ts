import { Injectable } from '@nestjs/common';
import { isObject, ReceiptResult, receiptOfDocument, verifyReceipt } from '../core/aer1';
import { NotFoundError, VerificationFailedError, BadInputError, LedgerError } from '../common/errors';
import { parseRequestJson, RawJson, ndjsonLines } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { DatabaseService, StorageInputError, Tx } from '../database/database.service';
import { LedgerService, NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository } from '../ledger/events.repository';
import type { RecordedBy } from '../core/ledger/event-hash';
import type { Principal } from '../auth/api-keys.service';
import { assertOwner, assertProvenance, recordedBy } from '../auth/permissions';
import { streams } from '../ledger/streams';
import { assertCorrectionId, decideCorrect, decideRecord } from './receipts.decider';
import { ReceiptCorrected, ReceiptEvent, ReceiptRecordedData } from './receipts.events';
import { ReceiptRow, ReceiptsRepository, RecordedReceipt } from './receipts.repository';

export type { ReceiptRow, RecordedReceipt } from './receipts.repository';

/** What an ingestion answers. */
export interface IngestOutcome {
  /** `created` (201) or `existing` (200: the same bytes were recorded before). */
  outcome: 'created' | 'existing';
  id: string;
  url: string;
  verify_url: string;
  verdict: string;
  provenance_class: string | null;
  position: number;
  supersedes?: string | null;
}

/** The receipt object inside a stored document (the JSON-RPC response's `result._receipt`, or the document itself). */
export function receiptOf(doc: unknown): unknown {
  return receiptOfDocument(doc);
}

/**
 * Receipts: ingestion (verified by the core before anything is written),
 * corrections that supersede (S9), and look-ups.
 */
@Injectable()
export class ReceiptsService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly receipts: ReceiptsRepository,
    private readonly events: EventsRepository,
    private readonly guard: ProjectionGuard,
  ) {}

  /**
   * Record one receipt (core, transport, or a JSON-RPC `tools/call` response
   * with `result._receipt`), stored exactly as received.
   * Errors: 422 `verification_failed` with reasons; 409 `receipt_id_conflict`
   * when the id is recorded with different bytes; 403
   * `provenance_not_permitted` when the key may not claim its provenance class.
   */
  async ingest(body: RawJson, by: Principal): Promise<IngestOutcome> {
    const result = this.verifyOrThrow(body.value, by);
    return this.db.write(async (tx) => (await this.record(tx, body, result, null, by)).outcome);
  }

  /**
   * Record, inside `tx`, a receipt whose exact text the ledger wrote itself
   * (the OTLP receiver's transport receipts, docs/otlp.md): verified (S6) and
   * recorded as {@link ingest} records one. `recorded`: what is recorded
   * under its id (null: nothing). `value`: the value `text` was written from
   * by JSON.stringify (strings, booleans, integers and objects, no member
   * undefined, so parsing `text` gives an equal value): verified as it is,
   * not parsed back; without it `text` is parsed as a request body.
   * 422 / 403 / 409 as `ingest`.
   */
  async recordIn(tx: Tx, text: string, by: Principal, recorded: RecordedReceipt | null, value?: unknown): Promise<RecordedReceipt> {
    const body: RawJson = value === undefined ? parseRequestJson(text) : { text, value };
    return (await this.record(tx, body, this.verifyOrThrow(body.value, by), null, by, recorded)).recorded;
  }

  /** Verify (S6) and check the key may claim the provenance class; throws 422 / 403. */
  private verifyOrThrow(value: unknown, by: Principal): ReceiptResult & { id: string } {
    const result = verifyReceipt(value);
    if (result.verdict !== 'valid' || result.id === null) {
      throw new VerificationFailedError('the receipt does not verify; nothing was recorded', result.reasons, { checks: result.checks.filter((c) => c.ok === false) });
    }
    assertProvenance(by, result.provenance.class);
    return result as ReceiptResult & { id: string };
  }

  /**
   * Record one verified receipt inside `tx`: its stored bytes are `body.text`
   * exactly. `recorded` is what is already recorded under its id (looked up
   * when not given); `correction` the event for the original's stream when it
   * corrects one. Returns the answer and what is now recorded under the id.
   */
  private async record(
    tx: Tx,
    body: RawJson,
    result: ReceiptResult & { id: string },
    correction: ReceiptCorrected | null,
    by: Principal,
    recorded?: RecordedReceipt | null,
  ): Promise<{ outcome: IngestOutcome; recorded: RecordedReceipt }> {
    const id = result.id.toLowerCase();
    const existing = recorded !== undefined ? recorded : ((await this.receipts.findRecorded(tx, [id])).get(id) ?? null);
    const supersedesId = correction ? correction.data.id : null;
    const r = receiptOf(body.value) as Record<string, unknown>;
    const data: ReceiptRecordedData = {
      id: result.id,
      raw: body.text,
      form: result.form ?? 'core',
      wrapped_in: result.wrapped_in,
      verdict: result.verdict,
      reasons: result.reasons,
      provenance_class: result.provenance.class,
      tool: typeof r.tool === 'string' ? r.tool : isObject(r.tool) && typeof r.tool.name === 'string' ? r.tool.name : null,
      status: typeof r.status === 'string' ? r.status : null,
      output_hash: result.computed.output_hash,
      created_at: typeof r.created_at === 'string' ? r.created_at : typeof r.timestamp === 'string' ? r.timestamp : null,
      supersedes: supersedesId,
      publication: by.publication,
    };
    const decision = decideRecord(existing, data);
    if ('existing' in decision) return { outcome: this.outcome('existing', decision.existing), recorded: decision.existing };
    // Not in the read model, which the same transaction keeps: the receipt's stream does not exist.
    const [event] = await this.ledger.append<ReceiptEvent>(tx, streams.receipt(id), STREAM_DOES_NOT_EXIST, decision.events, recordedBy(by));
    // The original's state was read and decided on in this serialized write transaction: nothing appended since.
    if (correction) await this.ledger.append<ReceiptEvent>(tx, streams.receipt(correction.data.id), NO_CONCURRENCY_CHECK, [correction], recordedBy(by));
    // The row the projection wrote holds exactly these values: answered without reading it back.
    const now: RecordedReceipt = { id, raw: body.text, verdict: data.verdict, provenance_class: data.provenance_class, supersedes: supersedesId, position: event.position };
    return { outcome: this.outcome('created', now), recorded: now };
  }

  private outcome(outcome: 'created' | 'existing', row: RecordedReceipt): IngestOutcome {
    return {
      outcome,
      id: row.id,
      url: this.urls.receipt(row.id),
      verify_url: this.urls.receiptVerify(row.id),
      verdict: row.verdict,
      provenance_class: row.provenance_class,
      position: Number(row.position),
      supersedes: row.supersedes,
    };
  }

  /**
   * Record a correction (S9): a new receipt that names `originalId` as the
   * receipt it supersedes. The original stays as it was; its page links to
   * the correction. 404 when the original is unknown, 409
   * `already_superseded` when it already has a correction, 409
   * `correction_same_id` when the correction reuses the original id; 403
   * `not_owner` when the original was recorded by a key of another owner.
   */
  async correct(originalId: string, body: RawJson, by: Principal): Promise<IngestOutcome> {
    const result = this.verifyOrThrow(body.value, by);
    const original = originalId.toLowerCase();
    const correctionId = result.id.toLowerCase();
    assertCorrectionId(original, correctionId);
    return this.db.write(async (tx) => {
      const row = await this.receipts.get(tx, original);
      if (!row) throw new NotFoundError('receipt', originalId);
      assertOwner(by, await this.events.writerAt(tx, row.position), `receipt ${original}`);
      const again = row.superseded_by === correctionId ? await this.receipts.get(tx, correctionId) : null;
      const decision = decideCorrect({ id: original, superseded_by: row.superseded_by, same_correction_raw: again?.raw ?? null }, correctionId, body.text);
      if ('existing' in decision) return this.outcome('existing', again!);
      return (await this.record(tx, body, result, decision.events[0], by)).outcome;
    });
  }

  /**
   * NDJSON bulk ingestion: one receipt a line, answered line by line, all
   * recorded lines in one transaction. A line that does not parse or verify
   * is answered with its error and not recorded; the others are. A line
   * whose provenance the key may not claim is answered 403
   * `provenance_not_permitted` alone.
   *
   * The answer is bounded: the first {@link BATCH_DETAILED_REJECTIONS}
   * rejected lines are answered in `results` with their full error (checks
   * and details); every later rejected line is answered by its line number in
   * `rejected_groups` (`[{status, error, reasons?, lines: [n, ...]}]`, one group
   * per distinct status, code and reasons); `rejected_by_error` /
   * `rejected_by_reason` count every rejected line by its reason code and
   * AER-1 reasons. So the answer stays within a small multiple of the
   * request's size (a few bytes per rejected line past the first 100).
   */
  async ingestBatch(bytes: Buffer, by: Principal): Promise<BatchAnswer> {
    const lines = ndjsonLines(bytes);
    if (lines.length === 0) throw new BadInputError('empty_body', 'no NDJSON lines in the body');
    const tally = new RejectionTally();
    let prepareRejected = 0;
    // Full errors are kept only for the first rejected lines (a line rejected later, at write time, comes after them in
    // line order only if it is later; the first N rejections in line order are among the first N rejected here).
    const keep = (line: number, e: LedgerError): LineError => (prepareRejected++ < BATCH_DETAILED_REJECTIONS ? { line, e } : { line, summary: lineSummary(line, e) });
    const prepared = lines.map((l) => {
      const line = l.line;
      if ('error' in l) return { line, error: keep(line, l.error as LedgerError) };
      try {
        const body = parseRequestJson(l.text);
        return { line, body, result: this.verifyOrThrow(body.value, by) };
      } catch (e) {
        if (!(e instanceof LedgerError)) throw e;
        return { line, error: keep(line, e) };
      }
    });
    return this.db.write(async (tx) => {
      const results: Record<string, unknown>[] = [];
      let accepted = 0;
      let existing = 0;
      // One look-up for the whole batch; a receipt recorded by an earlier line is added as it is recorded.
      const recorded = await this.receipts.findRecorded(
        tx,
        prepared.flatMap((p) => (p.result ? [p.result.id.toLowerCase()] : [])),
      );
      let n = 0;
      for (const p of prepared) {
        // PostgreSQL: let the event loop read the database's answers now and then, so the rows queued so far
        // are inserted while the next are prepared (Tx.insertLater sends full chunks early). SQLite runs in process: nothing to wait for.
        if (++n % BATCH_YIELD_EVERY === 0 && tx.dialect === 'postgres') await new Promise<void>((resolve) => setImmediate(resolve));
        if ('error' in p && p.error) {
          tally.answer(p.error, results);
          continue;
        }
        try {
          const id = p.result!.id.toLowerCase();
          const r = await this.record(tx, p.body!, p.result!, null, by, recorded.get(id) ?? null);
          recorded.set(id, r.recorded);
          const o = r.outcome;
          if (o.outcome === 'created') accepted++;
          else existing++;
          results.push({ line: p.line, status: o.outcome === 'created' ? 201 : 200, ...o });
        } catch (e) {
          // A storage refusal comes mid-write (the line's event may be in): it ends the whole batch.
          if (!(e instanceof LedgerError) || e instanceof StorageInputError) throw e;
          tally.answer({ line: p.line, e }, results);
        }
      }
      return {
        accepted,
        existing,
        rejected: tally.rejected,
        rejected_by_error: tally.byError,
        rejected_by_reason: tally.byReason,
        results,
        rejected_groups: [...tally.groups.values()],
      };
    });
  }

  /**
   * The stored row for `id` (case-insensitive), or 404; checked against the
   * receipt's events first (409 `projection_mismatch` when it differs, was
   * deleted or was inserted: see ProjectionGuard).
   */
  async get(id: string): Promise<ReceiptRow> {
    const key = id.toLowerCase();
    await this.guard.check(this.db, streams.receipt(key), [{ table: 'receipts', column: 'id', value: key }]);
    const row = await this.receipts.get(this.db, key);
    if (!row) throw new NotFoundError('receipt', id);
    return row;
  }

  /** The key that recorded the receipt (null before attribution). */
  async recordedBy(row: Pick<ReceiptRow, 'position'>): Promise<RecordedBy | null> {
    return this.events.recordedByOne(this.db, Number(row.position));
  }

  /** Re-verify the stored bytes with the core (S6): never trusts the verdict recorded at ingestion. */
  async verifyStored(id: string): Promise<{ row: ReceiptRow; result: ReceiptResult; receipt: unknown }> {
    const row = await this.get(id);
    let value: unknown;
    try {
      value = JSON.parse(row.raw);
    } catch {
      value = undefined;
    }
    return { row, result: verifyReceipt(value), receipt: receiptOfDocument(value) };
  }
}

/** Lines of a batch recorded between two turns of the event loop (see ingestBatch). */
const BATCH_YIELD_EVERY = 64;

/** Rejected lines answered in full (every check and detail); later ones answer `{line, status, error, reasons?}`. */
export const BATCH_DETAILED_REJECTIONS = 100;

/** The answer of `POST /api/receipts/batch`. */
export interface BatchAnswer {
  accepted: number;
  existing: number;
  rejected: number;
  /** Rejected lines counted by reason code (`error`). */
  rejected_by_error: Record<string, number>;
  /** Rejected lines counted by AER-1 reason (a line with two reasons counts under both). */
  rejected_by_reason: Record<string, number>;
  /** Every accepted or existing line, and the first 100 rejected lines in full, in line order. */
  results: Record<string, unknown>[];
  /** The rejected lines past the first 100, by line number, grouped by status, reason code and reasons. */
  rejected_groups: RejectedGroup[];
}

/** Rejected lines that share one status, reason code and reasons. */
export interface RejectedGroup {
  status: number;
  error: string;
  reasons?: string[];
  lines: number[];
}

/** A rejected line: its full error while it may still be answered in full, else its summary. */
type LineError = { line: number; e: LedgerError } | { line: number; summary: Record<string, unknown> };

function lineError(line: number, e: LedgerError): Record<string, unknown> {
  return { line, status: e.status, error: e.code, message: e.message, ...e.details };
}

/** A rejected line's reason codes only: `{line, status, error, reasons?}`. */
function lineSummary(line: number, e: LedgerError): Record<string, unknown> {
  const reasons = (e.details as { reasons?: unknown }).reasons;
  return Array.isArray(reasons) ? { line, status: e.status, error: e.code, reasons } : { line, status: e.status, error: e.code };
}

/** Counts rejected lines and answers each: in full in `results` for the first ones in line order, by group after. */
class RejectionTally {
  rejected = 0;
  readonly byError: Record<string, number> = {};
  readonly byReason: Record<string, number> = {};
  readonly groups = new Map<string, RejectedGroup>();

  answer(x: LineError, results: Record<string, unknown>[]): void {
    const full = this.rejected++ < BATCH_DETAILED_REJECTIONS && 'e' in x;
    const answer = full ? lineError(x.line, x.e) : 'e' in x ? lineSummary(x.line, x.e) : x.summary;
    const code = answer.error as string;
    this.byError[code] = (this.byError[code] ?? 0) + 1;
    const reasons = Array.isArray(answer.reasons) ? (answer.reasons as string[]) : undefined;
    if (reasons) for (const r of reasons) this.byReason[r] = (this.byReason[r] ?? 0) + 1;
    if (full) return void results.push(answer);
    const status = answer.status as number;
    const k = JSON.stringify([status, code, reasons ?? null]);
    const group = this.groups.get(k) ?? { status, error: code, ...(reasons ? { reasons } : {}), lines: [] };
    this.groups.set(k, group);
    group.lines.push(x.line);
  }
}
