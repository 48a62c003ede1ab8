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
  whoStandsBehind,
  entryDigest,
  EntryOutcome,
  has,
  isObject,
  isRfc3339,
  JsonObject,
  TimelineResult,
  TimelineVerifier,
  verifyTimeline,
  JobAssessment,
  jobAssessment,
  JOB_ASSESSMENT_HEADLINE,
} from '../core/aer1';
import { commitmentTextProblems } from '../core/aer1/commitment-text';
import {
  Attestation,
  AttestationError,
  AttestationKind,
  commitmentNoteText,
  CommitmentTrust,
  judgeAttestation,
  ledgerCommitmentText,
  NO_TRUST,
  StoredAttestation,
  verifyCommitmentNote,
} from '../core/aer1/attestation';
import { signNote } from '../core/tlog';
import { LogIdentityService } from '../log/log-identity.service';
import { CommitmentTrustService } from '../log/commitment-trust.service';
import { ConflictError, LedgerError, NotFoundError, UnprocessableError, VerificationFailedError } from '../common/errors';
import { parseRawJson, RawJson, splitJsonArray } from '../common/raw-json';
import { assertIdentifier, httpUrlProblem } from '../core/text';
import { PublicUrls } from '../common/urls';
import { DatabaseService, Tx } from '../database/database.service';
import { Queryable } from '../database/rows';
import { LedgerService, NO_CONCURRENCY_CHECK, STREAM_DOES_NOT_EXIST } from '../ledger/ledger.service';
import { ProjectionGuard } from '../ledger/projection-guard';
import { EventsRepository } from '../ledger/events.repository';
import { eventData } from '../ledger/event';
import { ResultCache } from '../common/result-cache';
import type { Principal } from '../auth/api-keys.service';
import type { RecordedBy } from '../core/ledger/event-hash';
import { assertOwner, assertProvenance, mayReadWithheld, recordedBy } from '../auth/permissions';
import { assertPlanOwner } from '../coverage/plan-owner';
import { streams } from '../ledger/streams';
import { decideAppend, decideImport, EMPTY_HEAD, TimelineHead } from './timelines.decider';
import { EndpointCommitmentRecordedData, TimelineEvent, TimelineImportedData } from './timelines.events';
import { CommitmentRow, TimelineEntryRow, TimelineRow, TimelinesRepository } from './timelines.repository';

export type { CommitmentRow, TimelineEntryRow, TimelineRow } from './timelines.repository';

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
  /** Who stands behind the deciding commitment (null when none is recorded). */
  attestation: AttestationView | null;
}

/** Who stands behind a commitment, as the API shows it. */
export interface AttestationView {
  /** `ledger_issued` (this ledger's log key), `attested_by` (a key in TRUSTED_COMMITMENT_KEYS), `self_asserted`. */
  kind: AttestationKind;
  /** The key names whose signatures verify (`attested_by`, `ledger_issued`); empty when self-asserted. */
  by: string[];
  /** The key that posted it (null before attribution; for a ledger-issued one, the key whose request closed the timeline). */
  posted_by: string | null;
  detail: string;
  /** Why a stored signature does not count now (then `self_asserted`), else null. */
  problem: string | null;
  /** The signed note (text, blank line, signatures), when one is stored. */
  note: string | null;
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
  /** Witness metadata as given: for a self-asserted commitment, the poster's claim (see `attestation`), never a fact. */
  witness: Record<string, unknown> | null;
  attestation: AttestationView;
}

/** GET /api/jobs/:job_id/verify. */
export interface TimelineVerification {
  /**
   * The one overall answer: the chain verdict and every commitment judged
   * together (`clean` only when the chain verifies, a commitment binds and none
   * contradicts). The HTTP status is 200 only for `clean`.
   */
  assessment: JobAssessment;
  /** {@link assessment} in words. */
  headline: string;
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
  /** Who stands behind the binding commitments: `ledger_issued`, `attested_by`, or only `self_asserted` (the producer's word); null when none binds. */
  binding_attestation: AttestationKind | null;
  statement: string;
  limits: string[];
  url: string;
}

export const NOT_EXCLUDED = 'Truncation is not excluded: no binding endpoint commitment (S7.3)';

const PAGE = 2000;

