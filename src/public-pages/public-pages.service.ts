import { Injectable } from '@nestjs/common';
import { isUuid, PROVENANCE_MEANING, provenanceKind, ReceiptResult } from '../core/aer1';
import { NotFoundError } from '../common/errors';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import { ProjectionGuard } from '../ledger/projection-guard';
import { checkTimelineRows } from '../timelines/timeline-verification.service';
import { EventsRepository } from '../ledger/events.repository';
import { TimelineReads } from '../timelines/timeline-reads';
import { receiptOf, ReceiptsService } from '../receipts/receipts.service';
import { ReceiptReads } from '../receipts/receipt-reads';
import { ClaimingWorkflow, ContainingWorkflow, WorkflowsService, WorkflowVerification } from '../workflows/workflows.service';
import type { Principal } from '../auth/api-keys.service';
import type { Writer } from '../ledger/events.repository';
import { mayReadWithheld, sameOwner } from '../auth/permissions';
import type { RecordedBy } from '../core/ledger/event-hash';
import { linkableReceiptId, loadTimelineView, TimelineView } from './timeline-view';
import { LogService } from '../log/log.service';
import { ReceiptAnchors, ReceiptNostrAnchor } from '../log/receipt-anchors';
import type { LogLocation } from '../log/log-answers';
import { OutcomesService } from '../outcomes/outcomes.service';
import { OutcomeReads } from '../outcomes/outcome-reads';
import type { OutcomeVerification } from '../core/outcomes/outcome';

/** One outcome reported against a receipt, as its page lists it (newest first). */
export interface ReceiptOutcomeView {
  outcome_id: string;
  url: string;
  system: string;
  effect: string;
  result: string;
  observed_at: string;
  recorded_at: string;
  position: number;
  /** The key that reported it. */
  reported_by: RecordedBy | null;
  /** A later outcome of the same system and effect that supersedes it (the latest wins), or null. */
  superseded_by: string | null;
}

/**
 * The newest outcome that decides against a call of a job (the latest of its
 * system and effect, result not `confirmed`), and how many deciding outcomes
 * are against the job's receipts in all.
 */
export interface JobOutcomeAgainst {
  outcome_id: string;
  url: string;
  receipt_id: string;
  system: string;
  effect: string;
  result: string;
  observed_at: string;
  count: number;
}

/** Everything the outcome page shows (also its JSON variant). */
export interface OutcomePageData {
  /** The report as recorded; `canonical_bytes` shown as "(withheld)" when withheld from this reader. */
  outcome: unknown;
  raw: string | null;
  canonical_bytes_withheld: boolean;
  outcome_id: string;
  receipt_id: string;
  receipt_url: string;
  job_id: string;
  system: string;
  effect: string;
  result: string;
  observed_at: string;
  verification: { verdict: string; reasons: string[]; declared_output_hash: string | null; computed_output_hash: string | null; checks: OutcomeVerification['checks']; limits: string[] };
  /** Set when the report's content was erased (issue 29): nothing is re-verified, no bytes are shown. */
  erased: LocatedErasureNotice | null;
  reported_by: RecordedBy | null;
  superseded_by: { id: string; url: string } | null;
  /** Every outcome answering the same receipt, newest first. */
  others: ReceiptOutcomeView[];
  recorded_at: string;
  position: number;
  url: string;
  verify_url: string;
}
import { CommitmentTrustService } from '../log/commitment-trust.service';
import { ErasedRecords, ErasureNotice, isErasedRaw, LocatedErasureNotice } from '../erasure/erased-records';

