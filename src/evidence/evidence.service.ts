import { Inject, Injectable, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/configuration';
import type { Principal } from '../auth/api-keys.service';
import { mayReadWithheld } from '../auth/permissions';
import { LedgerError, NotFoundError } from '../common/errors';
import { has, isObject, isUuid } from '../core/aer1';
import type { StoredEvent } from '../core/ledger/event-hash';
import { ErasureService } from '../erasure/erasure.service';
import { PackEvents } from './pack-events';
import { PackHeads } from './pack-heads';
import { recordersFor } from './report-recorders';
import { answersStreamId, subjectLineId } from '../core/ledger/answer-sets';
import { StreamHeadsService } from '../log/stream-heads.service';
import {
  CheckpointMember,
  CommitmentMember,
  EntryMember,
  memberName,
  OutcomeMember,
  PACK_FORMAT,
  PackHeader,
  PackSubjectKind,
  PackWriter,
  PlanMember,
  ReceiptMember,
  ReportMember,
  TimestampMember,
  NostrMember,
  VkeyMember,
  WorkflowMember,
} from '../core/pack/format';
import { identifierProblem } from '../core/text';
import { DatabaseService } from '../database/database.service';
import { parseStoredJson } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { LogIdentityService } from '../log/log-identity.service';
import { LogService } from '../log/log.service';
import type { StoredCheckpoint } from '../log/tree.repository';
import { CoverageReads } from '../coverage/coverage-reads';
import { OutcomeReads } from '../outcomes/outcome-reads';
import { outcomeNamesSubject } from '../core/coverage/outcomes';
import type { PlanSubject } from '../core/coverage/plan';
import { TimelineReads } from '../timelines/timeline-reads';
import { WorkflowReads } from '../workflows/workflow-reads';

/** Events (and entries, receipts) read per page while a pack is written. */
export const PACK_PAGE = 500;

/**
 * What the checkpoint machinery adds to a stored checkpoint: the note with
 * the witnesses' cosignature lines, and an RFC 3161 token over it. Provided
 * under {@link CHECKPOINT_EVIDENCE} by the witness/timestamp module; without
 * it a pack carries the note as signed and no timestamp.
 */
export interface CheckpointEvidence {
  /** The note as `/checkpoint` serves it (cosignature lines appended), verbatim. */
  witnessedNote(cp: StoredCheckpoint): Promise<string>;
  /** DER TimeStampResp over the checkpoint body, or null. */
  timestamp(cp: StoredCheckpoint): Promise<Buffer | null>;
  /** The `log/nostr` member: the newest Nostr anchor of a checkpoint no larger than `cp`, or null (issue 33). */
  nostrAnchor(cp: StoredCheckpoint): Promise<NostrMember | null>;
}
export const CHECKPOINT_EVIDENCE = Symbol('CHECKPOINT_EVIDENCE');

/** The subject of a pack, resolved before the first byte is written. */
interface Resolved {
  kind: PackSubjectKind;
  id: string;
  /** The job or workflow whose records the pack holds. */
  record: { kind: 'job' | 'workflow'; id: string };
  /** A coverage-report pack holds that report only. */
  reportId: string | null;
  cp: StoredCheckpoint;
}

const WITHHELD_NOTE = 'withheld';

/**
 * Evidence packs (issue 16, docs/evidence-pack.md): one JSON Lines file per
 * job, workflow or coverage report with every record's exact bytes, every
 * event's leaf and its inclusion proof against the newest checkpoint, that
 * checkpoint, the log's key, and a manifest of SHA-256s. Written as an async
 * sequence of text chunks read page by page from the repositories, so a
 * job of any size is never held in memory.
 */
@Injectable()
export class EvidenceService {
  constructor(
    private readonly db: DatabaseService,
    private readonly log: LogService,
    private readonly identity: LogIdentityService,
    private readonly events: EventsRepository,
    private readonly timelines: TimelineReads,
    private readonly workflows: WorkflowReads,
    private readonly coverage: CoverageReads,
    private readonly outcomes: OutcomeReads,
    private readonly erasure: ErasureService,
    private readonly streamHeads: StreamHeadsService,
    private readonly config: ConfigService<AppConfig, true>,
    @Optional() @Inject(CHECKPOINT_EVIDENCE) private readonly cpEvidence?: CheckpointEvidence,
  ) {
    this.packEvents = new PackEvents(db, log, events, erasure);
  }
  private readonly packEvents: PackEvents;
  /** The stream-heads collector of each pack being written. */
  private readonly headsOf = new WeakMap<PackWriter, PackHeads>();

  /**
   * Check the subject exists (404 `not_found`) and wait, at most
   * PACK_CHECKPOINT_WAIT_MS, for the signed checkpoint that covers it (a
   * record written a moment ago is covered at the signer's next run; no
   * transaction is held meanwhile): after the wait 503 `no_checkpoint` with
   * Retry-After, at once 503 `log_unavailable` when this deployment signs
   * none or its checkpoint signing is stopped (nothing to wait for). Then return the pack as a lazy sequence of chunks (each a whole
   * number of lines). `signal` (the client left) ends the wait early.
   */
  async open(kind: PackSubjectKind, rawId: string, viewer: Principal, signal?: AbortSignal): Promise<{ filename: string; chunks: AsyncGenerator<string> }> {
    const r = await this.resolve(kind, rawId, signal);
    return { filename: `${kind === 'coverage_report' ? 'coverage-report' : kind}-${r.id}.aer1pack.jsonl`, chunks: this.write(r, viewer) };
  }

  private async resolve(kind: PackSubjectKind, rawId: string, signal?: AbortSignal): Promise<Resolved> {
    let record: Resolved['record'];
    let reportId: string | null = null;
    let id = rawId;
    let first: number;
    if (kind === 'job') {
      const p = identifierProblem('job_id', rawId);
      if (p) throw new LedgerError(400, p.code as 'unsupported_character', p.message);
      const t = await this.timelines.get(this.db, rawId);
      if (!t) throw new NotFoundError('job', rawId);
      record = { kind: 'job', id: rawId };
      first = t.first_position;
    } else if (kind === 'workflow') {
      if (!isUuid(rawId)) throw new NotFoundError('workflow', rawId);
      id = rawId.toLowerCase();
      const w = await this.workflows.get(this.db, id);
      if (!w) throw new NotFoundError('workflow', rawId);
      record = { kind: 'workflow', id };
      first = w.position;
    } else {
      id = rawId.toLowerCase();
      const s = isUuid(rawId) ? await this.coverage.reportSubject(this.db, id) : null;
      if (!s) throw new NotFoundError('coverage report', rawId);
      record = { kind: s.kind, id: s.id };
      reportId = id;
      first = s.position;
    }
    const retryAfter = Math.max(1, Math.ceil(this.config.get('CHECKPOINT_INTERVAL_MS', { infer: true }) / 1000));
    // Also the newest erasure: a member it erased shows as erased, and its erasure event must be in the pack, proven.
    const cp = await this.log.latestCovering(Math.max(first, await this.erasure.newestErasurePosition()), kind.replace('_', ' '), this.config.get('PACK_CHECKPOINT_WAIT_MS', { infer: true }), retryAfter, signal);
    return { kind, id, record, reportId, cp };
  }

  private async *write(r: Resolved, viewer: Principal): AsyncGenerator<string> {
    const w = new PackWriter();
    const cp = r.cp;
    const upTo = cp.size;
    const header: PackHeader = {
      member: 'header',
      format: PACK_FORMAT,
      subject: { kind: r.kind, id: r.id },
      generated_at: new Date().toISOString(),
      as_of_position: upTo,
      ledger: this.identity.publicBase,
      requested_by_role: viewer.role,
    };
    yield w.member(header);
    yield w.member({ member: 'log/vkey', vkey: this.identity.current?.vkey ?? null } satisfies VkeyMember);
    const note = this.cpEvidence ? await this.cpEvidence.witnessedNote(cp) : cp.note;
    yield w.member({ member: 'log/checkpoint', size: cp.size, note } satisfies CheckpointMember);
    const token = this.cpEvidence ? await this.cpEvidence.timestamp(cp) : null;
    if (token) yield w.member({ member: 'log/timestamp', timestamp: token.toString('base64') } satisfies TimestampMember);
    const nostr = this.cpEvidence ? await this.cpEvidence.nostrAnchor(cp) : null;
    if (nostr) yield w.member(nostr);
    // Every stream the subject spans is named as it is written, and signed in stream-heads statements (issue 30).
    const heads = new PackHeads(this.streamHeads, cp, w, subjectLineId(r.kind, r.id));
    this.headsOf.set(w, heads);
    heads.add(r.record.kind === 'job' ? streams.timeline(r.record.id) : streams.workflow(r.record.id));

    // The plan versions in force for the subject, each with its event.
    const versions = (await this.coverage.planVersionsOfSubject(this.db, r.record)).filter((v) => v.position <= upTo);
    const planEvents = await this.eventsAt(versions.map((v) => v.position));
    let out = await this.packEvents.members(w, planEvents, upTo, viewer);
    const planGone = await this.packEvents.erasedOf(planEvents);
    for (const v of versions) {
      heads.add(streams.plan(v.plan_id));
      // Erased (issue 29, named by position): the version is named with no plan and no digest, and its erasure.
      const x = planGone.get(v.position);
      out += w.member(
        x
          ? ({ member: memberName.plan(v.plan_id, v.version), plan_id: v.plan_id, version: v.version, position: v.position, digest: null, registered_at: v.registered_at, plan: null, erased: x.erased } satisfies PlanMember)
          : ({ member: memberName.plan(v.plan_id, v.version), plan_id: v.plan_id, version: v.version, position: v.position, digest: v.digest, registered_at: v.registered_at, plan: v.plan } satisfies PlanMember),
      );
    }
    yield out;

    // Coverage reports: every report on the subject (a job or workflow pack), or the one asked for.
    const rows = (await this.coverage.reportsOfSubject(this.db, r.record, upTo)).filter((x) => r.reportId === null || x.report_id === r.reportId);
    // The plans' and reports' streams go into the first statement, with the subject line that binds it to this pack.
    for (const row of rows) heads.add(streams.coverage(row.report_id));
    // Outcomes (issue 18) as of the checkpoint, in every pack: the statement names their sets as of it (a report's
    // recomputation reads those at or below its own position only).
    const outcomesUpTo = upTo;

    if (r.record.kind === 'job') {
      yield* this.timeline(w, r.record.id, upTo, viewer);
      const jobId = r.record.id;
      let after = '';
      for (;;) {
        const ids = await this.timelines.receiptIdPage(this.db, jobId, after, upTo, PACK_PAGE);
        if (ids.length === 0) break;
        after = ids[ids.length - 1];
        yield* this.outcomesOf(w, r.record, ids, outcomesUpTo, upTo, viewer);
        yield await heads.drain();
      }
    } else {
      // Every receipt a workflow receipt names as a step (the outcomes answering them are written after the workflow).
      const steps = new Set<string>();
      const emitted = new Set<string>();
      let after = 0;
      for (;;) {
        const evs = await this.events.streamPage(this.db, streams.workflow(r.record.id), after, upTo, PACK_PAGE);
        if (evs.length === 0) break;
        after = evs[evs.length - 1].stream_position;
        let chunk = await this.packEvents.members(w, evs, upTo, viewer);
        const stepIds = new Set<string>();
        for (const e of evs) {
          const d = parseStoredJson(e.data);
          if (e.type !== 'WorkflowReceiptRecorded' || !isObject(d) || typeof d.raw !== 'string') continue;
          chunk += w.member({ member: memberName.workflow(r.record.id, e.position), id: r.record.id, position: e.position, raw: d.raw } satisfies WorkflowMember);
          const doc = parseStoredJson(d.raw);
          if (isObject(doc) && Array.isArray(doc.steps)) for (const st of doc.steps) if (isObject(st) && typeof st.receipt_id === 'string') stepIds.add(st.receipt_id.toLowerCase());
        }
        yield chunk;
        // A workflow names at most a few thousand steps: its ids are kept to emit each receipt once.
        for (const x of stepIds) steps.add(x);
        const fresh = [...stepIds].filter((x) => !emitted.has(x));
        for (const x of fresh) emitted.add(x);
        for (let i = 0; i < fresh.length; i += PACK_PAGE) yield await this.receipts(w, fresh.slice(i, i + PACK_PAGE), upTo, viewer, emitted, null);
      }
      const ids = [...steps].sort();
      for (let i = 0; i < ids.length; i += PACK_PAGE) {
        yield* this.outcomesOf(w, r.record, ids.slice(i, i + PACK_PAGE), outcomesUpTo, upTo, viewer);
        yield await heads.drain();
      }
    }

    for (const row of rows) {
      const evs = await this.eventsAt([row.position]);
      let chunk = await this.packEvents.members(w, evs, upTo, viewer);
      const x = (await this.packEvents.erasedOf(evs)).get(row.position);
      if (x) {
        // Erased (issue 29, named by position): named with its erasure, no content, no digest; never recomputed.
        chunk += w.member({ member: memberName.report(row.report_id), report_id: row.report_id, position: row.position, issued_at: row.issued_at, digest: null, report: null, recorders: { record: null, receipts: {} }, erased: x.erased } satisfies ReportMember);
        yield chunk;
        continue;
      }
      const report = JSON.parse(row.report) as { as_of_position: number };
      const { recorders, other_jobs } = await recordersFor(this.db, this.timelines, r.record, report.as_of_position);
      chunk += w.member({ member: memberName.report(row.report_id), report_id: row.report_id, position: row.position, issued_at: row.issued_at, digest: row.digest, report, recorders, ...(other_jobs ? { other_jobs } : {}) } satisfies ReportMember);
      yield chunk;
    }
    // The PayloadsErased events that erased members of this pack (issue 29), as event members with their proofs: the
    // verifier checks every erased member against the one it names (`checkErasures`).
    const erasures = [...this.packEvents.erasuresOf(w)].filter((p) => p <= upTo).sort((a, b) => a - b);
    for (let i = 0; i < erasures.length; i += PACK_PAGE) yield await this.packEvents.members(w, await this.eventsAt(erasures.slice(i, i + PACK_PAGE)), upTo, viewer);
    yield await heads.finish();
    this.headsOf.delete(w);
    yield w.finish();
  }

  /** The events at `positions` (at most a page), in position order. */
  private async eventsAt(positions: number[]): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    for (const p of positions) {
      const e = await this.events.at(this.db, p);
      if (e) out.push(e);
    }
    return out;
  }

  /**
   * The timeline stream's events page by page, each followed by its entries
   * or commitment, then the receipts the page's entries name for the first
   * time in the job (an earlier entry naming the same id is found through
   * the `receipt_id` index, so no set of every id is kept).
   */
  private async *timeline(w: PackWriter, jobId: string, upTo: number, viewer: Principal): AsyncGenerator<string> {
    let after = 0;
    const corrections = new Set<string>();
    for (;;) {
      const evs = await this.events.streamPage(this.db, streams.timeline(jobId), after, upTo, PACK_PAGE);
      if (evs.length === 0) return;
      after = evs[evs.length - 1].stream_position;
      const withheld = mayReadWithheld(viewer) ? new Set<number>() : await this.events.withheldAmong(this.db, evs.map((e) => e.position));
      let chunk = await this.packEvents.members(w, evs, upTo, viewer);
      let named: { seq: number; id: string }[] = [];
      const gone = await this.packEvents.erasedOf(evs);
      for (const e of evs) {
        const d = parseStoredJson(e.data);
        const x = gone.get(e.position);
        if (x && e.type === 'TimelineEntryAppended' && typeof x.kept.seq === 'number') {
          // Erased (issue 29): the entry is named with no content; its receipt is still named by the retained id.
          chunk += w.member({ member: memberName.entry(x.kept.seq), seq: x.kept.seq, position: e.position, raw: null, erased: x.erased } satisfies EntryMember);
          if (typeof x.kept.receipt_id === 'string') named.push({ seq: x.kept.seq, id: x.kept.receipt_id });
          continue;
        }
        if (x && e.type === 'TimelineImported') {
          // An erased import: each entry named by its retained seq and receipt id, with no content.
          for (const k of Array.isArray(x.kept.entries) ? (x.kept.entries as { seq?: unknown; receipt_id?: unknown }[]) : []) {
            if (typeof k.seq !== 'number') continue;
            chunk += w.member({ member: memberName.entry(k.seq), seq: k.seq, position: e.position, raw: null, erased: x.erased } satisfies EntryMember);
            if (typeof k.receipt_id === 'string') named.push({ seq: k.seq, id: k.receipt_id });
          }
          continue;
        }
        if (x && e.type === 'EndpointCommitmentRecorded' && typeof x.kept.id === 'string') {
          chunk += w.member({ member: memberName.commitment(x.kept.id), id: x.kept.id, position: e.position, raw: null, erased: x.erased } as unknown as CommitmentMember);
          continue;
        }
        if (!isObject(d)) continue;
        const hide = withheld.has(e.position);
        if (e.type === 'TimelineEntryAppended' && typeof d.seq === 'number') {
          chunk += w.member({ member: memberName.entry(d.seq), seq: d.seq, position: e.position, raw: hide ? null : (d.raw as string), ...(hide ? { withheld: WITHHELD_NOTE } : {}) } satisfies EntryMember);
          if (typeof d.receipt_id === 'string') named.push({ seq: d.seq, id: d.receipt_id });
        } else if (e.type === 'EndpointCommitmentRecorded' && typeof d.id === 'string') {
          const doc = parseStoredJson(d.raw);
          const witness = isObject(doc) && has(doc, 'witness') && !has(doc, 'job_id') ? doc.witness : null;
          chunk += w.member({
            member: memberName.commitment(d.id),
            id: d.id,
            position: e.position,
            raw: d.raw as string,
            attestation: { binding: d.binding === true, reasons: (d.reasons as string[]) ?? [], entry_count_at_record: d.entry_count_at_record as number, witness },
          } satisfies CommitmentMember);
        } else if (e.type === 'TimelineImported') {
          yield chunk + (await this.namedReceipts(w, jobId, named, upTo, viewer, corrections));
          chunk = '';
          named = [];
          // An import is one event: its entries come from the read model, page by page (the verifier checks each against the event).
          let seq = 0;
          for (;;) {
            const rows = await this.timelines.entryPageAt(this.db, jobId, e.position, seq, PACK_PAGE);
            if (rows.length === 0) break;
            seq = rows[rows.length - 1].seq;
            let part = '';
            for (const row of rows) part += w.member({ member: memberName.entry(row.seq), seq: row.seq, position: e.position, raw: hide ? null : row.raw, ...(hide ? { withheld: WITHHELD_NOTE } : {}) } satisfies EntryMember);
            yield part + (await this.namedReceipts(w, jobId, rows.flatMap((x) => (x.receipt_id ? [{ seq: x.seq, id: x.receipt_id }] : [])), upTo, viewer, corrections)) + (await this.headsOf.get(w)!.drain());
          }
        }
      }
      // The stream names of a page are signed as soon as a batch is full: memory is one batch, never the job's.
      yield chunk + (await this.namedReceipts(w, jobId, named, upTo, viewer, corrections)) + (await this.headsOf.get(w)!.drain());
    }
  }

  /** The receipts a page of entries names for the first time in the job (see {@link timeline}). */
  private async namedReceipts(w: PackWriter, jobId: string, named: { seq: number; id: string }[], upTo: number, viewer: Principal, corrections: Set<string>): Promise<string> {
    if (named.length === 0) return '';
    const earlier = await this.timelines.receiptIdsNamedBefore(this.db, jobId, named[0].seq, [...new Set(named.map((n) => n.id))]);
    const fresh = new Set<string>();
    for (const n of named) if (!earlier.has(n.id)) fresh.add(n.id.toLowerCase());
    const ids = [...fresh].filter((x) => !corrections.has(x));
    return ids.length ? this.receipts(w, ids, upTo, viewer, new Set(ids), { jobId, corrections }) : '';
  }

  /**
   * `receipt/<id>` members (with their events: recorded, corrected) for a
   * page of ids, following corrections (S9). `emitted` holds the ids already
   * written (the page's own among them). For a job, a correction is written
   * once (`corrections`), and not at all when an entry of the job names it
   * (the entry walk writes it).
   */
  private async receipts(w: PackWriter, ids: string[], upTo: number, viewer: Principal, emitted: Set<string>, job: { jobId: string; corrections: Set<string> } | null): Promise<string> {
    let out = '';
    let todo = ids;
    while (todo.length > 0) {
      const evs = await this.events.ofStreams(this.db, todo.map((x) => streams.receipt(x)), upTo);
      out += await this.packEvents.members(w, evs, upTo, viewer);
      const withheld = mayReadWithheld(viewer) ? new Set<number>() : await this.events.withheldAmong(this.db, evs.map((e) => e.position));
      let next: string[] = [];
      const recorded = new Set(evs.filter((e) => e.type === 'ReceiptRecorded').map((e) => e.stream_id.slice('receipt:'.length)));
      for (const x of todo) this.headsOf.get(w)?.add(streams.receipt(x));
      for (const x of todo) if (!recorded.has(x)) out += w.member({ member: memberName.receipt(x), id: x, position: null, raw: null, recorded: false } satisfies ReceiptMember);
      const gone = await this.packEvents.erasedOf(evs);
      for (const e of evs) {
        const d = parseStoredJson(e.data);
        const g = gone.get(e.position);
        if (g && e.type === 'ReceiptRecorded' && typeof g.kept.id === 'string') {
          out += w.member({ member: memberName.receipt(g.kept.id.toLowerCase()), id: g.kept.id.toLowerCase(), position: e.position, raw: null, erased: g.erased } as unknown as ReceiptMember);
          continue;
        }
        if (!isObject(d)) continue;
        if (e.type === 'ReceiptRecorded' && typeof d.id === 'string') {
          const hide = withheld.has(e.position);
          out += w.member({ member: memberName.receipt(d.id.toLowerCase()), id: d.id.toLowerCase(), position: e.position, raw: hide ? null : (d.raw as string), ...(hide ? { withheld: WITHHELD_NOTE } : {}) } satisfies ReceiptMember);
        } else if (e.type === 'ReceiptCorrected' && typeof d.superseded_by === 'string') {
          const c = d.superseded_by.toLowerCase();
          if (!emitted.has(c) && !job?.corrections.has(c)) next.push(c);
        }
      }
      next = [...new Set(next)];
      if (job && next.length) {
        const byEntries = await this.timelines.receiptIdsNamedBefore(this.db, job.jobId, null, next);
        const lowered = new Set([...byEntries].map((x) => x.toLowerCase()));
        next = next.filter((x) => !lowered.has(x));
        for (const x of next) job.corrections.add(x);
      }
      for (const x of next) emitted.add(x);
      todo = next;
    }
    return out;
  }

  /**
   * The outcome reports (issue 18) answering a page of receipt ids
   * (lowercase) recorded at or below `asOf`: each `OutcomeReported` event
   * (its inclusion proof against the checkpoint of `size` leaves),
   * then its `outcome/<id>` member, a page of outcomes at a time. An outcome
   * stream holds that one event (a later observation is a new outcome), so
   * an outcome has no other event to carry.
   */
  private async *outcomesOf(w: PackWriter, subject: PlanSubject, receiptIds: string[], asOf: number, size: number, viewer: Principal): AsyncGenerator<string> {
    // Only the outcomes naming the subject (issue 26): another job's outcome of a shared receipt is not this one's.
    // The answer set of every receipt named (src/core/ledger/answer-sets.ts): the statement claims it whole.
    for (const x of receiptIds) this.headsOf.get(w)?.add(answersStreamId(x, subject as { kind: 'job' | 'workflow'; id: string }));
    const rows = (await this.outcomes.ofReceiptsAsOf(this.db, receiptIds, asOf)).filter((o) => outcomeNamesSubject(o.job_id, subject));
    for (let i = 0; i < rows.length; i += PACK_PAGE) {
      const evs = await this.events.ofStreams(this.db, rows.slice(i, i + PACK_PAGE).map((o) => streams.outcome(o.outcome_id)), asOf);
      let out = await this.packEvents.members(w, evs, size, viewer);
      const withheld = mayReadWithheld(viewer) ? new Set<number>() : await this.events.withheldAmong(this.db, evs.map((e) => e.position));
      const gone = await this.packEvents.erasedOf(evs);
      for (const e of evs) {
        const g = gone.get(e.position);
        if (g && e.type === 'OutcomeReported' && typeof g.kept.outcome_id === 'string' && typeof g.kept.receipt_id === 'string') {
          out += w.member({ member: memberName.outcome(g.kept.outcome_id.toLowerCase()), id: g.kept.outcome_id.toLowerCase(), receipt_id: g.kept.receipt_id.toLowerCase(), position: e.position, raw: null, erased: g.erased } as unknown as OutcomeMember);
          continue;
        }
        const d = parseStoredJson(e.data);
        if (e.type !== 'OutcomeReported' || !isObject(d) || typeof d.outcome_id !== 'string' || typeof d.receipt_id !== 'string') continue;
        const hide = withheld.has(e.position);
        const id = d.outcome_id.toLowerCase();
        out += w.member({ member: memberName.outcome(id), id, receipt_id: d.receipt_id.toLowerCase(), position: e.position, raw: hide ? null : (d.raw as string), ...(hide ? { withheld: WITHHELD_NOTE } : {}) } satisfies OutcomeMember);
      }
      yield out;
    }
  }
}
