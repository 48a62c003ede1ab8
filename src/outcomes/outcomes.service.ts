import { Injectable } from '@nestjs/common';
import { OutcomeVerification, verifyOutcome } from '../core/outcomes/outcome';
import { NotFoundError, UnprocessableError, VerificationFailedError } from '../common/errors';
import { RawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { LedgerService, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { streams } from '../ledger/streams';
import type { Principal } from '../auth/api-keys.service';
import { assertSpeaksFor, recordedBy } from '../auth/permissions';
import type { RecordedBy } from '../core/ledger/event-hash';
import { ReceiptReads } from '../receipts/receipt-reads';
import { TimelineReads } from '../timelines/timeline-reads';
import { WorkflowReads } from '../workflows/workflow-reads';
import { Queryable } from '../database/rows';
import { isUuid } from '../core/aer1';
import { decideReport } from './outcomes.decider';
import { OutcomeEvent, OutcomeReportedData } from './outcomes.events';
import { OutcomeRow, OutcomesRepository } from './outcomes.repository';

/** What `POST /api/outcomes` answers. */
export interface ReportAnswer {
  /** `created` (201) or `existing` (200: the same bytes were recorded before). */
  outcome: 'created' | 'existing';
  outcome_id: string;
  receipt_id: string;
  system: string;
  effect: string;
  result: string;
  url: string;
  verify_url: string;
  position: number;
}

/** An outcome with what later outcomes of the same receipt, system and effect say of it. */
export interface OutcomeWithSupersession {
  row: OutcomeRow;
  /** The latest later outcome of the same receipt, system and effect (it supersedes this one), or null. */
  superseded_by: string | null;
  reported_by: RecordedBy | null;
}

/**
 * Outcome reports (issue 18): the owning system's observation of an effect
 * of a recorded call, verified before it is written, recorded as an
 * `OutcomeReported` event, never altered.
 */
@Injectable()
export class OutcomesService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly outcomes: OutcomesRepository,
    private readonly receipts: ReceiptReads,
    private readonly events: EventsRepository,
    private readonly timelines: TimelineReads,
    private readonly workflows: WorkflowReads,
  ) {}

  /**
   * Record one outcome report, stored exactly as received. Errors: 422
   * `verification_failed` with reasons (members, strict base64, output
   * commitment); 403 `system_not_permitted` when the key does not speak for
   * its `system`; 422 `receipt_not_recorded` when the receipt it answers is
   * not recorded; 422 `receipt_not_in_job` when no entry of the job it names
   * (nor a step of the workflow whose id is its `job_id`) names that receipt; 409 `outcome_id_conflict` when the id is recorded with other bytes.
   */
  async report(body: RawJson, by: Principal): Promise<ReportAnswer> {
    const v = verifyOutcome(body.value);
    if (v.verdict !== 'valid' || v.fields === null) {
      throw new VerificationFailedError('the outcome report does not verify; nothing was recorded', v.reasons, { checks: v.checks.filter((c) => c.ok === false) });
    }
    const f = v.fields;
    assertSpeaksFor(by, f.system);
    const id = f.outcome_id.toLowerCase();
    const receiptId = f.receipt_id.toLowerCase();
    const data: OutcomeReportedData = {
      outcome_id: f.outcome_id,
      raw: body.text,
      job_id: f.job_id,
      receipt_id: receiptId,
      effect: f.effect,
      result: f.result,
      observed_at: f.observed_at,
      system: f.system,
      output_hash: f.output_hash,
      publication: by.publication,
    };
    return this.db.write(async (tx) => {
      if (!(await this.receipts.positions(tx, [receiptId])).has(receiptId)) {
        throw new UnprocessableError('receipt_not_recorded', `receipt ${receiptId} is not recorded in this ledger: an outcome answers a recorded call; nothing was recorded`, { receipt_id: receiptId });
      }
      // An outcome counts only for the job it names (issue 26): that job's entries (or, for a workflow, its steps) must name the receipt.
      if (!(await this.namesReceipt(tx, f.job_id, receiptId))) {
        throw new UnprocessableError(
          'receipt_not_in_job',
          `no entry of job ${JSON.stringify(f.job_id)} (nor a step of a workflow with that id) names receipt ${receiptId}: an outcome answers a call of the job it names; nothing was recorded`,
          { job_id: f.job_id, receipt_id: receiptId },
        );
      }
      const decision = decideReport(await this.outcomes.get(tx, id), data);
      if ('existing' in decision) return this.answer('existing', decision.existing);
      // Not in the read model this transaction keeps: the outcome's stream does not exist.
      const [event] = await this.ledger.append<OutcomeEvent>(tx, streams.outcome(id), STREAM_DOES_NOT_EXIST, decision.events, recordedBy(by));
      return this.answer('created', { outcome_id: id, receipt_id: receiptId, system: f.system, effect: f.effect, result: f.result, position: event.position });
    });
  }

  /** True when an entry of job `jobId`, or a step of the workflow whose id it is (a UUID, any case), names `receiptId` (lowercase). */
  private async namesReceipt(tx: Queryable, jobId: string, receiptId: string): Promise<boolean> {
    if ((await this.timelines.receiptIdsNamedBefore(tx, jobId, null, [receiptId])).has(receiptId)) return true;
    return isUuid(jobId) && this.workflows.namesStep(tx, jobId.toLowerCase(), receiptId);
  }

  private answer(outcome: 'created' | 'existing', r: Pick<OutcomeRow, 'outcome_id' | 'receipt_id' | 'system' | 'effect' | 'result' | 'position'>): ReportAnswer {
    return {
      outcome,
      outcome_id: r.outcome_id,
      receipt_id: r.receipt_id,
      system: r.system,
      effect: r.effect,
      result: r.result,
      url: this.urls.outcome(r.outcome_id),
      verify_url: this.urls.outcomeVerify(r.outcome_id),
      position: Number(r.position),
    };
  }

  /** The stored row of outcome `id` (case-insensitive), or 404. */
  async get(id: string): Promise<OutcomeRow> {
    const row = await this.outcomes.get(this.db, id.toLowerCase());
    if (!row) throw new NotFoundError('outcome', id);
    return row;
  }

  /** Re-verify the stored bytes now (never trusts what was found at record). 404 when unknown. */
  async verifyStored(id: string): Promise<{ row: OutcomeRow; result: OutcomeVerification; reported_by: RecordedBy | null; superseded_by: string | null }> {
    const row = await this.get(id);
    let value: unknown;
    try {
      value = JSON.parse(row.raw);
    } catch {
      value = undefined;
    }
    const same = await this.ofReceipt(row.receipt_id);
    const me = same.find((o) => o.row.outcome_id === row.outcome_id);
    return { row, result: verifyOutcome(value), reported_by: me?.reported_by ?? null, superseded_by: me?.superseded_by ?? null };
  }

  /**
   * The outcomes answering receipt `receiptId` (lowercase), in ledger order,
   * each with the key that reported it and the later outcome of the same
   * system and effect that supersedes it (the latest wins).
   */
  async ofReceipt(receiptId: string): Promise<OutcomeWithSupersession[]> {
    const rows = await this.outcomes.ofReceipt(this.db, receiptId);
    const by = await this.events.recordedByAt(this.db, rows.map((r) => r.position));
    const latest = new Map<string, string>();
    for (const r of rows) latest.set(JSON.stringify([r.system, r.effect]), r.outcome_id);
    return rows.map((row) => {
      const last = latest.get(JSON.stringify([row.system, row.effect]))!;
      return { row, superseded_by: last === row.outcome_id ? null : last, reported_by: by.get(row.position) ?? null };
    });
  }

  /** The stored texts of the outcomes naming job `jobId`, in ledger order (what `aer1 coverage --outcomes` reads). */
  async exportJob(jobId: string): Promise<OutcomeRow[]> {
    return this.outcomes.ofJob(this.db, jobId);
  }
}
