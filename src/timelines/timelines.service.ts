import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  AssessedCommitment,
  assessCommitments,
  Check,
  checkCommitment,
  CommitmentFinding,
  commitmentFormatProblems,
  CommitmentOutcome,
  CommitmentsAssessment,
  CommitmentsStatus,
  decidingCommitment,
  earlierCounts,
  entryDigest,
  EntryOutcome,
  has,
  isObject,
  isRfc3339,
  JsonObject,
  TimelineResult,
  TimelineVerifier,
  verifyTimeline,
  ZERO_DIGEST,
} from '../core/aer1';
import { commitmentTextProblems } from '../core/aer1/commitment-text';
import { ConflictError, NotFoundError, UnprocessableError, VerificationFailedError } from '../common/errors';
import { parseRawJson, RawJson, splitJsonArray } from '../common/raw-json';
import { assertIdentifier, httpUrlProblem } from '../core/text';
import { PublicUrls } from '../common/urls';
import { DatabaseService, Tx } from '../database/database.service';
import { LedgerService, recordedByAt, writerAt } from '../ledger/ledger.service';
import type { Principal } from '../auth/api-keys.service';
import type { RecordedBy } from '../core/ledger/event-hash';
import { assertOwner, assertProvenance, recordedBy } from '../auth/permissions';
import { streams } from '../ledger/streams';
import { EndpointCommitmentRecordedData, TimelineEntryAppendedData, TimelineImportedData } from './timelines.projection';

/** Anything that runs `?`-placeholder SQL: the database outside a write, or a write transaction. */
type Queryable = Pick<Tx, 'query'>;

/** A row of the `timelines` read model. */
export interface TimelineRow {
  job_id: string;
  /** `append` (built entry by entry here) or `import` (a complete timeline recorded elsewhere). */
  source: 'append' | 'import';
  entry_count: number;
  head_digest: string | null;
  closed: boolean;
  verdict: string;
  reasons: string[];
  construction: string | null;
  first_position: number;
  last_position: number;
}

/** A row of the `timeline_entries` read model. */
export interface TimelineEntryRow {
  job_id: string;
  seq: number;
  raw: string;
  entry_digest: string | null;
  receipt_id: string | null;
  tool: string | null;
  provenance_class: string | null;
  close: boolean;
  position: number;
  /** `full` or `metadata` (canonical bytes served to auditors only), fixed when recorded. */
  publication: string;
}

/** A row of the `commitments` read model. */
export interface CommitmentRow {
  id: string;
  job_id: string;
  raw: string;
  binding: boolean;
  reasons: string[];
  entry_count_at_record: number;
  position: number;
  recorded_at: string;
}

/** The commitment part of a verification report: the deciding commitment (the first that contradicts the timeline, else the latest binding one, else the latest). */
export interface CommitmentStatus {
  /** `binding` only when truncation is excluded: some commitment binds and none contradicts. */
  status: 'binding' | 'non_binding' | 'absent';
  /** What the deciding commitment itself shows (see `commitments`); null when none is recorded. */
  outcome: CommitmentOutcome | null;
  reasons: string[];
  id: string | null;
  /** The commitment as received (parsed from the stored text). */
  commitment: unknown;
  witness: Record<string, unknown> | null;
  recorded_at: string | null;
  checks: Check[];
  /** How many commitments are recorded for the job. */
  recorded: number;
}

/** One recorded commitment as the verifier judged it, with every other one (src/aer1/commitments.ts). */
export interface CommitmentVerification {
  id: string;
  recorded_at: string;
  position: number;
  outcome: CommitmentOutcome;
  binding: boolean;
  /** True when it proves truncation or a substituted entry: no other commitment hides that. */
  contradicts: boolean;
  missing_entries: number | null;
  detail: string;
  reasons: string[];
  commitment: unknown;
  witness: Record<string, unknown> | null;
}