/** Everything the receipt page shows (also its JSON variant). */
export interface ReceiptPageData {
  /** The receipt as recorded; without `canonical_bytes` when they are withheld. */
  receipt: unknown;
  /** The stored document exactly as recorded, or null when the canonical bytes are withheld from this reader. */
  raw: string | null;
  /** Set when the writer's publication setting withholds the canonical bytes from this reader (S13). */
  canonical_bytes_withheld: { setting: 'metadata'; by: RecordedBy | null; statement: string } | null;
  recorded_by: RecordedBy | null;
  provenance: { class: string | null; kind: string | null; meaning: string | null; note: string };
  verification: {
    verdict: string;
    verification_status: 'verified' | 'failed' | 'erased';
    reasons: string[];
    form: string | null;
    wrapped_in: string | null;
    declared_output_hash: unknown;
    computed_output_hash: string | null;
    checks: ReceiptResult['checks'];
    limits: string[];
  };
  /** Entries of job timelines recorded by this receipt's writer (or its owner) that name this receipt. */
  timeline_positions: { job_id: string; seq: number; url: string }[];
  /** Entries of job timelines of other owners (or written before attribution) that name this receipt: claims. */
  claimed_by_timelines: { job_id: string; seq: number; url: string; claimed_by: string; recorded_by: RecordedBy | null }[];
  /** Workflows recorded by this receipt's writer (or its owner) naming it as a step (S8.3). */
  workflows: ContainingWorkflow[];
  /** Workflows recorded by other owners that name this receipt: claims, shown without their text. */
  claimed_by_workflows: ClaimingWorkflow[];
  superseded_by: { id: string; url: string } | null;
  supersedes: { id: string; url: string } | null;
  /** Outcomes the owning systems reported against this receipt (issue 18), newest first, with who reported them. */
  outcomes: ReceiptOutcomeView[];
  recorded_at: string;
  position: number;
  url: string;
  verify_url: string;
  /** Where the receipt's event sits in the verifiable log, with its checked inclusion proof. */
  log: LogLocation;
  /** With NOSTR_RELAYS: the Nostr anchors covering it (issue 33), each with its envelope; empty until one is published. */
  anchors?: ReceiptNostrAnchor[];
  /** The verdict recorded at ingestion (the read model's, not re-run). */
  recorded_verdict: string;
  /** Set when the receipt's content was erased (issue 29): nothing is re-verified, no bytes are shown. */
  erased: LocatedErasureNotice | null;
}

/** Everything the workflow page shows. */
export interface WorkflowPageData {
  workflow: unknown;
  raw: string;
  session_id: unknown;
  goal: unknown;
  status: unknown;
  receipt_id: string;
  declared_verify_url: unknown;
  verification: WorkflowVerification;
  steps: { seq: unknown; tool: unknown; receipt_id: unknown; started_at: unknown; ended_at: unknown; status: unknown; receipt_hash: unknown }[];
  /** Where the workflow receipt's event sits in the verifiable log. */
  log: LogLocation;
}

export const PROVENANCE_NOTE =
  'Verification never upgrades provenance (S5): a passing check confirms the stored bytes match their commitment, not that anything happened beyond what this class states.';

/** Reads what the public pages show; every verdict is recomputed now with the core. */
@Injectable()
export class PublicPagesService {
  constructor(
    private readonly db: DatabaseService,
    private readonly receipts: ReceiptsService,
    private readonly workflows: WorkflowsService,
    private readonly urls: PublicUrls,
    private readonly timelines: TimelineReads,
    private readonly events: EventsRepository,
    private readonly receiptsRepo: ReceiptReads,
    private readonly log: LogService,
    private readonly outcomes: OutcomesService,
    private readonly guard: ProjectionGuard,
    private readonly trust: CommitmentTrustService,
    private readonly outcomesRepo: OutcomeReads,
    private readonly erasedRecords: ErasedRecords,
    private readonly anchors: ReceiptAnchors,
  ) {}