/** The largest endpoint commitment text (the commitment and its witness metadata), in bytes: every verifier and page shows them all. */
export const MAX_COMMITMENT_BYTES = 16 * 1024;
/** The most endpoint commitments clients may post for one job (the one the ledger issues on close comes on top): each is judged on every read of the job. */
export const MAX_COMMITMENTS_PER_JOB = 100;
/** A page of `GET /api/jobs/{id}/timeline` ends after the entry that passes this many bytes of entry text (a few MB per cost-1 read). */
export const TIMELINE_PAGE_BYTES = 4 * 1024 * 1024;

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
  /** Chain results per timeline state (job and last position: the entries as of it never change), at most 512, a few KB each. */
  readonly closedChains = new ResultCache<TimelineResult>(512);

  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly timelines: TimelinesRepository,
    private readonly events: EventsRepository,
    private readonly guard: ProjectionGuard,
    private readonly identity: LogIdentityService,
    private readonly trust: CommitmentTrustService,
  ) {}

  // ---------------------------------------------------------------- append

  /**
   * Append one entry or an array of entries to the job's timeline (S7.2),
   * all in one transaction at the stream's current version.
   * 422 `verification_failed` (malformed entry), 422 `job_id_mismatch`,
   * 409 `timeline_imported`, `timeline_closed`, `seq_not_contiguous`,
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
      const issued = head.closed ? await this.issueLedgerCommitment(tx, jobId, { entry_count: head.seq, final_entry_digest: head.digest }, stored[stored.length - 1].recorded_at, by) : null;
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

  /**
   * The ledger's own endpoint commitment for a timeline closed in `tx`
   * (issue 15): `{entry_count, final_entry_digest, job_id, published_at}` as
   * canonical JSON, signed as a note with the log key, appended as an
   * `EndpointCommitmentRecorded` event with `issued_by: "ledger"` in the same
   * transaction as the close (so it is a leaf of the log). `published_at` is
   * when the close was recorded. Null (nothing issued) when this deployment
   * has no log key.
   */
  private async issueLedgerCommitment(tx: Tx, jobId: string, end: { entry_count: number; final_entry_digest: string }, publishedAt: string, by: Principal): Promise<{ id: string; note: string; position: number } | null> {
    const identity = this.identity.current;
    if (!identity) return null;
    const text = ledgerCommitmentText({ job_id: jobId, final_entry_digest: end.final_entry_digest, entry_count: end.entry_count, published_at: publishedAt });
    const note = signNote(commitmentNoteText(text), [identity.signer]);
    const id = randomUUID();
    const data: EndpointCommitmentRecordedData = {
      id,
      job_id: jobId,
      raw: text,
      binding: true,
      reasons: [],
      entry_count_at_record: end.entry_count,
      issued_by: 'ledger',
      attestation: { issued_by: 'ledger', note, keys: [{ name: identity.signer.name, vkey: identity.vkey }] },
    };
    // Written in the closing request, so under its key; `issued_by` says the ledger made it.
    const [ev] = await this.ledger.append<TimelineEvent>(tx, streams.timeline(jobId), NO_CONCURRENCY_CHECK, [{ type: 'EndpointCommitmentRecorded', data }], recordedBy(by));
    return { id, note, position: ev.position };
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
    if (!last) return null;
    const value = JSON.parse(last.raw) as JsonObject;
    const digest = entryDigest(value);
    if (digest === null) throw new Error(`stored head entry of job ${jobId} does not recompute`);
    return { head: { seq: last.seq, digest, closed: value.close === true }, value };
  }

  // ---------------------------------------------------------------- import

  /**
   * Import a complete timeline recorded elsewhere (a JSON array). `valid`
   * and `historical` (-06) timelines are stored with their verdict;
   * `invalid` is 422 with reasons and nothing stored. The same body again
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
        ? await this.issueLedgerCommitment(tx, jobId, { entry_count: result.entry_count, final_entry_digest: result.final_entry_digest }, ev.recorded_at, by)
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
  async recordCommitment(jobId: string, posted: RawJson, by: Principal) {
    assertIdentifier('job_id', jobId);
    const { body, stored } = this.attested(posted);
    if (isObject(body.value) && typeof body.value.job_id === 'string' && body.value.job_id.length > 0) assertIdentifier('commitment job_id', body.value.job_id);
    const problems = [...commitmentFormatProblems(body.value), ...witnessProblems(body.value), ...commitmentTextProblems(body.text)];
    if (problems.length > 0) throw new UnprocessableError('invalid_commitment', `the commitment is malformed: ${problems.join('; ')}`, { reasons: ['invalid_commitment'], problems });
    const text = body.text.trim();
    if (Buffer.byteLength(text, 'utf8') > MAX_COMMITMENT_BYTES) {
      throw new UnprocessableError('commitment_too_large', `a commitment is at most ${MAX_COMMITMENT_BYTES} bytes (witness metadata included); nothing was recorded`, { reasons: ['commitment_too_large'] });
    }
    // Outside the write lock: the owner (the stream's first event never changes) and the chain as it stands.
    const before = await this.timelines.get(this.db, jobId);
    if (!before) throw new NotFoundError('job', jobId);
    assertOwner(by, await this.events.writerAt(this.db, before.first_position), `the timeline of job ${JSON.stringify(jobId)}`);
    const verified = await this.verifyEntries(this.db, jobId);
    return this.db.write(async (tx) => {
      const row = (await this.timelines.get(tx, jobId))!;
      // Appended to meanwhile (rare): the chain is verified again, under the lock.
      const timeline = row.last_position === before.last_position ? verified : await this.verifyEntries(tx, jobId);
      const check = checkCommitment(timeline, body.value);
      const same = await this.timelines.commitmentIdByText(tx, jobId, text, stored?.note ?? null);
      let id = same;
      if (!id) {
        const count = await this.timelines.commitmentCount(tx, jobId);
        if (count >= MAX_COMMITMENTS_PER_JOB) {
          throw new ConflictError('too_many_commitments', `job ${jobId} already has ${count} endpoint commitments, the most one job may have; nothing was recorded`, { reasons: ['too_many_commitments'], job_id: jobId });
        }
        id = randomUUID();
        const data: EndpointCommitmentRecordedData = { id, job_id: jobId, raw: text, binding: check.binding, reasons: check.reasons, entry_count_at_record: timeline.entry_count, ...(stored ? { attestation: stored } : {}) };
        // Any commitment may be recorded on an existing timeline: nothing to check against its version.
        await this.ledger.append<TimelineEvent>(tx, streams.timeline(jobId), NO_CONCURRENCY_CHECK, [{ type: 'EndpointCommitmentRecorded', data }], recordedBy(by));
      }
      // This commitment alone may bind; judged with every one recorded, truncation may still not be excluded.
      const { assessment } = await this.assess(tx, jobId, timeline);
      const attestation = attestationView(judgeAttestation(text, stored, this.trust.trust, by.name), by.name, stored?.note ?? null);
      return {
        outcome: same ? ('existing' as const) : ('created' as const),
        id,
        job_id: jobId,
        binding: check.binding,
        attestation,
        reasons: check.reasons,
        checks: check.checks,
        witness: check.witness,
        computed: check.computed,
        commitment_assessment: assessment.status,
        truncation_excluded: assessment.truncation_excluded,
        binding_attestation: assessment.binding_attestation,
        findings: assessment.findings,
        url: this.urls.job(jobId),
        verify_url: this.urls.jobVerify(jobId),
      };
    });
  }

  /**
   * The commitment of a POST body: the commitment itself (self-asserted), or
   * `{"attestation": "<signed note>"}` whose note text is the commitment's
   * JSON text and a newline, signed by a key in TRUSTED_COMMITMENT_KEYS
   * (then recorded `attested_by` that key). 422 `invalid_attestation` (not
   * a signed note, other members beside it, or a text that is not a JSON
   * commitment), `attestation_signature_invalid` (a trusted key's signature
   * fails), `attestation_key_untrusted` (no signature by a trusted key);
   * nothing is written.
   */
  private attested(posted: RawJson): { body: RawJson; stored: StoredAttestation | null } {
    const v = posted.value;
    if (!isObject(v) || !has(v, 'attestation')) return { body: posted, stored: null };
    const extra = Object.keys(v).filter((k) => k !== 'attestation');
    if (extra.length > 0 || typeof v.attestation !== 'string') {
      throw new UnprocessableError('invalid_attestation', `an attested commitment is posted as {"attestation": "<signed note>"} alone (the note's text is the commitment); got ${typeof v.attestation !== 'string' ? 'a non-string attestation' : `other members: ${extra.slice(0, 5).join(', ')}`}; nothing was recorded`, { reasons: ['invalid_attestation'] });
    }
    let checked: { text: string; stored: StoredAttestation };
    try {
      checked = verifyCommitmentNote(v.attestation, this.trust.trust.trusted);
    } catch (e) {
      if (e instanceof AttestationError) throw new UnprocessableError(e.code, `${e.message}; nothing was recorded`, { reasons: [e.code] });
      throw e;
    }
    if (checked.text !== checked.text.trim() || checked.text === '') {
      throw new UnprocessableError('invalid_attestation', "the attestation's note text must be the commitment's JSON text exactly, with no white space around it, and one newline; nothing was recorded", { reasons: ['invalid_attestation'] });
    }
    let body: RawJson;
    try {
      body = parseRawJson(checked.text);
    } catch (e) {
      throw new UnprocessableError('invalid_attestation', `the attestation's note text is not a JSON commitment (${e instanceof LedgerError ? e.code : 'malformed_json'}); nothing was recorded`, { reasons: ['invalid_attestation'] });
    }
    return { body, stored: checked.stored };
  }

  // ---------------------------------------------------------------- reads

  /**
   * The timeline row, or 404; the job's rows (timeline, entries,
   * commitments) checked against its events first: 409 `projection_mismatch`.
   */
  async get(jobId: string): Promise<TimelineRow> {
    await checkTimelineRows(this.guard, this.db, jobId);
    const row = await this.timelines.get(this.db, jobId);
    if (!row) throw new NotFoundError('job', jobId);
    return row;
  }

  /** Pages of stored entries in seq order (constant memory in the timeline length). */
  private async *entryRows(q: Queryable, jobId: string, after = 0, limit = Number.MAX_SAFE_INTEGER): AsyncGenerator<TimelineEntryRow> {
    let last = after;
    let left = limit;
    while (left > 0) {
      const n = Math.min(PAGE, left);
      const rows = await this.timelines.entryPage(q, jobId, last, n);
      yield* rows;
      if (rows.length < n) return;
      left -= rows.length;
      last = rows[rows.length - 1].seq;
    }
  }

  /**
   * Re-verify the stored entries with the core, fed from their stored texts (never the stored verdict). The
   * entries of a timeline as of its last position can never change (closed or open: appends only add), so
   * its chain result is computed once per state and kept, keyed by job and last position (see
   * `closedChains`); an append makes a new key. The result is shared: callers must not modify it.
   */
  private async verifyEntries(q: Queryable, jobId: string): Promise<TimelineResult> {
    const row = await this.timelines.get(q, jobId);
    // A timeline's entries as of its last position never change (append-only), open or closed.
    const key = row ? `${row.last_position}:${row.entry_count}:${jobId}` : null;
    const kept = key === null ? undefined : this.closedChains.get(key);
    if (kept) return kept;
    const v = new TimelineVerifier();
    for await (const r of this.entryRows(q, jobId)) v.push(parseStored(r.raw));
    const result = v.finish();
    if (key !== null) this.closedChains.set(key, result);
    return result;
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
    await this.get(jobId);
    const mayRead = mayReadWithheld(viewer);
    if (!mayRead && (await this.timelines.hasMetadataEntries(this.db, jobId))) {
      throw new LedgerError(403, 'canonical_bytes_withheld', 'entries of this timeline were recorded under a `metadata` publication setting: their canonical bytes are served to auditor and admin keys only (S13)');
    }
    const rows = this.entryRows(this.db, jobId);
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
   */
  async timeline(jobId: string, after = 0, limit = 1000, viewer: Principal | null = null) {
    const row = await this.get(jobId);
    const entries: Record<string, unknown>[] = [];
    const positions: number[] = [];
    const seqs: number[] = [];
    let lastSeq = after;
    const mayRead = mayReadWithheld(viewer);
    let bytes = 0;
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
      bytes += r.raw.length;
      if (bytes >= TIMELINE_PAGE_BYTES) break; // bounded in bytes as well as in count: `next_after` continues
    }
    const commitments = await this.timelines.commitments(this.db, jobId);
    const by = await this.events.recordedByAt(this.db, [...positions, ...commitments.map((c) => c.position)]);
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
      commitments: commitments.map((c) => ({ id: c.id, commitment: parseStored(c.raw), binding_at_record: c.binding, reasons_at_record: c.reasons, entry_count_at_record: c.entry_count_at_record, recorded_at: c.recorded_at, recorded_by: by.get(c.position) ?? null, issued_by: c.issued_by ?? 'client', attestation: attestationOf(c) })),
      url: this.urls.job(jobId),
      verify_url: this.urls.jobVerify(jobId),
    };
  }

  /**
   * The recomputed S7.1 digests of entries at the given 1-based places of
   * the stored chain (for earlier-checkpoint commitments), from the stored
   * texts.
   */

  /**
   * Every commitment recorded for the job, judged together against the
   * timeline by the core's {@link assessCommitments} (the same function the
   * job page, coverage reports and `aer1` use).
   */
  async assess(q: Queryable, jobId: string, timeline: TimelineResult): Promise<{ rows: CommitmentWithWriter[]; assessment: CommitmentsAssessment }> {
    return assessJobCommitments(q, jobId, timeline, this.timelines, this.trust.trust);
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
          attestation: attestationView(chosen.attestation, rows[chosen.index].recorded_by?.name ?? null, rows[chosen.index].attestation?.note ?? null),
        }
      : { status: 'absent', outcome: null, reasons: [], id: null, commitment: null, witness: null, recorded_at: null, checks: [], recorded: 0, attestation: null };
    const overall = jobAssessment(result.verdict, assessment);
    return {
      assessment: overall,
      headline: JOB_ASSESSMENT_HEADLINE[overall],
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
      commitments: assessment.commitments.map((a) => commitmentVerification(a, rows[a.index])),
      findings: assessment.findings,
      truncation_excluded: excluded,
      binding_attestation: assessment.binding_attestation,
      statement: statementFor(assessment, chosen),
      limits: excluded ? chosen!.check.limits : result.limits,
      url: this.urls.job(jobId),
    };
  }

  /**
   * GET /api/jobs/:job_id/endpoint: the endpoint of a closed job whose
   * timeline verifies, `{job_id, final_entry_digest, entry_count,
   * published_at}` (`published_at`: when the ledger recorded the close), and
   * the ledger-issued commitment over it (`ledger_commitment`: its record,
   * the exact commitment text, and the signed note a verifier checks with
   * the log's vkey), or null with `statement` saying why none was issued
   * (no log key, or closed before the ledger issued commitments).
   * 409 `timeline_not_closed` / `timeline_not_valid`; 404 unknown job.
   */
  async endpoint(jobId: string): Promise<EndpointAnswer> {
    await this.get(jobId);
    const result = await this.verifyEntries(this.db, jobId);
    if (!result.closed) throw new ConflictError('timeline_not_closed', `job ${jobId} is not closed: its endpoint is not final yet`, { reasons: ['timeline_not_closed'], job_id: jobId });
    if (result.verdict !== 'valid' || result.final_entry_digest === null) {
      throw new ConflictError('timeline_not_valid', `the timeline of job ${jobId} does not verify under -07 (verdict ${result.verdict}); no commitment can bind it`, { reasons: result.reasons, verdict: result.verdict, job_id: jobId });
    }
    const publishedAt = (await this.timelines.lastEntryRecordedAt(this.db, jobId))!;
    const issued = await this.timelines.ledgerIssued(this.db, jobId);
    const end = { job_id: jobId, final_entry_digest: result.final_entry_digest, entry_count: result.entry_count, published_at: publishedAt };
    if (!issued) {
      const why = this.identity.current ? 'the timeline closed before this ledger issued endpoint commitments' : `this deployment has no log signing key (${this.identity.reason})`;
      return { ...end, ledger_commitment: null, statement: `No ledger-issued endpoint commitment: ${why}. The endpoint above is computed now from the stored entries; it is signed by nobody.` };
    }
    const a = judgeAttestation(issued.raw, issued.attestation, this.trust.trust, null);
    const event = await this.events.at(this.db, issued.position);
    return {
      ...end,
      ledger_commitment: {
        id: issued.id,
        commitment: parseStored(issued.raw),
        text: issued.raw,
        note: issued.attestation?.note ?? '',
        log_vkey: issued.attestation?.keys[0]?.vkey ?? null,
        signature_verifies: a.kind === 'ledger_issued',
        position: issued.position,
        event_hash: event?.event_hash ?? null,
        recorded_at: issued.recorded_at,
      },
      statement:
        a.kind === 'ledger_issued'
          ? `Issued by this ledger when the timeline closed, in the same transaction, and signed with its log key ${a.by.join(', ')}: the note's text is the commitment's JSON text and a newline. It is leaf ${issued.position - 1} of the log (event ${issued.position}).`
          : `A ledger-issued commitment is recorded, but its signature does not verify now: ${a.problem ?? 'unknown'}.`,
    };
  }
}

