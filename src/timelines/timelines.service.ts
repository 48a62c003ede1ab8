/**
 * Hash-chained job timelines (S7): entries appended one request at a time,
 * each checked by the core to extend the current head; complete timelines
 * recorded elsewhere imported once, stored with their verdict; reads of the
 * entries as recorded. Every stored entry keeps its exact source text.
 * Verification is timeline-verification.service.ts, commitments
 * commitments.service.ts.
 */
import { ErasedRecords, isErasedRaw } from '../erasure/erased-records';
import { Injectable } from '@nestjs/common';
import { entryDigest, EntryOutcome, has, isObject, JsonObject, TimelineVerifier, verifyTimeline } from '../core/aer1';
import { judgeAttestation } from '../core/aer1/attestation';
import { CommitmentTrustService } from '../log/commitment-trust.service';
import { LedgerError, UnprocessableError, VerificationFailedError } from '../common/errors';
import { RawJson, splitJsonArray } from '../common/raw-json';
import { assertIdentifier } from '../core/text';
import { CLOSE_MARKER_TOOL } from '../core/coverage/types';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { LedgerService, NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { EventsRepository } from '../ledger/events.repository';
import { eventData } from '../ledger/event';
import type { Principal } from '../auth/api-keys.service';
import type { RecordedBy } from '../core/ledger/event-hash';
import { assertOwner, assertProvenance, mayReadWithheld, recordedBy } from '../auth/permissions';
import { assertPlanOwner } from '../coverage/plan-owner';
import { streams } from '../ledger/streams';
import { decideAppend, decideImport, EMPTY_HEAD, headOfStored, TimelineHead } from './timelines.decider';
import { TimelineEvent, TimelineImportedData } from './timelines.events';
import { CommitmentRow, TimelineRow, TimelinesRepository } from './timelines.repository';
import { attestationView } from './dto/timelines.answers';
import { CommitmentsService } from './commitments.service';
import { parseStored, TimelineVerificationService } from './timeline-verification.service';


/** A page of `GET /api/jobs/{id}/timeline` ends after the entry that passes this many bytes of entry text (a few MB per cost-1 read). */
export const TIMELINE_PAGE_BYTES = 4 * 1024 * 1024;

/** Appends, imports and reads of job timelines. */
@Injectable()
export class TimelinesService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly timelines: TimelinesRepository,
    private readonly events: EventsRepository,
    private readonly trust: CommitmentTrustService,
    private readonly verification: TimelineVerificationService,
    private readonly commitments: CommitmentsService,
    private readonly erased: ErasedRecords,
  ) {}

  /**
   * Append one entry or an array of entries to the job's timeline (S7.2),
   * all in one transaction at the stream's current version.
   * 422 `verification_failed` (malformed entry), 422 `job_id_mismatch`,
   * 422 `reserved_tool` (an entry with the ledger's tool `aer1.job.close`), 409 `timeline_imported`, `timeline_closed`, `seq_not_contiguous`,
   * `genesis_prev_digest`, `link_mismatch`; 403 `not_owner` (the timeline
   * was started by a key of another owner), `provenance_not_permitted`,
   * `not_plan_owner` (the job's plan names another `recorded_by_owner`).
   */
  async append(jobId: string, body: RawJson, by: Principal) {
    assertIdentifier('job_id', jobId);
    const items = this.entriesOf(body);
    const checked = items.map(({ text, value }, k) => {
      const outcome = memberCheck(value);
      const where = items.length > 1 ? ` (entry ${k + 1} of the request)` : '';
      if (outcome.reasons.length > 0 || outcome.entry_digest === null || outcome.seq === null) {
        throw new VerificationFailedError(`the entry is malformed${where}; nothing was recorded`, outcome.reasons.length ? outcome.reasons : ['invalid_entry'], { index: k });
      }
      const e = value as JsonObject;
      if (e.job_id !== jobId) {
        throw new UnprocessableError('job_id_mismatch', `the entry names job ${JSON.stringify(e.job_id)}, not ${JSON.stringify(jobId)}${where}; nothing was recorded`, { reasons: ['job_id_mismatch'], index: k });
      }
      assertProvenance(by, typeof e.provenance_class === 'string' ? e.provenance_class : null, where);
      assertNotReserved(e, k, where);
      // The entry id names a receipt: an identifier (the same rule as the job id; the entry is not "invalid" for it).
      assertIdentifier(items.length > 1 ? `entries[${k}].id` : 'id', e.id as string);
      return { text, e, seq: outcome.seq, digest: outcome.entry_digest };
    });

    return this.db.write(async (tx) => {
      await assertPlanOwner(tx, jobId, by);
      const row = await this.timelines.get(tx, jobId);
      if (row) assertOwner(by, await this.events.writerAt(tx, row.first_position), `the timeline of job ${JSON.stringify(jobId)}`);
      const last = row?.source === 'append' ? await this.lastEntry(tx, jobId) : null;
      const { events, head } = decideAppend({ source: row?.source ?? null, head: last?.head ?? EMPTY_HEAD, last: last?.value }, jobId, checked, by.publication);
      // Decided on the head read in this serialized write transaction: nothing can have appended since.
      const stored = await this.ledger.append<TimelineEvent>(tx, streams.timeline(jobId), row ? NO_CONCURRENCY_CHECK : STREAM_DOES_NOT_EXIST, events, recordedBy(by));
      // Closed by this request: the chain extends a -07 head to a close, so it verifies; the ledger commits to its endpoint.
      const issued = head.closed ? await this.commitments.issueLedgerCommitment(tx, jobId, { entry_count: head.seq, final_entry_digest: head.digest }, stored[stored.length - 1].recorded_at, by) : null;
      return {
        job_id: jobId,
        appended: stored.map((ev, k) => ({ seq: events[k].data.seq, entry_digest: events[k].data.entry_digest, position: ev.position })),
        head: { seq: head.seq, entry_digest: head.digest, closed: head.closed },
        ...(head.closed ? { ledger_commitment: issued } : {}),
        url: this.urls.job(jobId),
        verify_url: this.urls.jobVerify(jobId),
      };
    });
  }

  /** The entries of an append request with their exact texts: one object, or each element of an array. */
  private entriesOf(body: RawJson): { text: string; value: unknown }[] {
    if (!Array.isArray(body.value)) return [{ text: body.text.trim(), value: body.value }];
    const texts = splitJsonArray(body.text);
    if (texts === null || texts.length !== body.value.length) throw new UnprocessableError('malformed_array', 'the array of entries could not be split into its elements');
    if (texts.length === 0) throw new UnprocessableError('no_entries', 'the request holds no entries');
    return texts.map((text, k) => ({ text, value: (body.value as unknown[])[k] }));
  }

  /** The last entry of an appended timeline and the head recomputed from its stored text (null when it has none). */
  private async lastEntry(q: Queryable, jobId: string): Promise<{ head: TimelineHead; value: JsonObject } | null> {
    const last = await this.timelines.lastEntry(q, jobId);
    return last ? headOfStored(jobId, last) : null;
  }

  /**
   * Import a complete timeline recorded elsewhere (a JSON array). `valid`
   * and `historical` (-06) timelines are stored with their verdict;
   * `invalid` is 422 with reasons and nothing stored; an entry with the
   * ledger's tool `aer1.job.close` is 422 `reserved_tool`. The same body again
   * is 200 with the same record; anything else for an existing job is 409
   * `timeline_exists`; 403 `provenance_not_permitted` for an entry whose
   * provenance the key may not claim, `not_plan_owner` when the job's plan
   * names another `recorded_by_owner`.
   */
  async import(jobId: string, body: RawJson & { entries?: string[] }, by: Principal): Promise<{ outcome: 'created' | 'existing' } & Record<string, unknown>> {
    assertIdentifier('job_id', jobId);
    const result = verifyTimeline(body.value, { collectEntries: false });
    if (result.verdict !== 'valid' && result.verdict !== 'historical') {
      throw new VerificationFailedError('the timeline does not verify; nothing was recorded', result.reasons, { checks: result.checks.filter((c) => c.ok === false) });
    }
    const values = body.value as JsonObject[];
    const foreign = values.findIndex((e) => e.job_id !== jobId);
    if (foreign >= 0) {
      throw new UnprocessableError('job_id_mismatch', `entry ${foreign + 1} names job ${JSON.stringify(values[foreign].job_id)}, not ${JSON.stringify(jobId)}; nothing was recorded`, { reasons: ['job_id_mismatch'] });
    }
    values.forEach((e, k) => {
      assertNotReserved(e, k, ` (entry ${k + 1})`);
      if (typeof e.id === 'string') assertIdentifier(`entries[${k}].id`, e.id);
    });
    // NDJSON (`entries`: the lines' exact texts) or the elements of the JSON array.
    const format = body.entries ? ('ndjson' as const) : undefined;
    const texts = body.entries ?? splitJsonArray(body.text);
    if (texts === null || texts.length !== values.length) throw new UnprocessableError('malformed_array', 'the timeline could not be split into its entries');
    values.forEach((e, k) => assertProvenance(by, typeof e.provenance_class === 'string' ? e.provenance_class : null, ` (entry ${k + 1})`));

    return this.db.write(async (tx) => {
      await assertPlanOwner(tx, jobId, by);
      const stream = streams.timeline(jobId);
      const row = await this.timelines.get(tx, jobId);
      const imported = row?.source === 'import' ? await this.events.firstData(tx, stream, 'TimelineImported') : null;
      const data: TimelineImportedData = {
        job_id: jobId,
        raw: body.text,
        ...(format ? { format } : {}),
        verdict: result.verdict,
        reasons: result.reasons,
        construction: result.construction,
        entry_count: result.entry_count,
        final_entry_digest: result.final_entry_digest,
        publication: by.publication,
      };
      const decision = decideImport({ source: row?.source ?? null, imported_raw: imported === null ? null : eventData<TimelineEvent, 'TimelineImported'>('TimelineImported', imported).raw }, data);
      if ('existing' in decision) return { outcome: 'existing' as const, ...this.importAnswer(row!) };
      // No timeline row in the read model this transaction keeps: the stream does not exist.
      const [ev] = await this.ledger.append<TimelineEvent>(tx, stream, STREAM_DOES_NOT_EXIST, decision.events, recordedBy(by));
      // A -07 timeline imported closed and valid: the ledger commits to the endpoint it recorded (historical ones cannot be bound).
      const issued = result.verdict === 'valid' && result.closed && result.final_entry_digest !== null
        ? await this.commitments.issueLedgerCommitment(tx, jobId, { entry_count: result.entry_count, final_entry_digest: result.final_entry_digest }, ev.recorded_at, by)
        : null;
      const stored = (await this.timelines.get(tx, jobId))!;
      return { outcome: 'created' as const, ...this.importAnswer(stored), ledger_commitment: issued };
    });
  }

  private importAnswer(row: TimelineRow) {
    return {
      job_id: row.job_id,
      source: row.source,
      verdict: row.verdict,
      historical: row.verdict === 'historical',
      ...(row.verdict === 'historical'
        ? { label: 'HISTORICAL: links follow the -06 construction (S7.4); this timeline does not verify as current -07 and can never be bound by an endpoint commitment' }
        : {}),
      reasons: row.reasons,
      construction: row.construction,
      entry_count: row.entry_count,
      final_entry_digest: row.head_digest,
      closed: row.closed,
      position: row.first_position,
      url: this.urls.job(row.job_id),
      verify_url: this.urls.jobVerify(row.job_id),
    };
  }

  /**
   * GET /api/jobs/:job_id/export: the entries exactly as recorded, one per
   * line (NDJSON), what `aer1 verify --kind chain` reads as is. A recorded
   * text that spans lines has its line breaks (JSON white space, never
   * inside a string) written as spaces, so each entry stays one line; the
   * entry's value and digest are unchanged. 404 `not_found`; 403
   * `canonical_bytes_withheld` when an entry was recorded under a
   * `metadata` publication and `viewer` is not an auditor or admin. The
   * checks run before the first line is produced.
   */
  async exportLines(jobId: string, viewer: Principal | null): Promise<AsyncGenerator<string>> {
    await this.verification.get(jobId);
    const mayRead = mayReadWithheld(viewer);
    if (!mayRead && (await this.timelines.hasMetadataEntries(this.db, jobId))) {
      throw new LedgerError(403, 'canonical_bytes_withheld', 'entries of this timeline were recorded under a `metadata` publication setting: their canonical bytes are served to auditor and admin keys only (S13)');
    }
    const rows = this.verification.entryRows(this.db, jobId);
    return (async function* () {
      for await (const r of rows) yield r.raw.replace(/\r\n|\r|\n/g, ' ') + '\n';
    })();
  }

  /**
   * GET /api/jobs/:job_id/timeline: the summary and the entries in order
   * (parsed from the stored texts, each with its recomputed digest), paged
   * by `after` (a seq) and `limit`. `entries_recorded_by` lists, as runs of
   * seqs, the key that recorded the page's entries (null before attribution),
   * so each entry stays exactly as recorded; each commitment names its key in
   * `recorded_by`. An entry
   * recorded under a `metadata` publication setting has its
   * `canonical_bytes` withheld (`"canonical_bytes_withheld": true`) unless
   * `viewer` is an auditor or admin; its digest is still recomputed here.
   * An erased entry (issue 29) is `{seq, job_id, id, tool, provenance_class,
   * close, entry_digest: null, erased: true, position, erasure}`; an erased
   * commitment has `commitment: null`, `erased: true` and `erasure`.
   */
  async timeline(jobId: string, after = 0, limit = 1000, viewer: Principal | null = null) {
    const row = await this.verification.get(jobId);
    const entries: Record<string, unknown>[] = [];
    const positions: number[] = [];
    const seqs: number[] = [];
    let lastSeq = after;
    const mayRead = mayReadWithheld(viewer);
    let bytes = 0;
    const erasedAt: number[] = [];
    for await (const r of this.verification.entryRows(this.db, jobId, after, limit)) {
      if (isErasedRaw(r.raw)) erasedAt.push(r.position);
      // Issue 29: an erased entry is shown by what the ledger still holds of it, marked `erased` (its erasure below).
      const value = isErasedRaw(r.raw) ? null : parseStored(r.raw);
      const shown: Record<string, unknown> =
        value === null
          ? { seq: r.seq, job_id: r.job_id, id: r.receipt_id, tool: r.tool, provenance_class: r.provenance_class, close: r.close, entry_digest: null, erased: true, position: r.position }
          : { ...(isObject(value) ? value : { value }), entry_digest: entryDigest(value) };
      if (r.publication === 'metadata' && !mayRead && has(shown, 'canonical_bytes')) {
        delete shown.canonical_bytes;
        shown.canonical_bytes_withheld = true;
      }
      entries.push(shown);
      positions.push(r.position);
      seqs.push(r.seq);
      lastSeq = r.seq;
      bytes += r.raw.length;
      if (bytes >= TIMELINE_PAGE_BYTES) break; // bounded in bytes as well as in count: `next_after` continues
    }
    const commitments = await this.timelines.commitments(this.db, jobId);
    const by = await this.events.recordedByAt(this.db, [...positions, ...commitments.map((c) => c.position)]);
    const notices = await this.erased.ofPositions([...erasedAt, ...commitments.filter((c) => isErasedRaw(c.raw)).map((c) => c.position)]);
    for (const e of entries) if (e.erased === true) e.erasure = notices.get(e.position as number) ?? null;
    const attestationOf = (c: CommitmentRow) => {
      const poster = by.get(c.position)?.name ?? null;
      return attestationView(judgeAttestation(c.raw, c.attestation, this.trust.trust, poster), poster, c.attestation?.note ?? null);
    };
    const entriesRecordedBy: { first_seq: number; last_seq: number; recorded_by: RecordedBy | null }[] = [];
    positions.forEach((p, k) => {
      const who = by.get(p) ?? null;
      const run = entriesRecordedBy[entriesRecordedBy.length - 1];
      if (run && run.recorded_by?.key_id === who?.key_id && run.last_seq === seqs[k] - 1) run.last_seq = seqs[k];
      else entriesRecordedBy.push({ first_seq: seqs[k], last_seq: seqs[k], recorded_by: who });
    });
    return {
      job_id: jobId,
      source: row.source,
      verdict_at_record: row.verdict,
      historical: row.verdict === 'historical',
      reasons_at_record: row.reasons,
      construction: row.construction,
      entry_count: row.entry_count,
      head: { seq: row.entry_count, entry_digest: row.head_digest, closed: row.closed },
      entries,
      entries_recorded_by: entriesRecordedBy,
      next_after: lastSeq < row.entry_count && entries.length > 0 ? lastSeq : null,
      commitments: commitments.map((c) => ({ id: c.id, commitment: isErasedRaw(c.raw) ? null : parseStored(c.raw), ...(isErasedRaw(c.raw) ? { erased: true, erasure: notices.get(c.position) ?? null } : {}), binding_at_record: c.binding, reasons_at_record: c.reasons, entry_count_at_record: c.entry_count_at_record, recorded_at: c.recorded_at, recorded_by: by.get(c.position) ?? null, issued_by: c.issued_by ?? 'client', attestation: attestationOf(c) })),
      url: this.urls.job(jobId),
      verify_url: this.urls.jobVerify(jobId),
    };
  }
}

/**
 * 422 `reserved_tool` for an entry whose tool is the ledger's closing marker
 * ({@link CLOSE_MARKER_TOOL}): only the ledger's own close writes it, so a
 * producer cannot hide an action as a close (docs/coverage.md).
 */
function assertNotReserved(e: JsonObject, index: number, where: string): void {
  if (e.tool !== CLOSE_MARKER_TOOL) return;
  throw new UnprocessableError('reserved_tool', `the tool ${JSON.stringify(CLOSE_MARKER_TOOL)} is reserved for the ledger's closing marker${where}: close with \`close: true\` on the last entry or POST /api/jobs/{id}/close; nothing was recorded`, { reasons: ['reserved_tool'], index });
}

/** Member and format checks of one entry alone (S7.1/S7.2), by the core. */
function memberCheck(value: unknown): EntryOutcome {
  const v = new TimelineVerifier({ collectEntries: true });
  v.push(value);
  return v.finish().entries![0];
}
