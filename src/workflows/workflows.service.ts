import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { randomUUID } from 'node:crypto';
import { Check, has, isObject, isUuid, JsonObject, MERKLE_CONSTRUCTION, merkleRoot, originOf, stepReceiptsAtHand, uuidKey, verifyWorkflow, WorkflowFinding, workflowFindings, WorkflowResult } from '../core/aer1';
import { BadInputError, NotFoundError, UnprocessableError, VerificationFailedError } from '../common/errors';
import { RawJson } from '../common/raw-json';
import { httpUrlProblem } from '../core/text';
import { PublicUrls } from '../common/urls';
import { DatabaseService, Tx } from '../database/database.service';
import { parseStoredJson, Queryable } from '../database/rows';
import { LedgerService, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { eventData } from '../ledger/event';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository, Writer } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { receiptOf } from '../receipts/receipts.service';
import { ReceiptReads } from '../receipts/receipt-reads';
import type { ReceiptRow } from '../receipts/receipts.repository';
import { OUTPUT_HASH_CONSTRUCTION, OUTPUT_HASH_NOT_HELD, workflowOutputHash } from './output-hash';
import type { Principal } from '../auth/api-keys.service';
import { recordedBy, sameOwner } from '../auth/permissions';
import { ResultCache } from '../common/result-cache';
import type { RecordedBy } from '../core/ledger/event-hash';
import { decideRecordWorkflow } from './workflows.decider';
import { WorkflowEvent, WorkflowReceiptRecordedData } from './workflows.events';
import { WorkflowRow, WorkflowsRepository } from './workflows.repository';
import { ErasedRecords, ErasureNotice, isErasedRaw } from '../erasure/erased-records';
import { ERASED, StepReceiptOutcome, takeErased, withErasedSteps, WorkflowResultAfterErasure } from './erased-steps';
import { parseAssemble } from './assemble-request';

export type { WorkflowRow } from './workflows.repository';

/** What recording a workflow receipt answers. */
export interface WorkflowRecordOutcome {
  /** `created` (201) or `existing` (200: the same bytes were recorded before). */
  outcome: 'created' | 'existing';
  workflow_id: string;
  receipt_id: string;
  url: string;
  verify_url: string;
  verdict: string;
  reasons: string[];
  position: number;
}

/** One step as the verifier reports it. */
export interface WorkflowStepReport {
  seq: unknown;
  receipt_id: string | null;
  url: string | null;
  receipt: StepReceiptOutcome;
  provenance_class: string | null;
  reasons: string[];
  /** Informational: whether the step's receipt_hash equals the step receipt's output hash (bare hex). */
  receipt_hash_matches_output_hash: boolean | null;
}

/** The answer of GET /api/workflows/:id/verify (also the JSON of the workflow page). */
export interface WorkflowVerification {
  workflow_id: string;
  /** `verified` (valid), `incomplete` (a step receipt is not in the ledger), `failed` (invalid), `erased` (verdict `partly_erased`: step receipts erased, issue 29). */
  verification_status: 'verified' | 'incomplete' | 'failed' | 'erased';
  verdict: string;
  reasons: string[];
  merkle_root: { declared: unknown; computed: string | null; confirmed: boolean; construction: string };
  output_hash: { declared: unknown; computed: string | null; confirmed: boolean | null; construction: string };
  steps: WorkflowStepReport[];
  /**
   * What the stored observations show beside the verdict (S8.2 step 5), never changing it:
   * `step_status_mismatch`, `step_receipt_hash_mismatch` (step = seq), `verify_url_foreign` (step null).
   */
  findings: WorkflowFinding[];
  checks: Check[];
  limits: string[];
  assembled: boolean;
  recorded_at: string;
  /** The key that recorded the workflow receipt (null before attribution). */
  recorded_by: RecordedBy | null;
  url: string;
  verify_url: string;
}