  /** Outcomes answering receipt `id` (lowercase), newest first. */
  private async outcomeViews(id: string): Promise<ReceiptOutcomeView[]> {
    return (await this.outcomes.ofReceipt(id))
      .map((o) => ({
        outcome_id: o.row.outcome_id,
        url: this.urls.outcome(o.row.outcome_id),
        system: o.row.system,
        effect: o.row.effect,
        result: o.row.result,
        observed_at: o.row.observed_at,
        recorded_at: o.row.recorded_at,
        position: o.row.position,
        reported_by: o.reported_by,
        superseded_by: o.superseded_by,
      }))
      .reverse();
  }

  /** The outcome page's data (issue 18): the stored report re-verified now. 404 when unknown. */
  async outcome(id: string, viewer: Principal | null = null): Promise<OutcomePageData> {
    if (!isUuid(id)) throw new NotFoundError('outcome', id);
    const { row, result, reported_by, superseded_by } = await this.outcomes.verifyStored(id);
    const erased = isErasedRaw(row.raw) ? await this.erasedRecords.located(row.position) : null;
    const gone = isErasedRaw(row.raw);
    const withheld = !gone && row.publication === 'metadata' && !mayReadWithheld(viewer);
    let doc: unknown = null;
    try {
      doc = JSON.parse(row.raw);
    } catch {
      doc = null;
    }
    const declared = doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>).output_hash : null;
    return {
      outcome: withheld ? withoutCanonicalBytes(doc) : doc,
      raw: withheld || gone ? null : row.raw,
      canonical_bytes_withheld: withheld,
      outcome_id: row.outcome_id,
      receipt_id: row.receipt_id,
      receipt_url: this.urls.receipt(row.receipt_id),
      job_id: row.job_id,
      system: row.system,
      effect: row.effect,
      result: row.result,
      observed_at: row.observed_at,
      verification: gone
        ? { verdict: 'erased', reasons: [], declared_output_hash: null, computed_output_hash: null, checks: [], limits: [ERASED_LIMIT] }
        : {
            verdict: result.verdict,
            reasons: result.reasons,
            declared_output_hash: typeof declared === 'string' ? declared : null,
            computed_output_hash: result.computed.output_hash,
            checks: result.checks,
            limits: result.limits,
          },
      erased: gone ? (erased ?? unrecordedErasure(row.position)) : null,
      reported_by,
      superseded_by: superseded_by ? { id: superseded_by, url: this.urls.outcome(superseded_by) } : null,
      others: await this.outcomeViews(row.receipt_id),
      recorded_at: row.recorded_at,
      position: row.position,
      url: this.urls.outcome(row.outcome_id),
      verify_url: this.urls.outcomeVerify(row.outcome_id),
    };
  }

  /**
   * The receipt page's data. `viewer` is the caller when it sent a key: an
   * auditor or admin is served canonical bytes that the writer's `metadata`
   * publication setting withholds from everyone else.
   */
  async receipt(id: string, viewer: Principal | null = null): Promise<ReceiptPageData> {
    if (!isUuid(id)) throw new NotFoundError('receipt', id);
    const { row, result } = await this.receipts.verifyStored(id);
    const writer = await this.events.writerAt(this.db, Number(row.position));
    const gone = isErasedRaw(row.raw);
    const erased = gone ? ((await this.erasedRecords.located(Number(row.position))) ?? unrecordedErasure(Number(row.position))) : null;
    const withheld = !gone && row.publication === 'metadata' && !mayReadWithheld(viewer);
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.raw);
    } catch {
      parsed = null;
    }
    const recorded = receiptOf(parsed);
    const receipt = withheld ? withoutCanonicalBytes(recorded) : recorded;
    const declared = receipt && typeof receipt === 'object' && !Array.isArray(receipt) ? (receipt as Record<string, unknown>).output_hash : null;
    const positions = await this.timelines.placesOfReceipt(this.db, row.id);
    // An entry recorded by another owner only claims this receipt (as a workflow of another owner does).
    const entryWriter = (p: (typeof positions)[number]): Writer | null => p.writer;
    const own = (w: Writer | null): boolean => (w === null && writer === null) || (w !== null && writer !== null && sameOwner(w, writer));
    const kind = provenanceKind(row.provenance_class);
    const containing = await this.workflows.containing(row.id, writer);
    const by = writer ? { key_id: writer.key_id, name: writer.name } : null;
    const loc = await this.log.locate(Number(row.position), this.urls.path(`/api/receipts/${row.id}/proof`));
    return {
      receipt,
      raw: withheld || gone ? null : row.raw,
      canonical_bytes_withheld: withheld
        ? { setting: 'metadata', by, statement: `The canonical bytes are withheld by the publication setting of ${by ? `key ${JSON.stringify(by.name)}` : 'the key that recorded this receipt'} (S13): they are served to authenticated auditors only. The output commitment above was recomputed by this ledger from the stored bytes.` }
        : null,
      recorded_by: by,
      provenance: { class: gone ? row.provenance_class : (result.provenance.class ?? row.provenance_class), kind, meaning: kind ? PROVENANCE_MEANING[kind] : null, note: PROVENANCE_NOTE },
      verification: gone
        ? { verdict: 'erased', verification_status: 'erased', reasons: [], form: row.form, wrapped_in: row.wrapped_in, declared_output_hash: null, computed_output_hash: null, checks: [], limits: [ERASED_LIMIT] }
        : {
            verdict: result.verdict,
            verification_status: result.verdict === 'valid' ? 'verified' : 'failed',
            reasons: result.reasons,
            form: result.form,
            wrapped_in: result.wrapped_in,
            declared_output_hash: declared ?? null,
            computed_output_hash: result.computed.output_hash,
            checks: result.checks,
            limits: result.limits,
          },
      recorded_verdict: row.verdict,
      erased,
      timeline_positions: positions.filter((p) => own(entryWriter(p))).map((p) => ({ job_id: p.job_id, seq: Number(p.seq), url: this.urls.job(p.job_id) })),
      claimed_by_timelines: positions
        .filter((p) => !own(entryWriter(p)))
        .map((p) => {
          const w = entryWriter(p);
          return { job_id: p.job_id, seq: Number(p.seq), url: this.urls.job(p.job_id), claimed_by: w ? (w.owner ?? w.name) : 'a key before attribution was recorded', recorded_by: w ? { key_id: w.key_id, name: w.name } : null };
        }),
      workflows: containing.own,
      claimed_by_workflows: containing.claimed,
      superseded_by: link(this.urls, row.superseded_by),
      supersedes: link(this.urls, row.supersedes),
      outcomes: await this.outcomeViews(row.id),
      recorded_at: row.recorded_at,
      position: Number(row.position),
      url: this.urls.receipt(row.id),
      verify_url: this.urls.receiptVerify(row.id),
      log: loc,
      ...(this.anchors.enabled ? { anchors: await this.anchors.of(row.id, gone ? null : (result.computed.output_hash ?? row.output_hash), loc) } : {}),
    };
  }

  async workflow(id: string): Promise<WorkflowPageData> {
    if (!isUuid(id)) throw new NotFoundError('workflow', id);
    const { row, workflow, report } = await this.workflows.verifyStored(id);
    const w = (workflow && typeof workflow === 'object' ? workflow : {}) as Record<string, unknown>;
    const steps = Array.isArray(w.steps) ? (w.steps as unknown[]) : [];
    return {
      workflow,
      raw: row.raw,
      session_id: w.session_id,
      goal: w.goal,
      status: w.status,
      receipt_id: row.receipt_id,
      declared_verify_url: w.verify_url,
      verification: report,
      steps: steps.map((s) => {
        const o = (s && typeof s === 'object' ? s : {}) as Record<string, unknown>;
        return { seq: o.seq, tool: o.tool, receipt_id: o.receipt_id, started_at: o.started_at, ended_at: o.ended_at, status: o.status, receipt_hash: o.receipt_hash };
      }),
      log: await this.log.locate(Number(row.position), this.urls.path(`/api/workflows/${row.workflow_id}/proof`)),
    };
  }

  /** The job page's data; `range` pages the entries (the verdict and commitments cover the whole timeline). */
  async timeline(jobId: string, range?: { after: number; limit: number }): Promise<TimelineView & { url: string; verify_url: string; log: LogLocation | null; outcome_against: JobOutcomeAgainst | null; erasures: ErasureNotice[] }> {
    // The job's rows checked against its events first: 409 `projection_mismatch` (ProjectionGuard).
    await checkTimelineRows(this.guard, this.db, jobId);
    const view = await loadTimelineView(this.timelines, this.db, jobId, range, this.trust.trust);
    if (!view) throw new NotFoundError('job', jobId);
    // Which of this page's entry receipts the ledger holds: the page links only those (no link to "Not found").
    const ids = [...new Set(view.entries.map((e) => e.receipt_id).filter(linkableReceiptId).map((id) => id.toLowerCase()))];
    const held = new Set((await this.receiptsRepo.positions(this.db, ids)).keys());
    view.entries = view.entries.map((e) => ({ ...e, receipt_recorded: linkableReceiptId(e.receipt_id) && held.has(e.receipt_id.toLowerCase()) }));
    // Issue 29: the erasures that took entries or commitments of the job (the page says who, when, why).
    const notices = view.erased ? await this.erasedRecords.ofPositions(view.erased.positions) : new Map<number, ErasureNotice>();
    const erasures = [...new Map([...notices.values()].map((n) => [n.erasure_id, n])).values()];
    // The newest event of the job: its leaf's inclusion proves the whole chain up to it (every entry links to the one before).
    const row = await this.timelines.get(this.db, jobId);
    const last = row ? Number(row.last_position) : 0;
    const log = last > 0 ? await this.log.locate(last, this.urls.path(`/api/ledger/events/${last}/proof`)) : null;
    // The newest deciding outcome against a receipt the job's entries name (one indexed query): the page leads with it.
    const against = await this.outcomesRepo.decidingAgainst(this.db, { job: jobId });
    const outcome_against = against
      ? { outcome_id: against.row.outcome_id, url: this.urls.outcome(against.row.outcome_id), receipt_id: against.row.receipt_id, system: against.row.system, effect: against.row.effect, result: against.row.result, observed_at: against.row.observed_at, count: against.count }
      : null;
    return { ...view, url: this.urls.job(jobId), verify_url: this.urls.jobVerify(jobId), log, outcome_against, erasures };
  }
}