/** GET /api/jobs/:job_id/endpoint. */
export interface EndpointAnswer {
  job_id: string;
  final_entry_digest: string;
  entry_count: number;
  published_at: string;
  ledger_commitment: {
    id: string;
    commitment: unknown;
    /** The commitment's exact JSON text (canonical: members sorted, no white space). */
    text: string;
    /** The signed note: `text`, a newline, a blank line, the log key's signature line. */
    note: string;
    log_vkey: string | null;
    signature_verifies: boolean;
    /** Its event's ledger position (its log leaf is position - 1). */
    position: number;
    event_hash: string | null;
    recorded_at: string;
  } | null;
  statement: string;
}

/**
 * Every endpoint commitment recorded for `jobId`, judged together against the
 * job's verified chain `timeline` (rev 09, see assessCommitments): the one
 * judgement the verifier, the job page, batches and coverage share.
 */
export async function assessJobCommitments(
  q: Queryable,
  jobId: string,
  timeline: TimelineResult,
  timelines: TimelinesRepository = new TimelinesRepository(),
  trust: CommitmentTrust = NO_TRUST,
): Promise<{ rows: CommitmentWithWriter[]; assessment: CommitmentsAssessment }> {
  const rows = await timelines.commitmentsWithWriters(q, jobId);
  const recorded = rows.map((c) => ({ id: c.id, value: parseStored(c.raw), position: c.position, recorded_at: c.recorded_at, attestation: judgeAttestation(c.raw, c.attestation, trust, c.recorded_by?.name ?? null) }));
  const counts = earlierCounts(timeline, recorded);
  // Stored timelines have contiguous seqs from 1 (appends are checked, imports verify), so place k is seq k.
  const digest_at = new Map<number, string | null>(counts.map((k) => [k, null]));
  for (const [seq, raw] of await timelines.rawAtSeqs(q, jobId, counts)) digest_at.set(seq, entryDigest(parseStored(raw)));
  return { rows, assessment: assessCommitments(timeline, recorded, { job_id: jobId, digest_at }) };
}

