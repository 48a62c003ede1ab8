/**
 * Hash-chained job timelines (S7): the -07 entry digest (S7.1), the chain
 * rules (S7.2), the honest limit (S7.3) and the -06 construction (S7.4;
 * spec README reading 8).
 *
 * {@link TimelineVerifier} takes entries one at a time so that a timeline of
 * millions of entries verifies in constant memory; {@link verifyTimeline}
 * runs it over an array.
 */
import { sha256HexOfStrictBase64 } from './base64';
import { EntryDigestInputWriter } from './canonical-json';
import { isNonEmptyString, isObject, JsonObject, has, describe, Findings, VerificationResultBase, Check } from './result';
import { provenanceKind, ZERO_DIGEST } from './identifiers';
import { sha256Hex } from './sha256';
import type { ReasonCode } from './reasons';

/** A well-formed chain entry as a producer writes it (S7.2): the shape generators and fixtures build. */
export interface ChainEntry {
  seq: number;
  job_id: string;
  /** The receipt id of the recorded call. */
  id: string;
  tool: string;
  provenance_class: string;
  /** Strict base64 of the exact bytes committed. */
  canonical_bytes: string;
  /** 64 zeros for the genesis entry, else the previous entry's S7.1 digest. */
  prev_digest: string;
  close?: boolean;
}

/** The members a -07 entry digest binds, checked and ready to write. */
export interface ParsedEntry {
  seq: number;
  job_id: string;
  id: string;
  tool: string;
  provenance_class: string;
  prev_digest: string;
  close: boolean;
  /** Bare hex SHA-256 of the decoded canonical bytes. */
  output_hash: string;
}

/** What one entry recomputes to; null members could not be computed. */
export interface EntryOutcome {
  /** 0-based position in the timeline. */
  index: number;
  seq: number | null;
  /** The -07 entry digest (S7.1), when every bound member is well-formed. */
  entry_digest: string | null;
  /** Bare hex SHA-256 of the decoded canonical bytes (also the -06 digest). */
  output_hash: string | null;
  /** Reason codes found on this entry alone (member and format checks). */
  reasons: ReasonCode[];
}

/** The result of verifying a timeline. */
export interface TimelineResult extends VerificationResultBase {
  kind: 'chain';
  /** -07 when the links hold under S7.1, -06 when they hold only under the historical construction. */
  construction: '-07' | '-06' | null;
  job_id: string | null;
  entry_count: number;
  /** The recomputed -07 digest of the last entry: what an endpoint commitment must name. */
  final_entry_digest: string | null;
  /** True when the last entry closes the job. */
  closed: boolean;
  /** Per entry, when collected (arrays); omitted by the streaming CLI. */
  entries?: EntryOutcome[];
  /** Count of entries per provenance class, as recorded (S7.3: chaining upgrades nothing). */
  provenance: Record<string, number>;
  /** Always false from the chain alone (S7.3); only an endpoint commitment can bind the end. */
  truncation_excluded: false;
}

export const CHAIN_LIMITS = [
  'The chain check alone is not truncation-proof: a rebuilt shorter chain verifies (S7.3). Only an external endpoint commitment can bind the end.',
  'Chaining gives tamper evidence for the recorded sequence, not truth about the world; a LOGGED BY AGENT entry remains an agent report (S7.3).',
];

const MAX_LISTED = 20;

/** Positions where one rule failed, for a single aggregated check. */
class Failures {
  readonly seqs: string[] = [];
  count = 0;
  add(where: string): void {
    this.count++;
    if (this.seqs.length < MAX_LISTED) this.seqs.push(where);
  }
  /** Append the failures of the entries that follow (a later segment). */
  absorb(later: { listed: string[]; count: number }): void {
    this.count += later.count;
    for (const w of later.listed) if (this.seqs.length < MAX_LISTED) this.seqs.push(w);
  }
  text(prefix: string): string {
    const more = this.count > this.seqs.length ? ` and ${this.count - this.seqs.length} more` : '';
    return `${prefix}: ${this.seqs.join(', ')}${more}`;
  }
}

const REQUIRED_STRINGS = ['job_id', 'id', 'tool', 'provenance_class'] as const;

/** Every member name an entry may carry (S7.1, S7.2). */
const ENTRY_MEMBERS = ['seq', 'job_id', 'id', 'tool', 'provenance_class', 'prev_digest', 'canonical_bytes', 'close'];