/** GET /api/jobs/:job_id/verify. */
export interface TimelineVerification {
  job_id: string;
  source: string;
  verdict: string;
  historical: boolean;
  reasons: string[];
  checks: Check[];
  construction: string | null;
  entry_count: number;
  final_entry_digest: string | null;
  closed: boolean;
  provenance: Record<string, number>;
  commitment: CommitmentStatus;
  /** All recorded commitments judged together: `binding`, the first contradiction (`truncation_detected`, `final_entry_substituted`, `entry_substituted`), `non_binding` or `absent`. */
  commitment_assessment: CommitmentsStatus;
  /** Every recorded commitment, in record order, with its outcome. */
  commitments: CommitmentVerification[];
  /** One per commitment that contradicts the visible timeline. */
  findings: CommitmentFinding[];
  /** True only when some commitment binds and none contradicts. */
  truncation_excluded: boolean;
  statement: string;
  limits: string[];
  url: string;
}

export const NOT_EXCLUDED = 'Truncation is not excluded: no binding endpoint commitment (S7.3)';

const PAGE = 2000;

/**
 * Hash-chained job timelines (S7) and endpoint commitments (rev 09).
 *
 * Entries are appended one request at a time, each checked by the core to
 * extend the current head; complete timelines recorded elsewhere can be
 * imported once, stored with their verdict. Every stored entry keeps its
 * exact source text; every verification recomputes from those texts.
 */
