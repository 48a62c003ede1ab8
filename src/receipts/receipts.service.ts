import { Injectable } from '@nestjs/common';
import { isObject, ReceiptResult, receiptOfDocument, verifyReceipt } from '../core/aer1';
import { ConflictError, NotFoundError, VerificationFailedError, BadInputError, LedgerError } from '../common/errors';
import { parseRequestJson, RawJson, ndjsonLines } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { DatabaseService, StorageInputError, Tx } from '../database/database.service';
import { LedgerService, recordedByAt, writerAt } from '../ledger/ledger.service';
import type { RecordedBy } from '../core/ledger/event-hash';
import type { Principal } from '../auth/api-keys.service';
import { assertOwner, assertProvenance, recordedBy } from '../auth/permissions';
import { streams } from '../ledger/streams';
import { ReceiptRecordedData } from './receipts.projection';

/** A row of the `receipts` read model. */
export interface ReceiptRow {
  id: string;
  id_as_given: string;
  form: string;
  wrapped_in: string | null;
  raw: string;
  verdict: string;
  reasons: string;
  provenance_class: string | null;
  tool: string | null;
  status: string | null;
  output_hash: string | null;
  created_at: string | null;
  supersedes: string | null;
  superseded_by: string | null;
  position: number;
  recorded_at: string;
  /** `full` or `metadata` (canonical bytes served to auditors only), fixed when recorded. */
  publication: string;
}

/** What ingestion needs to know of a recorded receipt: a few columns of its row. */
export type RecordedReceipt = Pick<ReceiptRow, 'id' | 'raw' | 'verdict' | 'provenance_class' | 'supersedes' | 'position'>;
const RECORDED_COLUMNS = 'id, raw, verdict, provenance_class, supersedes, position';
/** Ids per look-up query (well under SQLite's and PostgreSQL's bound-parameter limits). */
const LOOKUP_PAGE = 500;

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

  /** Verify (S6) and check the key may claim the provenance class; throws 422 / 403. */
  private verifyOrThrow(value: unknown, by: Principal): ReceiptResult & { id: string } {
    const result = verifyReceipt(value);
    if (result.verdict !== 'valid' || result.id === null) {
      throw new VerificationFailedError('the receipt does not verify; nothing was recorded', result.reasons, { checks: result.checks.filter((c) => c.ok === false) });
    }
    assertProvenance(by, result.provenance.class);
    return result as ReceiptResult & { id: string };
  }

  /** The recorded receipts among `ids` (lowercase), looked up in pages of {@link LOOKUP_PAGE}. */
  private async findRecorded(tx: Tx, ids: string[]): Promise<Map<string, RecordedReceipt>> {
    const found = new Map<string, RecordedReceipt>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += LOOKUP_PAGE) {
      const page = unique.slice(i, i + LOOKUP_PAGE);
      const rows = await tx.query<RecordedReceipt>(`SELECT ${RECORDED_COLUMNS} FROM receipts WHERE id IN (${page.map(() => '?').join(', ')})`, page);
      for (const r of rows) found.set(r.id, r);
    }
    return found;
  }

  /**
   * Record one verified receipt inside `tx`: its stored bytes are `body.text`
   * exactly. `recorded` is what is already recorded under its id (looked up
   * when not given). Returns the answer and what is now recorded under the id.
   */
  private async record(
    tx: Tx,
    body: RawJson,
    result: ReceiptResult & { id: string },
    supersedes: string | null,
    by: Principal,
    recorded?: RecordedReceipt | null,
  ): Promise<{ outcome: IngestOutcome; recorded: RecordedReceipt }> {
    const id = result.id.toLowerCase();
    const existing = recorded !== undefined ? recorded : ((await this.findRecorded(tx, [id])).get(id) ?? null);
    const supersedesId = supersedes ? supersedes.toLowerCase() : null;
    if (existing) {
      if (existing.raw === body.text && (existing.supersedes ?? null) === supersedesId) return { outcome: this.outcome('existing', existing), recorded: existing };
      if (existing.raw !== body.text) {
        throw new ConflictError('receipt_id_conflict', `receipt ${id} is already recorded with different bytes; records are never altered (S9): publish a correction instead`, { id });
      }
      const as = existing.supersedes ? `as the correction of ${existing.supersedes}` : 'as a receipt of its own';
      throw new ConflictError('receipt_id_conflict', `receipt ${id} is already recorded ${as}; a correction is a new receipt with an id not recorded before (S9)`, { id });
    }
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
    // Not in the read model, which the same transaction keeps: the receipt's stream is new.
    const [event] = await this.ledger.append(tx, streams.receipt(id), 'new', [{ type: 'ReceiptRecorded', data }], recordedBy(by));
    if (supersedesId) {
      const old = streams.receipt(supersedesId);
      const version = await this.ledger.streamVersion(tx, old);
      await this.ledger.append(tx, old, version, [{ type: 'ReceiptCorrected', data: { id: supersedesId, superseded_by: id } }], recordedBy(by));
    }
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
    if (result.id.toLowerCase() === original) throw new ConflictError('correction_same_id', 'a correction is a new receipt with its own id');
    return this.db.write(async (tx) => {
      const row = (await tx.query<ReceiptRow>('SELECT * FROM receipts WHERE id = ?', [original]))[0];
      if (!row) throw new NotFoundError('receipt', originalId);
      assertOwner(by, await writerAt(tx, Number(row.position)), `receipt ${original}`);
      if (row.superseded_by) {
        if (row.superseded_by === result.id.toLowerCase()) {
          const again = (await tx.query<ReceiptRow>('SELECT * FROM receipts WHERE id = ?', [row.superseded_by]))[0];
          if (again && again.raw === body.text) return this.outcome('existing', again);
        }
        throw new ConflictError('already_superseded', `receipt ${original} is already superseded by ${row.superseded_by}; correct that one instead`, { superseded_by: row.superseded_by });
      }
      return (await this.record(tx, body, result, original, by)).outcome;
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
      const recorded = await this.findRecorded(
        tx,
        prepared.flatMap((p) => (p.result ? [p.result.id.toLowerCase()] : [])),
      );
      for (const p of prepared) {
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

  /** The stored row for `id` (case-insensitive), or 404. */
  async get(id: string): Promise<ReceiptRow> {
    const row = (await this.db.query<ReceiptRow>('SELECT * FROM receipts WHERE id = ?', [id.toLowerCase()]))[0];
    if (!row) throw new NotFoundError('receipt', id);
    return { ...row, position: Number(row.position) };
  }

  /** The key that recorded the receipt (null before attribution). */
  async recordedBy(row: Pick<ReceiptRow, 'position'>): Promise<RecordedBy | null> {
    return (await recordedByAt(this.db, [Number(row.position)])).get(Number(row.position)) ?? null;
  }

  /** Re-verify the stored bytes with the core (S6): never trusts the verdict recorded at ingestion. */
  async verifyStored(id: string): Promise<{ row: ReceiptRow; result: ReceiptResult }> {
    const row = await this.get(id);
    let value: unknown;
    try {
      value = JSON.parse(row.raw);
    } catch {
      value = undefined;
    }
    return { row, result: verifyReceipt(value) };
  }
}

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