const FAILURE_KINDS = ['entry', 'members', 'seq', 'close', 'base64', 'provenance', 'contiguous', 'job', 'closeNotLast', 'link', 'notEvaluated'] as const;
type FailureKind = (typeof FAILURE_KINDS)[number];

function newFailures(): Record<FailureKind, Failures> {
  return Object.fromEntries(FAILURE_KINDS.map((k) => [k, new Failures()])) as Record<FailureKind, Failures>;
}

/**
 * What a {@link TimelineVerifier} found over a run of consecutive entries,
 * as plain data (structured-cloneable, so a worker thread can send it):
 * the findings, and the state after its last entry. Segments of one
 * timeline, verified separately, merge with {@link mergeTimelineSegments}
 * into exactly the result one verifier gives over all the entries.
 */
export interface TimelineSegment {
  /** 0-based index of the segment's first entry in the timeline. */
  startIndex: number;
  count: number;
  jobId: string | null;
  reasons: ReasonCode[];
  failures: Record<string, { listed: string[]; count: number }>;
  /** Per provenance class in order of first appearance: count and whether S5 defines it. */
  provenance: [string, number, boolean][];
  links07: boolean;
  links06: boolean;
  linksEvaluated: number;
  genesis: Check | null;
  state: { prevSeq: number | null; prevDigest07: string | null; prevDigest06: string | null; lastDigest07: string | null; closedAt: number | null; lastClosed: boolean };
}

interface ProvenanceSlot {
  count: number;
  /** A class S5 defines (the empty string is reported as a member failure instead). */
  known: boolean;
}

/**
 * Streaming verifier for one timeline (S7.2). Feed entries in order with
 * {@link push}, then call {@link finish} once. Memory is constant in the
 * number of entries unless `collectEntries` is set.
 */
export class TimelineVerifier {
  private f = new Findings();
  private readonly collect: boolean;
  private readonly entries: EntryOutcome[] = [];
  private count = 0;
  private jobId: string | null = null;
  private prevSeq: number | null = null;
  private prevDigest07: string | null = null;
  private prevDigest06: string | null = null;
  private lastDigest07: string | null = null;
  private closedAt: number | null = null;
  private lastClosed = false;
  /** Per distinct provenance class: its count and whether S5 defines it (classified once). */
  private classes = new Map<string, ProvenanceSlot>();
  private readonly writer = new EntryDigestInputWriter();
  /** The members of the entry being pushed, as the member checks found them. */
  private readonly cur: { seq: number | null; close: boolean; bytesHash: string | null; wellFormed: boolean } = { seq: null, close: false, bytesHash: null, wellFormed: false };
  private links07 = true;
  private links06 = true;
  private linksEvaluated = 0;
  private fail = newFailures();
  private genesis: Check | null = null;
  /** Index of the first entry this verifier was given (0 unless {@link continuing}). */
  private startIndex = 0;

  /** Object.prototype defines none of the entry's member names (checked once per timeline). */
  private readonly plainPrototype = ENTRY_MEMBERS.every((k) => !(k in Object.prototype));

  constructor(options: { collectEntries?: boolean } = {}) {
    this.collect = options.collectEntries ?? false;
  }

  /** Number of entries pushed so far. */
  get entryCount(): number {
    return this.count;
  }

  /**
   * A verifier for the entries from `startIndex` on (`startIndex` > 0),
   * verified apart from the ones before: `previous` is the entry at
   * `startIndex - 1` exactly as it would be pushed (the chain links and the
   * sequence continue from it), and `jobId` the timeline's job (the first
   * non-empty job_id before or in this segment; null if none). Its
   * {@link segment} merges with the others by {@link mergeTimelineSegments}.
   */
  static continuing(startIndex: number, previous: unknown, jobId: string | null): TimelineVerifier {
    if (!Number.isSafeInteger(startIndex) || startIndex < 1) throw new RangeError('startIndex must be an integer >= 1');
    const v = new TimelineVerifier({ collectEntries: false });
    v.count = startIndex - 1;
    v.jobId = jobId;
    v.push(previous); // sets the state after the previous entry ...
    // ... whose findings belong to the segment before: start with none.
    v.f = new Findings();
    v.fail = newFailures();
    v.classes = new Map();
    v.links07 = true;
    v.links06 = true;
    v.linksEvaluated = 0;
    v.genesis = null;
    v.startIndex = startIndex;
    return v;
  }