/** A workflow recorded by the receipt's own writer (or its owner) that names the receipt as a step. */
export interface ContainingWorkflow {
  workflow_id: string;
  seq: number;
  goal: string | null;
  url: string;
  /**
   * Where the step page's workflow reference links (S8.3): the workflow's declared `verify_url` when it
   * is a safe http(s) URL (`link_to` `declared_verify_url`), else this ledger's page (`local_page`).
   */
  link: string;
  link_to: 'declared_verify_url' | 'local_page';
  recorded_by: RecordedBy | null;
}

/** A workflow recorded by another owner that names the receipt: a claim, not this receipt's workflow. */
export interface ClaimingWorkflow {
  workflow_id: string;
  seq: number;
  url: string;
  /** The owner (or, for a key without one, the key name) that recorded the workflow. */
  claimed_by: string;
  recorded_by: RecordedBy | null;
}


/**
 * Workflow receipts (S8): recording (verified by the core against the step
 * receipts the ledger holds, S8.2), assembly from recorded receipts, and
 * re-verification of what is stored.
 */
@Injectable()
export class WorkflowsService {
  /** Workflow verification results per workflow and set of recorded step receipts (see verifiedSteps); shared, never modified. */
  private readonly verified = new ResultCache<{ result: WorkflowResultAfterErasure; findings: WorkflowFinding[] }>(256);

  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly workflows: WorkflowsRepository,
    private readonly receipts: ReceiptReads,
    private readonly events: EventsRepository,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly guard: ProjectionGuard,
    private readonly erasedRecords: ErasedRecords,
  ) {}

  /**
   * Record a workflow receipt exactly as received. `valid` and `incomplete`
   * are recorded with their verdict; `invalid` is 422 and nothing is written;
   * the same workflow_id with other bytes is 409 `workflow_id_conflict`; a
   * `verify_url` with userinfo is 422 `url_has_userinfo`.
   */
  async record(body: RawJson, by: Principal): Promise<WorkflowRecordOutcome> {
    const value = body.value;
    if (!isObject(value)) throw new BadInputError('not_object', 'a workflow receipt is a JSON object');
    if (!has(value, 'type') && has(value, 'workflow')) {
      throw new BadInputError('wrapped_workflow', 'post the workflow receipt itself; record its step receipts with POST /api/receipts first');
    }
    // A verify_url with userinfo (http://127.0.0.1:4711@evil.example/) reads as one host and links to another:
    // refused as a service policy (422 url_has_userinfo), not as an AER-1 verdict.
    if (typeof value.verify_url === 'string' && httpUrlProblem(value.verify_url) === 'url_has_userinfo') {
      throw new UnprocessableError('url_has_userinfo', 'verify_url must not carry userinfo (user:password@ before the host); nothing was recorded', { field: 'verify_url' });
    }
    return this.db.write(async (tx) => {
      const held = await this.stepReceipts(tx, value);
      // Issue 29: an erased step receipt has no content left to verify the new workflow against.
      const erased = takeErased(held);
      if (erased.length) throw new UnprocessableError('content_erased', `the content of step receipt(s) ${erased.join(', ')} was erased: a workflow naming them cannot be verified, so it is not recorded`, { erased });
      const result = verifyWorkflow(value, stepReceiptsAtHand(held));
      this.rejectInvalid(result);
      return this.append(tx, body.text, result, false, null, by);
    });
  }

  /**
   * Build a workflow receipt from receipts already recorded (S8 tables 2
   * and 3, Merkle root per S8.1, output hash per {@link OUTPUT_HASH_CONSTRUCTION}),
   * then record it. 400 for a malformed body; 422 `duplicate_step_receipt_id`
   * or `step_receipt_missing` (with `missing`); 422 `content_erased` (with
   * `erased`) when a step receipt's content was erased (issue 29); 422 `loopback_verify_url` when
   * PUBLIC_BASE_URL is loopback (the verify_url written into the immutable
   * bytes would reach no one else) unless ALLOW_LOOPBACK_VERIFY_URL=true.
   */
  async assemble(body: RawJson, by: Principal): Promise<WorkflowRecordOutcome & { merkle_root: string; workflow: JsonObject }> {
    const req = parseAssemble(body.value);
    if (this.urls.loopback && !this.config.get('ALLOW_LOOPBACK_VERIFY_URL', { infer: true })) {
      throw new UnprocessableError(
        'loopback_verify_url',
        `this ledger's PUBLIC_BASE_URL (${this.urls.base}) is a loopback address; an assembled workflow would carry it as its verify_url in bytes that never change. Set PUBLIC_BASE_URL, or ALLOW_LOOPBACK_VERIFY_URL=true to assemble anyway; nothing was recorded`,
        { verify_url: this.urls.base },
      );
    }
    const seen = new Map<string, number>();
    const dups: string[] = [];
    req.receipt_ids.forEach((id, i) => {
      const k = uuidKey(id);
      if (seen.has(k)) dups.push(id);
      else seen.set(k, i);
    });
    if (dups.length) {
      throw new UnprocessableError('duplicate_step_receipt_id', `a workflow names each step receipt once (S8.2 step 3); repeated: ${dups.join(', ')}`, { duplicates: dups, reasons: ['duplicate_step_receipt_id'] });
    }
    return this.db.write(async (tx) => {
      const rows = await this.receiptRows(tx, req.receipt_ids);
      const missing = req.receipt_ids.filter((id) => !rows.has(uuidKey(id)));
      if (missing.length) {
        throw new UnprocessableError('step_receipt_missing', `no recorded receipt for ${missing.join(', ')}; record the step receipts first`, { missing, reasons: ['step_receipt_missing'] });
      }
      // Issue 29: an erased receipt has no content left to assemble from.
      const erased = req.receipt_ids.filter((id) => rows.get(uuidKey(id))!.raw === '');
      if (erased.length) throw new UnprocessableError('content_erased', `the content of step receipt(s) ${erased.join(', ')} was erased: they cannot be assembled into a workflow`, { erased });
      const steps = req.receipt_ids.map((id, i) => {
        const row = rows.get(uuidKey(id))!;
        const r = receiptOf(JSON.parse(row.raw)) as JsonObject;
        const transport = typeof r.tool === 'string';
        const tool = transport ? (r.tool as string) : isObject(r.tool) && typeof r.tool.name === 'string' ? r.tool.name : (row.tool ?? '');
        const at = transport ? r.timestamp : r.created_at;
        const declared = typeof r.output_hash === 'string' ? r.output_hash : (row.output_hash ?? '');
        return {
          seq: i + 1,
          tool,
          receipt_id: row.id_as_given,
          receipt_hash: declared.replace(/^sha256:/, ''),
          started_at: at,
          ended_at: at,
          status: transport && typeof r.status === 'string' ? r.status : 'ok',
        };
      });
      const workflowId = randomUUID();
      const workflow: JsonObject = {
        type: 'verifiable-workflow-receipt',
        version: '1',
        workflow_id: workflowId,
        receipt_id: randomUUID(),
        session_id: req.session_id,
        goal: req.goal,
        status: req.status,
        steps,
        merkle_root: merkleRoot(steps.map((s) => s.receipt_id)),
        output_hash: workflowOutputHash(req.output),
        verify_url: this.urls.workflow(workflowId),
      };
      const text = JSON.stringify(workflow, null, 2);
      const map = new Map<string, unknown>();
      for (const [k, row] of rows) map.set(k, receiptOf(JSON.parse(row.raw)));
      const result = verifyWorkflow(workflow, map);
      this.rejectInvalid(result);
      const o = await this.append(tx, text, result, true, req.output, by);
      return { ...o, merkle_root: workflow.merkle_root as string, workflow };
    });
  }

  /** The stored row (workflow id case-insensitive), or 404. */
  async get(workflowId: string): Promise<WorkflowRow> {
    const key = workflowId.toLowerCase();
    // The workflow's rows (and its steps) checked against its events first: 409 `projection_mismatch` (ProjectionGuard).
    await this.guard.check(this.db, streams.workflow(key), [
      { table: 'workflows', column: 'workflow_id', value: key },
      { table: 'workflow_steps', column: 'workflow_id', value: key },
    ]);
    const row = await this.workflows.get(this.db, key);
    if (!row) throw new NotFoundError('workflow', workflowId);
    return row;
  }

  /**
   * Workflows that name `receiptId` as a step (S8.3 "Part of workflow"),
   * split by who recorded them: `own` were recorded by the receipt's writer or
   * a key of the same owner; `claimed` by anyone else (or when either was
   * recorded before attribution and the other after): such a workflow only
   * claims the receipt, and its text (the goal) is not shown on the receipt's page.
   */
  async containing(receiptId: string, receiptWriter: Writer | null): Promise<{ own: ContainingWorkflow[]; claimed: ClaimingWorkflow[] }> {
    const rows = await this.workflows.naming(this.db, receiptId.toLowerCase());
    const own: ContainingWorkflow[] = [];
    const claimed: ClaimingWorkflow[] = [];
    for (const r of rows) {
      const writer = r.writer;
      const base = { workflow_id: r.workflow_id, seq: r.seq, url: this.urls.workflow(r.workflow_id) };
      const same = writer === null && receiptWriter === null ? true : writer !== null && receiptWriter !== null && sameOwner(writer, receiptWriter);
      const declared = r.verify_url !== null && httpUrlProblem(r.verify_url) === null ? r.verify_url : null;
      const link = declared ? { link: declared, link_to: 'declared_verify_url' as const } : { link: base.url, link_to: 'local_page' as const };
      if (same) own.push({ ...base, ...link, goal: r.goal, recorded_by: writer ? { key_id: writer.key_id, name: writer.name } : null });
      else claimed.push({ ...base, claimed_by: writer ? (writer.owner ?? writer.name) : 'a key before attribution was recorded', recorded_by: writer ? { key_id: writer.key_id, name: writer.name } : null });
    }
    return { own, claimed };
  }

  /**
   * Re-verify the stored workflow receipt (S8.2) with the step receipts the
   * ledger holds now; never trusts the verdict recorded earlier. For an
   * assembled workflow the output hash is recomputed from the stored output.
   */
  async verifyStored(workflowId: string): Promise<{ row: WorkflowRow; workflow: unknown; result: WorkflowResultAfterErasure; report: WorkflowVerification }> {
    const row = await this.get(workflowId);
    const workflow = parseStoredJson(row.raw);
    const { result, findings } = await this.verifiedSteps(row, workflow);
    const assembled = row.assembled === true || Number(row.assembled) === 1;
    const declaredOutput = isObject(workflow) ? workflow.output_hash : null;
    let output: WorkflowVerification['output_hash'] = { declared: declaredOutput, computed: null, confirmed: null, construction: OUTPUT_HASH_NOT_HELD };
    const checks = result.checks.filter((c) => c.name !== 'output_hash');
    const reasons = [...result.reasons];
    let verdict: string = result.verdict;
    if (assembled) {
      const data = await this.recordedData(this.db, row.workflow_id);
      if (data && typeof data.output === 'string') {
        const computed = workflowOutputHash(data.output);
        const ok = computed === declaredOutput;
        output = { declared: declaredOutput, computed, confirmed: ok, construction: OUTPUT_HASH_CONSTRUCTION };
        checks.push({ name: 'output_hash', ok, detail: ok ? `recomputed ${computed} from the stored output` : `declared ${String(declaredOutput)}, recomputed ${computed}` });
        if (!ok) {
          reasons.push('output_hash_mismatch');
          verdict = 'invalid';
        }
      } else {
        output = { ...output, construction: OUTPUT_HASH_CONSTRUCTION };
        checks.push({ name: 'output_hash', ok: null, detail: 'not confirmed: the stored output is not available' });
      }
    } else {
      checks.push({ name: 'output_hash', ok: null, detail: OUTPUT_HASH_NOT_HELD });
    }
    const report: WorkflowVerification = {
      workflow_id: row.workflow_id,
      verification_status: verdict === 'valid' ? 'verified' : verdict === 'incomplete' ? 'incomplete' : verdict === 'partly_erased' ? 'erased' : 'failed',
      verdict,
      reasons,
      merkle_root: {
        declared: result.merkle.declared,
        computed: result.merkle.computed,
        confirmed: result.merkle.confirmed,
        construction: MERKLE_CONSTRUCTION,
      },
      output_hash: output,
      steps: result.steps.map((s) => ({
        seq: s.seq,
        receipt_id: s.receipt_id,
        url: s.receipt_id && isUuid(s.receipt_id) ? this.urls.receipt(s.receipt_id) : null,
        // The ledger was asked for every step receipt: one it does not hold is missing here, also when it holds none
        // (the core then answers as without step receipts, `not_supplied`, and the reason is step_receipts_unavailable).
        receipt: s.receipt === 'not_supplied' && s.receipt_id !== null && isUuid(s.receipt_id) ? 'missing' : s.receipt,
        provenance_class: s.provenance_class,
        reasons: s.reasons,
        receipt_hash_matches_output_hash: s.receipt_hash_matches_output_hash,
      })),
      findings,
      checks,
      limits: assembled ? result.limits.filter((l) => !l.includes('implementation-defined')) : result.limits,
      assembled,
      recorded_at: row.recorded_at,
      recorded_by: await this.events.recordedByOne(this.db, Number(row.position)),
      url: this.urls.workflow(row.workflow_id),
      verify_url: this.urls.workflowVerify(row.workflow_id),
    };
    return { row, workflow, result, report };
  }

  /** The data of the stream's `WorkflowReceiptRecorded` event (holds the assembled output). */
  private async recordedData(q: Queryable, workflowId: string): Promise<WorkflowReceiptRecordedData | null> {
    const data = await this.events.firstData(q, streams.workflow(workflowId), 'WorkflowReceiptRecorded');
    return data === null ? null : eventData<WorkflowEvent, 'WorkflowReceiptRecorded'>('WorkflowReceiptRecorded', data);
  }

  private rejectInvalid(result: WorkflowResult): void {
    if (result.verdict === 'invalid' || result.verdict === 'historical' || result.workflow_id === null || result.receipt_id === null) {
      throw new VerificationFailedError('the workflow receipt does not verify; nothing was recorded', result.reasons, {
        checks: result.checks.filter((c) => c.ok === false),
        steps: result.steps.filter((s) => s.receipt === 'failed').map((s) => ({ seq: s.seq, receipt_id: s.receipt_id, reasons: s.reasons })),
      });
    }
  }

  private async append(tx: Tx, raw: string, result: WorkflowResult, assembled: boolean, output: string | null, by: Principal): Promise<WorkflowRecordOutcome> {
    const workflowId = result.workflow_id!.toLowerCase();
    const existing = await this.workflows.get(tx, workflowId);
    const data: WorkflowReceiptRecordedData = {
      workflow_id: result.workflow_id!,
      receipt_id: result.receipt_id!,
      raw,
      assembled,
      output,
      verdict_at_record: result.verdict,
      reasons: result.reasons,
    };
    const decision = decideRecordWorkflow(existing?.raw ?? null, data);
    if ('existing' in decision) {
      const prior = await this.recordedData(tx, workflowId);
      return this.outcome('existing', existing!, prior?.verdict_at_record ?? result.verdict, prior?.reasons ?? result.reasons);
    }
    // No row in the read model this transaction keeps: the workflow's stream does not exist.
    await this.ledger.append<WorkflowEvent>(tx, streams.workflow(workflowId), STREAM_DOES_NOT_EXIST, decision.events, recordedBy(by));
    const row = (await this.workflows.get(tx, workflowId))!;
    return this.outcome('created', row, result.verdict, result.reasons);
  }

  private outcome(outcome: 'created' | 'existing', row: WorkflowRow, verdict: string, reasons: string[]): WorkflowRecordOutcome {
    return {
      outcome,
      workflow_id: row.workflow_id,
      receipt_id: row.receipt_id,
      url: this.urls.workflow(row.workflow_id),
      verify_url: this.urls.workflowVerify(row.workflow_id),
      verdict,
      reasons,
      position: Number(row.position),
    };
  }

  /**
   * The core's verification of a stored workflow with the step receipts the
   * ledger holds (S8.2), erased ones named ({@link withErasedSteps}). The
   * result is kept per workflow, set of recorded step receipts (ids and
   * positions, read without their bytes) and ledger-wide erased count: a
   * read re-verifies only when a step receipt was recorded or an erasure
   * made since.
   */
  private async verifiedSteps(row: WorkflowRow, workflow: unknown): Promise<{ result: WorkflowResultAfterErasure; findings: WorkflowFinding[] }> {
    const ids = stepReceiptIds(workflow);
    const positions = await this.receipts.positions(this.db, ids);
    const present = [...positions].map(([id, position]) => `${id}@${position}`);
    const key = `${row.workflow_id}@${Number(row.position)}:${await this.erasedRecords.erasedCount(this.db)}:${present.sort().join(',')}`;
    const kept = this.verified.get(key);
    if (kept) return kept;
    const held = await this.stepReceipts(this.db, workflow);
    // Issue 29: an erased step receipt (held, no content) is named as erased with its erasure, not as missing.
    const gone = takeErased(held);
    const notices = gone.length ? await this.erasedRecords.ofPositions(gone.map((k) => positions.get(k)).filter((p): p is number => p !== undefined)) : new Map<number, ErasureNotice>();
    const erased = new Map(gone.map((k) => [k, notices.get(positions.get(k) ?? NaN)?.statement ?? 'content erased']));
    const receipts = gone.length ? held : stepReceiptsAtHand(held);
    const fresh = { result: withErasedSteps(verifyWorkflow(workflow, receipts), erased), findings: workflowFindings(workflow, receipts, originOf(this.urls.base)) };
    this.verified.set(key, fresh);
    return fresh;
  }

  private async stepReceipts(q: Queryable, workflow: unknown): Promise<Map<string, unknown>> {
    const ids: string[] = [];
    if (isObject(workflow) && Array.isArray(workflow.steps)) {
      for (const s of workflow.steps as unknown[]) if (isObject(s) && isUuid(s.receipt_id)) ids.push(s.receipt_id);
    }
    const rows = await this.receiptRows(q, ids);
    const map = new Map<string, unknown>();
    for (const [k, row] of rows) {
      if (isErasedRaw(row.raw)) {
        map.set(k, ERASED);
        continue;
      }
      try {
        map.set(k, receiptOf(JSON.parse(row.raw)));
      } catch {
        map.set(k, undefined);
      }
    }
    return map;
  }

  private receiptRows(q: Queryable, ids: string[]): Promise<Map<string, ReceiptRow>> {
    return this.receipts.getMany(q, ids.map(uuidKey));
  }
}

/** The lowercase UUIDs of a workflow document's step receipts, each once. */
function stepReceiptIds(workflow: unknown): string[] {
  const ids = new Set<string>();
  if (isObject(workflow) && Array.isArray(workflow.steps)) for (const s of workflow.steps as unknown[]) if (isObject(s) && isUuid(s.receipt_id)) ids.add(uuidKey(s.receipt_id));
  return [...ids];
}