/** What an erased record's verification says it cannot do. */
export const ERASED_LIMIT = 'The content was erased for good (issue 29): nothing of it can be re-verified. The record\'s leaf (format 3: ids, type, key and time, no content) still proves it was recorded at its position; the verdict recorded at ingestion is shown as recorded, not re-run.';

/** The notice of a record whose content is gone but whose erasure is not in the read model (never expected; said so rather than failing). */
function unrecordedErasure(position: number): LocatedErasureNotice {
  return { erasure_id: '', url: '', erased_at: '', erased_by: { key_id: '', name: 'unknown' }, reason: 'the erasure record was not found', legal_basis: 'unknown', erasure_position: 0, statement: `Content erased (the erasure of position ${position} is not in the read model)`, erasure_log: null };
}

/** A display copy of a receipt without its `canonical_bytes` (the stored document is never changed). */
function withoutCanonicalBytes(receipt: unknown): unknown {
  if (!receipt || typeof receipt !== 'object' || Array.isArray(receipt)) return receipt;
  const { canonical_bytes: _omitted, ...rest } = receipt as Record<string, unknown>;
  return { ...rest, canonical_bytes: '(withheld)' };
}

function link(urls: PublicUrls, id: string | null): { id: string; url: string } | null {
  return id ? { id, url: urls.receipt(id) } : null;
}