  /** The findings and end state of the entries pushed here, for {@link mergeTimelineSegments}. Not when collecting entries. */
  segment(): TimelineSegment {
    if (this.collect) throw new Error('segments are for streaming verifiers (collectEntries: false)');
    const failures: TimelineSegment['failures'] = {};
    for (const k of FAILURE_KINDS) failures[k] = { listed: [...this.fail[k].seqs], count: this.fail[k].count };
    return {
      startIndex: this.startIndex,
      count: this.count - this.startIndex,
      jobId: this.jobId,
      reasons: this.f.reasons,
      failures,
      provenance: [...this.classes].map(([k, slot]) => [k, slot.count, slot.known]),
      links07: this.links07,
      links06: this.links06,
      linksEvaluated: this.linksEvaluated,
      genesis: this.genesis,
      state: { prevSeq: this.prevSeq, prevDigest07: this.prevDigest07, prevDigest06: this.prevDigest06, lastDigest07: this.lastDigest07, closedAt: this.closedAt, lastClosed: this.lastClosed },
    };
  }

  /** Fold `s`, the segment right after what this verifier holds, into it. */
  private absorb(s: TimelineSegment): void {
    if (s.startIndex !== this.count) throw new RangeError(`segment starts at entry ${s.startIndex + 1}, expected entry ${this.count + 1}`);
    if (s.count === 0) return;
    this.count += s.count;
    if (this.jobId === null) this.jobId = s.jobId;
    for (const r of s.reasons) this.f.reason(r);
    for (const k of FAILURE_KINDS) this.fail[k].absorb(s.failures[k]);
    for (const [k, count, known] of s.provenance) {
      const slot = this.classes.get(k);
      if (slot) slot.count += count;
      else this.classes.set(k, { count, known });
    }
    this.links07 &&= s.links07;
    this.links06 &&= s.links06;
    this.linksEvaluated += s.linksEvaluated;
    if (s.startIndex === 0) this.genesis = s.genesis;
    ({ prevSeq: this.prevSeq, prevDigest07: this.prevDigest07, prevDigest06: this.prevDigest06, lastDigest07: this.lastDigest07, closedAt: this.closedAt, lastClosed: this.lastClosed } = s.state);
  }

  /** A verifier holding `segments` (consecutive, in order, the first at entry 0), ready for {@link finish}. */
  static merged(segments: TimelineSegment[]): TimelineVerifier {
    const v = new TimelineVerifier({ collectEntries: false });
    for (const s of segments) v.absorb(s);
    return v;
  }