@Injectable()
export class TimelinesService {
  /** Chain results of closed timelines (they never change): computed once per job and last position. */
  readonly closedChains = new ClosedChainCache();

  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
  ) {}

  // ---------------------------------------------------------------- append

  /**
   * Append one entry or an array of entries to the job's timeline (S7.2),
   * all in one transaction at the stream's current version.
   * 422 `verification_failed` (malformed entry), 422 `job_id_mismatch`,
   * 409 `timeline_imported`, `timeline_closed`, `seq_not_contiguous`,
   * `genesis_prev_digest`, `link_mismatch`; 403 `not_owner` (the timeline
   * was started by a key of another owner), `provenance_not_permitted`.
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
      // The entry id names a receipt: an identifier (the same rule as the job id; the entry is not "invalid" for it).
      assertIdentifier(items.length > 1 ? `entries[${k}].id` : 'id', e.id as string);
      return { text, e, seq: outcome.seq, digest: outcome.entry_digest };
    });

    return this.db.write(async (tx) => {
      const stream = streams.timeline(jobId);
      const version = await this.ledger.streamVersion(tx, stream);
      const row = await this.timelineRow(tx, jobId);
      if (row) assertOwner(by, await writerAt(tx, row.first_position), `the timeline of job ${JSON.stringify(jobId)}`);
      if (row?.source === 'import') {
        throw new ConflictError('timeline_imported', `the timeline of job ${jobId} was imported complete; it cannot be extended`, { reasons: ['timeline_imported'], job_id: jobId });
      }
      let head = row ? await this.headOf(tx, jobId) : { seq: 0, digest: ZERO_DIGEST, closed: false };
      const events: { type: string; data: TimelineEntryAppendedData }[] = [];
      for (let k = 0; k < checked.length; k++) {
        const { text, e, seq, digest } = checked[k];
        const where = checked.length > 1 ? ` (entry ${k + 1} of the request)` : '';
        const details = { job_id: jobId, index: k, head: { seq: head.seq, entry_digest: head.seq === 0 ? null : head.digest, closed: head.closed } };
        if (head.closed) throw new ConflictError('timeline_closed', `job ${jobId} is closed at seq ${head.seq}: nothing follows a closing entry (S7.2)${where}`, { reasons: ['timeline_closed'], ...details });
        if (seq !== head.seq + 1) {
          throw new ConflictError('seq_not_contiguous', `seq ${seq} does not extend the head: expected ${head.seq + 1}${where}`, { reasons: ['seq_not_contiguous'], expected_seq: head.seq + 1, ...details });
        }
        if (e.prev_digest !== head.digest) {
          const code = head.seq === 0 ? 'genesis_prev_digest' : 'link_mismatch';
          const msg = head.seq === 0 ? 'the first entry must carry 64 zeros as prev_digest (S7.2)' : `prev_digest must be the recomputed digest of entry ${head.seq}: ${head.digest}`;
          throw new ConflictError(code, `${msg}${where}`, { reasons: [code], expected_prev_digest: head.digest, ...details });
        }
        const close = e.close === true;
        events.push({
          type: 'TimelineEntryAppended',
          data: { job_id: jobId, seq, raw: text, entry_digest: digest, receipt_id: e.id as string, tool: e.tool as string, provenance_class: e.provenance_class as string, close, publication: by.publication },
        });
        head = { seq, digest, closed: close };
      }
      const stored = await this.ledger.append(tx, stream, version, events, recordedBy(by));
      return {
        job_id: jobId,
        appended: stored.map((ev, k) => ({ seq: events[k].data.seq, entry_digest: events[k].data.entry_digest, position: ev.position })),
        head: { seq: head.seq, entry_digest: head.digest, closed: head.closed },
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

  /** The head of an appended timeline, recomputed from the stored text of its last entry. */
  private async headOf(tx: Queryable, jobId: string): Promise<{ seq: number; digest: string; closed: boolean }> {
    const last = (await tx.query<{ seq: number | string; raw: string }>('SELECT seq, raw FROM timeline_entries WHERE job_id = ? ORDER BY seq DESC LIMIT 1', [jobId]))[0];
    if (!last) return { seq: 0, digest: ZERO_DIGEST, closed: false };
    const value = JSON.parse(last.raw) as JsonObject;
    const digest = entryDigest(value);
    if (digest === null) throw new Error(`stored head entry of job ${jobId} does not recompute`);
    return { seq: Number(last.seq), digest, closed: value.close === true };
  }

  // ---------------------------------------------------------------- import

  /**
   * Import a complete timeline recorded elsewhere (a JSON array). `valid`
   * and `historical` (-06) timelines are stored with their verdict;
   * `invalid` is 422 with reasons and nothing stored. The same body again
   * is 200 with the same record; anything else for an existing job is 409
   * `timeline_exists`; 403 `provenance_not_permitted` for an entry whose
   * provenance the key may not claim.
   */
  async import(jobId: string, body: RawJson, by: Principal): Promise<{ outcome: 'created' | 'existing' } & Record<string, unknown>> {
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
      if (typeof e.id === 'string') assertIdentifier(`entries[${k}].id`, e.id);
    });
    const texts = splitJsonArray(body.text);
    if (texts === null || texts.length !== values.length) throw new UnprocessableError('malformed_array', 'the timeline could not be split into its entries');
    values.forEach((e, k) => assertProvenance(by, typeof e.provenance_class === 'string' ? e.provenance_class : null, ` (entry ${k + 1})`));

    return this.db.write(async (tx) => {
      const stream = streams.timeline(jobId);
      const row = await this.timelineRow(tx, jobId);
      if (row) {
        if (row.source === 'import') {
          const ev = (await tx.query<{ data: string }>("SELECT data FROM events WHERE stream_id = ? AND type = 'TimelineImported' ORDER BY stream_position LIMIT 1", [stream]))[0];
          if (ev && (JSON.parse(ev.data) as TimelineImportedData).raw === body.text) return { outcome: 'existing' as const, ...this.importAnswer(row) };
        }
        throw new ConflictError('timeline_exists', `job ${jobId} already has a timeline (${row.source === 'import' ? 'imported with different bytes' : 'built by appends'}); records are never altered`, { reasons: ['timeline_exists'], job_id: jobId });
      }
      const version = await this.ledger.streamVersion(tx, stream);
      const data: TimelineImportedData = {
        job_id: jobId,
        raw: body.text,
        verdict: result.verdict,
        reasons: result.reasons,
        construction: result.construction,
        entry_count: result.entry_count,
        final_entry_digest: result.final_entry_digest,
        publication: by.publication,
      };
      await this.ledger.append(tx, stream, version, [{ type: 'TimelineImported', data }], recordedBy(by));
      const stored = (await this.timelineRow(tx, jobId))!;
      return { outcome: 'created' as const, ...this.importAnswer(stored) };
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

  // ---------------------------------------------------------------- commitments

  /**
   * Record an endpoint commitment `{job_id, final_entry_digest, entry_count,
   * published_at}` (witness metadata kept as received), compared with the
   * visible timeline at this moment. A non-binding commitment is recorded
   * too: it is evidence. The answer also judges every commitment recorded
   * for the job together (`commitment_assessment`, `truncation_excluded`,
   * `findings`, as GET .../verify). 422 `invalid_commitment`; 404 unknown
   * job; 403 `not_owner` when the timeline was started by a key of another owner.
   * The same text again for the same job is answered with the existing record.
   */
  async recordCommitment(jobId: string, body: RawJson, by: Principal) {
    assertIdentifier('job_id', jobId);
    if (isObject(body.value) && typeof body.value.job_id === 'string' && body.value.job_id.length > 0) assertIdentifier('commitment job_id', body.value.job_id);
    const problems = [...commitmentFormatProblems(body.value), ...witnessProblems(body.value), ...commitmentTextProblems(body.text)];
    if (problems.length > 0) throw new UnprocessableError('invalid_commitment', `the commitment is malformed: ${problems.join('; ')}`, { reasons: ['invalid_commitment'], problems });
    const text = body.text.trim();
    return this.db.write(async (tx) => {
      const row = await this.timelineRow(tx, jobId);
      if (!row) throw new NotFoundError('job', jobId);
      assertOwner(by, await writerAt(tx, row.first_position), `the timeline of job ${JSON.stringify(jobId)}`);
      const timeline = await this.verifyEntries(tx, jobId);
      const check = checkCommitment(timeline, body.value);
      const same = (await tx.query<{ id: string }>('SELECT id FROM commitments WHERE job_id = ? AND raw = ? ORDER BY position LIMIT 1', [jobId, text]))[0];
      let id = same?.id;
      if (!id) {
        id = randomUUID();
        const data: EndpointCommitmentRecordedData = { id, job_id: jobId, raw: text, binding: check.binding, reasons: check.reasons, entry_count_at_record: timeline.entry_count };
        const stream = streams.timeline(jobId);
        await this.ledger.append(tx, stream, await this.ledger.streamVersion(tx, stream), [{ type: 'EndpointCommitmentRecorded', data }], recordedBy(by));
      }
      // This commitment alone may bind; judged with every one recorded, truncation may still not be excluded.
      const { assessment } = await this.assess(tx, jobId, timeline);
      return {
        outcome: same ? ('existing' as const) : ('created' as const),
        id,
        job_id: jobId,
        binding: check.binding,
        reasons: check.reasons,
        checks: check.checks,
        witness: check.witness,
        computed: check.computed,
        commitment_assessment: assessment.status,
        truncation_excluded: assessment.truncation_excluded,
        findings: assessment.findings,
        url: this.urls.job(jobId),
        verify_url: this.urls.jobVerify(jobId),
      };
    });
  }

  // ---------------------------------------------------------------- reads

  private async timelineRow(q: Queryable, jobId: string): Promise<TimelineRow | null> {
    const r = (await q.query<Record<string, unknown>>('SELECT * FROM timelines WHERE job_id = ?', [jobId]))[0];
    if (!r) return null;
    return {
      job_id: r.job_id as string,
      source: r.source as 'append' | 'import',
      entry_count: Number(r.entry_count),
      head_digest: (r.head_digest as string | null) ?? null,
      closed: Number(r.closed) === 1,
      verdict: r.verdict as string,
      reasons: JSON.parse(r.reasons as string) as string[],
      construction: (r.construction as string | null) ?? null,
      first_position: Number(r.first_position),
      last_position: Number(r.last_position),
    };
  }

  /** The timeline row, or 404. */
  async get(jobId: string): Promise<TimelineRow> {
    const row = await this.timelineRow(this.db, jobId);
    if (!row) throw new NotFoundError('job', jobId);
    return row;
  }

  /** Pages of stored entries in seq order (constant memory in the timeline length). */
  private async *entryRows(q: Queryable, jobId: string, after = 0, limit = Number.MAX_SAFE_INTEGER): AsyncGenerator<TimelineEntryRow> {
    let last = after;
    let left = limit;
    while (left > 0) {
      const n = Math.min(PAGE, left);
      const rows = await q.query<Record<string, unknown>>('SELECT * FROM timeline_entries WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?', [jobId, last, n]);
      for (const r of rows) {
        yield {
          job_id: r.job_id as string,
          seq: Number(r.seq),
          raw: r.raw as string,
          entry_digest: (r.entry_digest as string | null) ?? null,
          receipt_id: (r.receipt_id as string | null) ?? null,
          tool: (r.tool as string | null) ?? null,
          provenance_class: (r.provenance_class as string | null) ?? null,
          close: Number(r.close) === 1,
          position: Number(r.position),
          publication: (r.publication as string | undefined) ?? 'full',
        };
      }
      if (rows.length < n) return;
      left -= rows.length;
      last = Number(rows[rows.length - 1].seq);
    }
  }

  /**
   * Re-verify the stored entries with the core, fed from their stored texts (never the stored verdict). A closed
   * timeline (its last entry closes it, or it was imported whole) can never change, so its chain result is
   * computed once and kept, keyed by job and last position (see {@link ClosedChainCache}); an open one is
   * re-verified on every call. The result is shared: callers must not modify it.
   */
  private async verifyEntries(q: Queryable, jobId: string): Promise<TimelineResult> {
    const row = await this.timelineRow(q, jobId);
    const key = row && (row.closed || row.source === 'import') ? `${row.last_position}:${row.entry_count}:${jobId}` : null;
    const kept = key === null ? undefined : this.closedChains.get(key);
    if (kept) return kept;
    const v = new TimelineVerifier();
    for await (const r of this.entryRows(q, jobId)) v.push(parseStored(r.raw));
    const result = v.finish();
    if (key !== null) this.closedChains.set(key, result);
    return result;
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
   */
  async timeline(jobId: string, after = 0, limit = 1000, viewer: Principal | null = null) {
    const row = await this.get(jobId);
    const entries: Record<string, unknown>[] = [];
    const positions: number[] = [];
    const seqs: number[] = [];
    let lastSeq = after;
    const mayRead = viewer !== null && (viewer.role === 'auditor' || viewer.role === 'admin');
    for await (const r of this.entryRows(this.db, jobId, after, limit)) {
      const value = parseStored(r.raw);
      const shown: Record<string, unknown> = { ...(isObject(value) ? value : { value }), entry_digest: entryDigest(value) };
      if (r.publication === 'metadata' && !mayRead && has(shown, 'canonical_bytes')) {
        delete shown.canonical_bytes;
        shown.canonical_bytes_withheld = true;
      }
      entries.push(shown);
      positions.push(r.position);
      seqs.push(r.seq);
      lastSeq = r.seq;
    }
    const commitments = await this.commitmentRows(this.db, jobId);
    const by = await recordedByAt(this.db, [...positions, ...commitments.map((c) => c.position)]);
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
      commitments: commitments.map((c) => ({ id: c.id, commitment: parseStored(c.raw), binding_at_record: c.binding, reasons_at_record: c.reasons, entry_count_at_record: c.entry_count_at_record, recorded_at: c.recorded_at, recorded_by: by.get(c.position) ?? null })),
      url: this.urls.job(jobId),
      verify_url: this.urls.jobVerify(jobId),
    };
  }

  private async commitmentRows(q: Queryable, jobId: string): Promise<CommitmentRow[]> {
    const rows = await q.query<Record<string, unknown>>('SELECT * FROM commitments WHERE job_id = ? ORDER BY position', [jobId]);
    return rows.map((r) => ({
      id: r.id as string,
      job_id: r.job_id as string,
      raw: r.raw as string,
      binding: Number(r.binding) === 1,
      reasons: JSON.parse(r.reasons as string) as string[],
      entry_count_at_record: Number(r.entry_count_at_record),
      position: Number(r.position),
      recorded_at: r.recorded_at as string,
    }));
  }

  /**
   * The recomputed S7.1 digests of entries at the given 1-based places of
   * the stored chain (for earlier-checkpoint commitments), from the stored
   * texts.
   */
  private async digestsAt(q: Queryable, jobId: string, counts: number[]): Promise<Map<number, string | null>> {
    // Stored timelines have contiguous seqs from 1 (appends are checked, imports verify), so place k is seq k.
    const out = new Map<number, string | null>(counts.map((k) => [k, null]));
    for (let i = 0; i < counts.length; i += 200) {
      const chunk = counts.slice(i, i + 200);
      const rows = await q.query<{ seq: number | string; raw: string }>(`SELECT seq, raw FROM timeline_entries WHERE job_id = ? AND seq IN (${chunk.map(() => '?').join(', ')})`, [jobId, ...chunk]);
      for (const r of rows) out.set(Number(r.seq), entryDigest(parseStored(r.raw)));
    }
    return out;
  }

  /**
   * Every commitment recorded for the job, judged together against the
   * timeline by the core's {@link assessCommitments} (the same function the
   * job page, coverage reports and `aer1` use).
   */
  async assess(q: Queryable, jobId: string, timeline: TimelineResult): Promise<{ rows: CommitmentRow[]; assessment: CommitmentsAssessment }> {
    const rows = await this.commitmentRows(q, jobId);
    const recorded = rows.map((c) => ({ id: c.id, value: parseStored(c.raw), position: c.position, recorded_at: c.recorded_at }));
    const digest_at = await this.digestsAt(q, jobId, earlierCounts(timeline, recorded));
    return { rows, assessment: assessCommitments(timeline, recorded, { job_id: jobId, digest_at }) };
  }

  /**
   * GET /api/jobs/:job_id/verify: the stored entries re-verified (S7), every
   * recorded commitment re-checked against the timeline as it is now and
   * judged together: truncation is excluded only when one binds and none
   * contradicts (a commitment counting more entries, or naming another
   * digest for an entry, is a finding no other commitment hides). The
   * deciding commitment is reported in `commitment`, all in `commitments`.
   */
  async verify(jobId: string): Promise<TimelineVerification> {
    const row = await this.get(jobId);
    const result = await this.verifyEntries(this.db, jobId);
    const { rows, assessment } = await this.assess(this.db, jobId, result);
    const chosen = decidingCommitment(assessment);
    const excluded = assessment.truncation_excluded;
    const commitment: CommitmentStatus = chosen
      ? {
          status: excluded ? 'binding' : 'non_binding',
          outcome: chosen.outcome,
          reasons: chosen.check.reasons,
          id: chosen.id,
          commitment: chosen.check.commitment,
          witness: chosen.check.witness,
          recorded_at: chosen.recorded_at,
          checks: chosen.check.checks,
          recorded: rows.length,
        }
      : { status: 'absent', outcome: null, reasons: [], id: null, commitment: null, witness: null, recorded_at: null, checks: [], recorded: 0 };
    return {
      job_id: jobId,
      source: row.source,
      verdict: result.verdict,
      historical: result.verdict === 'historical',
      reasons: result.reasons,
      checks: result.checks,
      construction: result.construction,
      entry_count: result.entry_count,
      final_entry_digest: result.final_entry_digest,
      closed: result.closed,
      provenance: result.provenance,
      commitment,
      commitment_assessment: assessment.status,
      commitments: assessment.commitments.map(commitmentVerification),
      findings: assessment.findings,
      truncation_excluded: excluded,
      statement: statementFor(assessment, chosen),
      limits: excluded ? chosen!.check.limits : result.limits,
      url: this.urls.job(jobId),
    };
  }

  /**
   * GET /api/jobs/:job_id/endpoint: the ledger's own endpoint commitment for
   * a closed job whose timeline verifies, for an external witness to
   * publish. `published_at` is when the ledger recorded the closing entry.
   * 409 `timeline_not_closed` / `timeline_not_valid`; 404 unknown job.
   */
  async endpoint(jobId: string): Promise<{ job_id: string; final_entry_digest: string; entry_count: number; published_at: string }> {
    await this.get(jobId);
    const result = await this.verifyEntries(this.db, jobId);
    if (!result.closed) throw new ConflictError('timeline_not_closed', `job ${jobId} is not closed: its endpoint is not final yet`, { reasons: ['timeline_not_closed'], job_id: jobId });
    if (result.verdict !== 'valid' || result.final_entry_digest === null) {
      throw new ConflictError('timeline_not_valid', `the timeline of job ${jobId} does not verify under -07 (verdict ${result.verdict}); no commitment can bind it`, { reasons: result.reasons, verdict: result.verdict, job_id: jobId });
    }
    const last = (await this.db.query<{ recorded_at: string }>(
      'SELECT e.recorded_at AS recorded_at FROM timeline_entries t JOIN events e ON e.position = t.position WHERE t.job_id = ? ORDER BY t.seq DESC LIMIT 1',
      [jobId],
    ))[0];
    return { job_id: jobId, final_entry_digest: result.final_entry_digest, entry_count: result.entry_count, published_at: last.recorded_at };
  }
}

/** Member and format checks of one entry alone (S7.1/S7.2), by the core. */
function memberCheck(value: unknown): EntryOutcome {
  const v = new TimelineVerifier({ collectEntries: true });
  v.push(value);
  return v.finish().entries![0];
}

function parseStored(raw: string): unknown {
  return parseRawJson(raw).value;
}

function commitmentVerification(a: AssessedCommitment): CommitmentVerification {
  return {
    id: a.id!,
    recorded_at: a.recorded_at!,
    position: a.position!,
    outcome: a.outcome,
    binding: a.binding,
    contradicts: a.contradicts,
    missing_entries: a.missing_entries,
    detail: a.detail,
    reasons: a.check.reasons,
    commitment: a.check.commitment,
    witness: a.check.witness,
  };
}

/** The one-sentence verdict on truncation. Never says excluded when any commitment contradicts the timeline. */
export function statementFor(a: CommitmentsAssessment, chosen: AssessedCommitment | null): string {
  if (a.truncation_excluded && chosen) {
    const c = chosen.check;
    const w = c.witness && typeof c.witness.witness === 'string' ? ` by ${c.witness.witness}` : '';
    const at = isObject(c.commitment) && typeof c.commitment.published_at === 'string' ? ` at ${c.commitment.published_at}` : '';
    const others = a.commitments.length > 1 ? ` None of the ${a.commitments.length} recorded commitments contradicts it.` : '';
    return `Truncation and last-entry substitution are excluded up to the endpoint commitment published${w}${at}: it binds job_id, entry_count and final_entry_digest of the visible -07 timeline (rev 09).${others} This does not show that every real action was recorded.`;
  }
  if (a.findings.length > 0) {
    const contradiction = a.findings.map((f) => f.message).join('; ');
    if (a.binding.length === 0) return `${NOT_EXCLUDED}, and a recorded commitment contradicts the visible timeline: ${contradiction}.`;
    const n = a.binding.length;
    return `Truncation is not excluded (S7.3): a recorded commitment contradicts the visible timeline: ${contradiction}. ${n} other commitment${n === 1 ? '' : 's'} bind${n === 1 ? 's' : ''} the visible timeline; that does not hide the contradiction.`;
  }
  if (a.commitments.length > 0) return `${NOT_EXCLUDED}; no recorded commitment binds the visible timeline (${a.commitments.map((c) => `${c.id ?? `#${c.index + 1}`}: ${c.outcome}`).join(', ')}).`;
  return `${NOT_EXCLUDED}; none is recorded for this job.`;
}

/**
 * Witness metadata is kept exactly as received, but must be what it says:
 * `witness` a non-empty string (at most 500 characters), `retrieved_from` an
 * http(s) URL without userinfo, `retrieved_at` an RFC 3339 date-time. Absent members are fine.
 */
export function witnessProblems(c: unknown): string[] {
  if (!isObject(c)) return [];
  const problems: string[] = [];
  if (has(c, 'witness') && !(typeof c.witness === 'string' && c.witness.trim().length > 0 && c.witness.length <= 500)) {
    problems.push('witness, when present, must be a non-empty string of at most 500 characters naming who published the commitment');
  }
  if (has(c, 'retrieved_from')) {
    const why = typeof c.retrieved_from === 'string' && c.retrieved_from.length <= 2000 ? httpUrlProblem(c.retrieved_from) : 'not_http_url';
    if (why === 'url_has_userinfo') problems.push('retrieved_from must not carry userinfo (user:password@ before the host): http://127.0.0.1@evil.example/ is a link to evil.example');
    else if (why !== null) problems.push('retrieved_from, when present, must be the http(s) URL the commitment was retrieved from');
  }
  if (has(c, 'retrieved_at') && !isRfc3339(c.retrieved_at)) problems.push('retrieved_at, when present, must be an RFC 3339 date-time with a real date');
  return problems;
}

/**
 * Chain results of closed timelines, most recently used first, at most
 * `capacity` jobs (a result holds no per-entry data: a few KB).
 */
export class ClosedChainCache {
  private readonly map = new Map<string, TimelineResult>();

  constructor(private readonly capacity = 512) {}

  get(key: string): TimelineResult | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, value: TimelineResult): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }

  get size(): number {
    return this.map.size;
  }
}
