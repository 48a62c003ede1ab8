/**
 * Endpoint commitments (rev 09): recorded as posted (self-asserted, or
 * attested by a trusted key's signed note) and judged against the timeline
 * as it stands; and the ledger's own commitment, issued when a timeline closes.
 */
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { checkCommitment, commitmentFormatProblems, has, isObject, isRfc3339 } from '../core/aer1';
import { commitmentTextProblems } from '../core/aer1/commitment-text';
import { AttestationError, commitmentNoteText, judgeAttestation, ledgerCommitmentText, StoredAttestation, verifyCommitmentNote } from '../core/aer1/attestation';
import { signNote } from '../core/tlog';
import { LogIdentityService } from '../log/log-identity.service';
import { CommitmentTrustService } from '../log/commitment-trust.service';
import { ConflictError, LedgerError, NotFoundError, UnprocessableError } from '../common/errors';
import { parseRawJson, RawJson } from '../common/raw-json';
import { assertIdentifier, httpUrlProblem } from '../core/text';
import { PublicUrls } from '../common/urls';
import { DatabaseService, Tx } from '../database/database.service';
import { LedgerService, NO_CONCURRENCY_CHECK } from '../ledger/ledger.service';
import { EventsRepository } from '../ledger/events.repository';
import type { Principal } from '../auth/api-keys.service';
import { assertOwner, recordedBy } from '../auth/permissions';
import { streams } from '../ledger/streams';
import { EndpointCommitmentRecordedData, TimelineEvent } from './timelines.events';
import { TimelinesRepository } from './timelines.repository';
import { attestationView } from './dto/timelines.answers';
import { TimelineVerificationService } from './timeline-verification.service';


/** The largest endpoint commitment text (the commitment and its witness metadata), in bytes: every verifier and page shows them all. */
export const MAX_COMMITMENT_BYTES = 16 * 1024;

/** The most endpoint commitments clients may post for one job (the one the ledger issues on close comes on top): each is judged on every read of the job. */
export const MAX_COMMITMENTS_PER_JOB = 100;

/** Endpoint commitments of job timelines: posted ones, and the one the ledger issues on close. */
@Injectable()
export class CommitmentsService {
  constructor(
    private readonly db: DatabaseService,
    private readonly ledger: LedgerService,
    private readonly urls: PublicUrls,
    private readonly timelines: TimelinesRepository,
    private readonly events: EventsRepository,
    private readonly identity: LogIdentityService,
    private readonly trust: CommitmentTrustService,
    private readonly verification: TimelineVerificationService,
  ) {}

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
    const verified = await this.verification.verifyEntries(this.db, jobId);
    return this.db.write(async (tx) => {
      const row = (await this.timelines.get(tx, jobId))!;
      // Appended to meanwhile (rare): the chain is verified again, under the lock.
      const timeline = row.last_position === before.last_position ? verified : await this.verification.verifyEntries(tx, jobId);
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
      const { assessment } = await this.verification.assess(tx, jobId, timeline);
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

  /**
   * The ledger's own endpoint commitment for a timeline closed in `tx`
   * (issue 15): `{entry_count, final_entry_digest, job_id, published_at}` as
   * canonical JSON, signed as a note with the log key, appended as an
   * `EndpointCommitmentRecorded` event with `issued_by: "ledger"` in the same
   * transaction as the close (so it is a leaf of the log). `published_at` is
   * when the close was recorded. Null (nothing issued) when this deployment
   * has no log key.
   */
  async issueLedgerCommitment(tx: Tx, jobId: string, end: { entry_count: number; final_entry_digest: string }, publishedAt: string, by: Principal): Promise<{ id: string; note: string; position: number } | null> {
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