  /** Check one entry and its link to the previous one. `entry` is a parsed JSON value. */
  push(entry: unknown): void {
    const index = this.count++;
    // Per-entry outcomes are kept only when collecting (arrays), so streaming allocates nothing per entry.
    const outcome: EntryOutcome | null = this.collect ? { index, seq: null, entry_digest: null, output_hash: null, reasons: [] } : null;
    if (this.closedAt !== null) {
      this.fail.closeNotLast.add(`seq of entry ${this.closedAt + 1} closes before entry ${index + 1}`);
      this.f.reason('close_not_last');
      this.closedAt = null; // report each early close once
    }
    if (!isObject(entry)) {
      this.fail.entry.add(`entry ${index + 1}`);
      this.bad('invalid_entry', outcome);
      this.lastClosed = false;
      this.advance(null, null, null, outcome);
      return;
    }
    const e = entry;
    // The member checks: a fast test for the common well-formed entry, and the
    // full check (every failure named) only when it does not pass.
    if (!this.wellFormedMembers(e)) this.checkMembers(e, index, outcome);
    const seq = this.cur.seq;
    const close = this.cur.close;
    const bytesHash = this.cur.bytesHash;
    if (outcome) {
      outcome.seq = seq;
      outcome.output_hash = bytesHash;
    }

    // Provenance class: counted as recorded (S7.3), classified once per distinct value (S5).
    const pc = e.provenance_class;
    let klass: ProvenanceSlot | undefined;
    if (typeof pc === 'string') {
      klass = this.classes.get(pc);
      if (klass === undefined) {
        klass = { count: 0, known: pc.length === 0 || provenanceKind(pc) !== null };
        this.classes.set(pc, klass);
      }
      klass.count++;
      if (!klass.known) {
        this.fail.provenance.add(`entry ${index + 1} (${describe(pc)})`);
        this.bad('unknown_provenance_class', outcome);
      }
    }

    // One job (S7.2).
    const jobId = e.job_id;
    if (isNonEmptyString(jobId)) {
      if (this.jobId === null) this.jobId = jobId;
      else if (jobId !== this.jobId) {
        this.fail.job.add(`entry ${index + 1} (${describe(jobId)})`);
        this.f.reason('job_id_mismatch');
      }
    }

    // Genesis (S7.2).
    const prev = e.prev_digest;
    if (index === 0) {
      const ok = prev === ZERO_DIGEST;
      this.genesis = { name: 'genesis', ok, ...(ok ? {} : { detail: `first prev_digest is ${describe(prev)}, not 64 zeros` }) };
      if (!ok) this.f.reason('genesis_prev_digest');
    }

    // Sequence (S7.2): 1, then exactly one more than the previous entry.
    if (seq !== null) {
      const expected = index === 0 ? 1 : this.prevSeq !== null ? this.prevSeq + 1 : null;
      if (expected !== null && seq !== expected) {
        this.fail.contiguous.add(`entry ${index + 1} has seq ${seq}, expected ${expected}`);
        this.f.reason('seq_not_contiguous');
      }
    }

    if (close) this.closedAt = index;
    this.lastClosed = close;

    let digest07: string | null = null;
    if (this.cur.wellFormed && bytesHash !== null && seq !== null) {
      // Members checked above: strings, a safe integer seq, a boolean close.
      // A prev_digest equal to a digest computed here is lowercase hex: nothing to escape.
      const p = prev as string;
      digest07 = sha256Hex(
        this.writer.write(close, e.id as string, jobId as string, bytesHash, p, pc as string, seq, e.tool as string, p === this.prevDigest07 || p === ZERO_DIGEST),
      );
      if (outcome) outcome.entry_digest = digest07;
    }

    // Links (S7.2): recomputed, never trusted.
    if (index > 0) {
      const link = typeof prev === 'string' ? prev : null;
      if (this.prevDigest07 === null || link === null) {
        this.fail.notEvaluated.add(`entry ${index + 1}`);
        this.links07 = false;
        this.links06 = false;
      } else {
        this.linksEvaluated++;
        if (link !== this.prevDigest07) {
          this.links07 = false;
          this.fail.link.add(`entry ${index + 1} prev_digest ${link.slice(0, 12)}... != recomputed ${this.prevDigest07.slice(0, 12)}...`);
          this.f.reason('link_mismatch');
        }
        if (this.prevDigest06 === null || link !== this.prevDigest06) this.links06 = false;
      }
    }
    this.advance(seq, digest07, bytesHash, outcome);
  }

  /**
   * The common case: every member present with the right type and strict
   * base64 bytes. Sets {@link cur} and returns true; returns false, having
   * recorded nothing, when any member needs the full check.
   */
  private wellFormedMembers(e: JsonObject): boolean {
    const seq = e.seq;
    const close = e.close;
    if (
      typeof seq !== 'number' || !Number.isSafeInteger(seq) ||
      !isNonEmptyString(e.job_id) || !isNonEmptyString(e.id) || !isNonEmptyString(e.tool) || !isNonEmptyString(e.provenance_class) ||
      typeof e.prev_digest !== 'string' ||
      !(typeof close === 'boolean' || (close === undefined && !has(e, 'close'))) ||
      // Own members only, as the full check requires (never one inherited from a prototype).
      // A JSON.parse() object has Object.prototype, which defines none of these names.
      (!(Object.getPrototypeOf(e) === Object.prototype && this.plainPrototype) &&
        (!has(e, 'seq') || !has(e, 'job_id') || !has(e, 'id') || !has(e, 'tool') || !has(e, 'provenance_class') || !has(e, 'prev_digest') || !has(e, 'canonical_bytes')))
    ) {
      return false;
    }
    const bytesHash = sha256HexOfStrictBase64(e.canonical_bytes);
    if (bytesHash === null) return false;
    const cur = this.cur;
    cur.seq = seq;
    cur.close = close === true;
    cur.bytesHash = bytesHash;
    cur.wellFormed = true;
    return true;
  }