/** A commitment row with the key that recorded it. */
export type CommitmentWithWriter = CommitmentRow & { recorded_by: RecordedBy | null };

/** The API form of an attestation judged by the core. */
export function attestationView(a: Attestation, postedBy: string | null, note: string | null): AttestationView {
  return { kind: a.kind, by: a.by, posted_by: postedBy, detail: a.detail, problem: a.problem, note };
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

function commitmentVerification(a: AssessedCommitment, row: CommitmentWithWriter): CommitmentVerification {
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
    attestation: attestationView(a.attestation, row.recorded_by?.name ?? null, row.attestation?.note ?? null),
  };
}

/** The one-sentence verdict on truncation. Never says excluded when any commitment contradicts the timeline. */
export function statementFor(a: CommitmentsAssessment, chosen: AssessedCommitment | null): string {
  if (a.truncation_excluded && chosen) {
    const c = chosen.check;
    const at = isObject(c.commitment) && typeof c.commitment.published_at === 'string' ? ` at ${c.commitment.published_at}` : '';
    const others = a.commitments.length > 1 ? ` None of the ${a.commitments.length} recorded commitments contradicts it.` : '';
    const who = `It is ${whoStandsBehind(chosen.attestation, c.witness)}.`;
    const self = chosen.attestation.kind === 'self_asserted' ? ' A self-asserted commitment is the producer\'s own word: it excludes truncation only as far as the producer is trusted (rev 09: two files, one trust domain).' : '';
    return `Truncation and last-entry substitution are excluded up to the endpoint commitment published${at}: it binds job_id, entry_count and final_entry_digest of the visible -07 timeline (rev 09). ${who}${self}${others} This does not show that every real action was recorded.`;
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


/** Check the read-model rows of job `jobId` (its timeline, entries and commitments) against its stream (ProjectionGuard). */
export async function checkTimelineRows(guard: ProjectionGuard, q: Queryable, jobId: string): Promise<void> {
  await guard.check(q, streams.timeline(jobId), [
    { table: 'timelines', column: 'job_id', value: jobId },
    { table: 'timeline_entries', column: 'job_id', value: jobId },
    { table: 'commitments', column: 'job_id', value: jobId },
  ]);
}