  /** Every member check (S7.1, S7.2), each failure recorded; sets {@link cur}. */
  private checkMembers(e: JsonObject, index: number, outcome: EntryOutcome | null): void {
    const where = `entry ${index + 1}`;
    let wellFormed = true;

    // seq: a JSON number with an integer value; 1 and 1.0 are the same (S7.1).
    let seq: number | null = null;
    if (!has(e, 'seq')) {
      this.fail.members.add(`${where} lacks seq`);
      this.bad('missing_field:seq', outcome);
      wellFormed = false;
    } else if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq)) {
      this.fail.seq.add(`${where} (${describe(e.seq)})`);
      this.bad('invalid_seq', outcome);
      wellFormed = false;
    } else {
      seq = e.seq;
    }

    for (const name of REQUIRED_STRINGS) {
      if (!has(e, name)) {
        this.fail.members.add(`${where} lacks ${name}`);
        this.bad(`missing_field:${name}`, outcome);
        wellFormed = false;
      } else if (!isNonEmptyString(e[name])) {
        this.fail.members.add(`${where} ${name} ${describe(e[name])}`);
        this.bad(`invalid_field:${name}`, outcome);
        wellFormed = false;
      }
    }
    if (!has(e, 'prev_digest')) {
      this.fail.members.add(`${where} lacks prev_digest`);
      this.bad('missing_field:prev_digest', outcome);
      wellFormed = false;
    } else if (typeof e.prev_digest !== 'string') {
      this.fail.members.add(`${where} prev_digest ${describe(e.prev_digest)}`);
      this.bad('invalid_field:prev_digest', outcome);
      wellFormed = false;
    }

    let close = false;
    if (has(e, 'close')) {
      if (typeof e.close !== 'boolean') {
        this.fail.close.add(`${where} (${describe(e.close)})`);
        this.bad('invalid_close', outcome);
        wellFormed = false;
      } else close = e.close;
    }

    let bytesHash: string | null = null;
    if (!has(e, 'canonical_bytes')) {
      this.fail.members.add(`${where} lacks canonical_bytes`);
      this.bad('missing_field:canonical_bytes', outcome);
      wellFormed = false;
    } else {
      bytesHash = sha256HexOfStrictBase64(e.canonical_bytes);
      if (bytesHash === null) {
        // S7.1: fail closed, never skip or repair.
        this.fail.base64.add(where);
        this.bad('invalid_base64', outcome);
        wellFormed = false;
      }
    }
    const cur = this.cur;
    cur.seq = seq;
    cur.close = close;
    cur.bytesHash = bytesHash;
    cur.wellFormed = wellFormed;
  }

  /** A reason code for the timeline and, when collecting, for the entry. */
  private bad(code: ReasonCode, outcome: EntryOutcome | null): void {
    if (outcome && !outcome.reasons.includes(code)) outcome.reasons.push(code);
    this.f.reason(code);
  }

  private advance(seq: number | null, digest07: string | null, digest06: string | null, outcome: EntryOutcome | null): void {
    this.prevSeq = seq;
    this.prevDigest07 = digest07;
    this.prevDigest06 = digest06;
    this.lastDigest07 = digest07;
    if (outcome) this.entries.push(outcome);
  }

  // Null prototype: a provenance class such as "constructor" or "__proto__" is counted, not confused with Object.prototype.
  private provenanceCounts(): Record<string, number> {
    const counts = Object.create(null) as Record<string, number>;
    for (const [k, slot] of this.classes) counts[k] = slot.count;
    return counts;
  }

  /** Close the timeline and return its result. Call once. */
  finish(): TimelineResult {
    const f = this.f;
    const checks: Check[] = [];
    const agg = (name: string, failures: Failures, prefix: string, okDetail?: string): void => {
      if (failures.count === 0) checks.push(okDetail ? { name, ok: true, detail: okDetail } : { name, ok: true });
      else checks.push({ name, ok: false, detail: failures.text(prefix) });
    };
    const empty = this.count === 0;
    checks.push(empty ? { name: 'non_empty', ok: false, detail: 'a timeline is a non-empty array (S7.2)' } : { name: 'non_empty', ok: true, detail: `${this.count} entries` });
    if (empty) f.reason('empty_timeline');
    if (!empty) {
      agg('entries.objects', this.fail.entry, 'not JSON objects');
      agg('entries.members', this.fail.members, 'missing or malformed members');
      agg('entries.seq', this.fail.seq, 'seq is not an integer');
      agg('entries.close', this.fail.close, 'close is not a boolean');
      agg('entries.canonical_bytes', this.fail.base64, 'canonical_bytes is not strict base64');
      agg('entries.provenance_class', this.fail.provenance, 'unknown provenance class');
      if (this.genesis) checks.push(this.genesis);
      agg('sequence', this.fail.contiguous, 'not contiguous from 1');
      agg('one_job', this.fail.job, `not job ${describe(this.jobId)}`, this.jobId ? `job ${this.jobId}` : undefined);
      agg('close_only_last', this.fail.closeNotLast, 'close set before the end');
      if (this.closedAt !== null || this.lastClosed) checks.push({ name: 'closed', ok: true });
      else {
        checks.push({ name: 'closed', ok: false, detail: 'the last entry does not carry close: true' });
        f.reason('not_closed');
      }
    }

    // -06 recognition (S7.4): -07 links fail but every link equals SHA-256 of the previous entry's bytes.
    let construction: TimelineResult['construction'] = null;
    if (!empty) {
      if (this.links07 && this.fail.notEvaluated.count === 0) construction = '-07';
      else if (!this.links07 && this.links06 && this.fail.notEvaluated.count === 0 && this.linksEvaluated > 0) construction = '-06';
    }
    if (construction === '-06') {
      f.drop('link_mismatch');
      f.reason('historical_06_construction');
      checks.push({ name: 'links', ok: false, detail: 'every link follows the historical -06 construction (digest of the canonical bytes only); -07 links do not hold (S7.4)' });
    } else if (!empty && this.count > 1) {
      if (this.fail.link.count > 0) checks.push({ name: 'links', ok: false, detail: this.fail.link.text('recomputed -07 digests do not match') });
      else if (this.fail.notEvaluated.count > 0) checks.push({ name: 'links', ok: null, detail: this.fail.notEvaluated.text('not evaluated (previous entry malformed)') });
      else checks.push({ name: 'links', ok: true, detail: `${this.linksEvaluated} links recomputed under S7.1` });
    }
    checks.push({ name: 'truncation', ok: null, detail: 'not excluded by the chain alone (S7.3): needs a binding endpoint commitment' });
    f.checks.push(...checks);

    const result: TimelineResult = {
      kind: 'chain',
      verdict: f.verdict(),
      reasons: f.reasons,
      checks: f.checks,
      limits: [...CHAIN_LIMITS],
      construction,
      job_id: this.jobId,
      entry_count: this.count,
      final_entry_digest: this.lastDigest07,
      closed: this.lastClosed,
      provenance: this.provenanceCounts(),
      truncation_excluded: false,
    };
    if (this.collect) result.entries = this.entries;
    return result;
  }
}

/**
 * The result of a timeline verified in consecutive segments (each by its own
 * {@link TimelineVerifier}, the first from entry 0, the others
 * {@link TimelineVerifier.continuing}): exactly what one verifier gives over
 * all the entries. Throws RangeError when the segments are not consecutive.
 */
export function mergeTimelineSegments(segments: TimelineSegment[]): TimelineResult {
  return TimelineVerifier.merged(segments).finish();
}

/**
 * Verify a timeline given as a parsed JSON value (S7). A non-array gives
 * `invalid` with `not_array`; an empty array `empty_timeline`.
 */
export function verifyTimeline(timeline: unknown, options: { collectEntries?: boolean } = {}): TimelineResult {
  const v = new TimelineVerifier({ collectEntries: options.collectEntries ?? true });
  if (!Array.isArray(timeline)) {
    const r = v.finish();
    r.checks.unshift({ name: 'array', ok: false, detail: 'a timeline is a JSON array of entries' });
    r.reasons = ['not_array'];
    r.verdict = 'invalid';
    r.checks = r.checks.filter((c) => c.name === 'array' || c.name === 'truncation');
    return r;
  }
  for (const e of timeline) v.push(e);
  return v.finish();
}

/**
 * The S7.1 entry digest of one well-formed entry, or null when any bound
 * member is missing or malformed. Used by the ledger to compute heads.
 */
export function entryDigest(entry: unknown): string | null {
  const v = new TimelineVerifier({ collectEntries: true });
  v.push(entry);
  const r = v.finish();
  return r.entries?.[0]?.entry_digest ?? null;
}
