/**
 * Hash-chained job timelines (S7): the -07 entry digest (S7.1), the chain
 * rules (S7.2), the honest limit (S7.3) and the -06 construction (S7.4;
 * spec README reading 8).
 *
 * {@link TimelineVerifier} takes entries one at a time so that a timeline of
 * millions of entries verifies in constant memory; {@link verifyTimeline}
 * runs it over an array. The verifier's parts: chain-entry.ts (the member
 * checks of one entry), chain-state.ts (the findings and the link state it
 * carries), chain-segment.ts (segments verified apart and their merge),
 * chain-result.ts (the checks and verdict from the findings).
 */
import { EntryDigestInputWriter } from './canonical-json';
import { isNonEmptyString, isObject, describe } from './result';
import { provenanceKind, ZERO_DIGEST } from './identifiers';
import { sha256Hex } from './sha256';
import { checkMembers, EntryMembers, EntryOutcome, prototypeIsPlain, reasonFor, wellFormedMembers } from './chain-entry';
import { absorbSegment, segmentOf, TimelineSegment } from './chain-segment';
import { LinkState, newLinkState, newRunFindings, ProvenanceSlot, RunFindings } from './chain-state';
import { timelineResult, TimelineResult } from './chain-result';
import type { ReasonCode } from './reasons';

export { CHAIN_LIMITS } from './chain-result';
export type { TimelineResult } from './chain-result';

export type { EntryOutcome } from './chain-entry';
export type { TimelineSegment } from './chain-segment';

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

/**
 * Streaming verifier for one timeline (S7.2). Feed entries in order with
 * {@link push}, then call {@link finish} once. Memory is constant in the
 * number of entries unless `collectEntries` is set.
 */
export class TimelineVerifier {
  private readonly collect: boolean;
  private readonly entries: EntryOutcome[] = [];
  private count = 0;
  private jobId: string | null = null;
  /** Index of the first entry this verifier was given (0 unless {@link continuing}). */
  private startIndex = 0;
  /** The findings over the entries given here. */
  private run: RunFindings = newRunFindings();
  /** The chain after the last entry. */
  private readonly link: LinkState = newLinkState();
  /** The members of the entry being pushed, as the entry checks found them. */
  private readonly members: EntryMembers = { seq: null, close: false, bytesHash: null, wellFormed: false };
  private readonly writer = new EntryDigestInputWriter();
  private readonly plainPrototype = prototypeIsPlain();

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
    v.push(previous); // sets the link state after the previous entry ...
    v.run = newRunFindings(); // ... whose findings belong to the segment before
    v.startIndex = startIndex;
    return v;
  }

  /** Whether `code` is among the reasons found over the entries pushed here (the reasons of {@link segment}, without copying its findings). */
  hasReason(code: ReasonCode): boolean {
    return this.run.findings.has(code);
  }

  /** The S7.1 (-07) digest of the last entry pushed, as {@link entryDigest} gives it; null when that entry was malformed or erased, or none was pushed. */
  get lastEntryDigest(): string | null {
    return this.link.lastDigest07;
  }

  /** The findings and end state of the entries pushed here, for {@link mergeTimelineSegments}. Not when collecting entries. */
  segment(): TimelineSegment {
    if (this.collect) throw new Error('segments are for streaming verifiers (collectEntries: false)');
    return segmentOf(this.run, this.link, this.startIndex, this.count - this.startIndex, this.jobId);
  }

  /** Fold `s`, the segment right after what this verifier holds, into it. */
  private absorb(s: TimelineSegment): void {
    if (s.startIndex !== this.count) throw new RangeError(`segment starts at entry ${s.startIndex + 1}, expected entry ${this.count + 1}`);
    if (s.count === 0) return;
    this.count += s.count;
    if (this.jobId === null) this.jobId = s.jobId;
    absorbSegment(this.run, this.link, s);
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
    const run = this.run;
    const link = this.link;
    if (link.closedAt !== null) {
      run.failures.closeNotLast.add(`seq of entry ${link.closedAt + 1} closes before entry ${index + 1}`);
      run.findings.reason('close_not_last');
      link.closedAt = null; // report each early close once
    }
    if (!isObject(entry)) {
      run.failures.entry.add(`entry ${index + 1}`);
      reasonFor(run, 'invalid_entry', outcome);
      link.lastClosed = false;
      this.advance(null, null, null, outcome);
      return;
    }
    const e = entry;
    // The member checks: a fast test for the common well-formed entry, and the
    // full check (every failure named) only when it does not pass.
    const members = this.members;
    if (!wellFormedMembers(e, members, this.plainPrototype)) checkMembers(e, index, run, outcome, members);
    const seq = members.seq;
    const close = members.close;
    const bytesHash = members.bytesHash;
    if (outcome) {
      outcome.seq = seq;
      outcome.output_hash = bytesHash;
    }

    // Provenance class: counted as recorded (S7.3), classified once per distinct value (S5).
    const pc = e.provenance_class;
    let klass: ProvenanceSlot | undefined;
    if (typeof pc === 'string') {
      klass = run.classes.get(pc);
      if (klass === undefined) {
        klass = { count: 0, known: pc.length === 0 || provenanceKind(pc) !== null };
        run.classes.set(pc, klass);
      }
      klass.count++;
      if (!klass.known) {
        run.failures.provenance.add(`entry ${index + 1} (${describe(pc)})`);
        reasonFor(run, 'unknown_provenance_class', outcome);
      }
    }

    // One job (S7.2).
    const jobId = e.job_id;
    if (isNonEmptyString(jobId)) {
      if (this.jobId === null) this.jobId = jobId;
      else if (jobId !== this.jobId) {
        run.failures.job.add(`entry ${index + 1} (${describe(jobId)})`);
        run.findings.reason('job_id_mismatch');
      }
    }

    // Genesis (S7.2).
    const prev = e.prev_digest;
    if (index === 0) {
      const ok = prev === ZERO_DIGEST;
      run.genesis = { name: 'genesis', ok, ...(ok ? {} : { detail: `first prev_digest is ${describe(prev)}, not 64 zeros` }) };
      if (!ok) run.findings.reason('genesis_prev_digest');
    }

    // Sequence (S7.2): 1, then exactly one more than the previous entry.
    if (seq !== null) {
      const expected = index === 0 ? 1 : link.prevSeq !== null ? link.prevSeq + 1 : null;
      if (expected !== null && seq !== expected) {
        run.failures.contiguous.add(`entry ${index + 1} has seq ${seq}, expected ${expected}`);
        run.findings.reason('seq_not_contiguous');
      }
    }

    if (close) link.closedAt = index;
    link.lastClosed = close;

    let digest07: string | null = null;
    if (members.wellFormed && bytesHash !== null && seq !== null) {
      // Members checked above: strings, a safe integer seq, a boolean close.
      // A prev_digest equal to a digest computed here is lowercase hex: nothing to escape.
      const prevDigest = prev as string;
      digest07 = sha256Hex(
        this.writer.write(close, e.id as string, jobId as string, bytesHash, prevDigest, pc as string, seq, e.tool as string, prevDigest === link.prevDigest07 || prevDigest === ZERO_DIGEST),
      );
      if (outcome) outcome.entry_digest = digest07;
    }

    // Links (S7.2): recomputed, never trusted.
    if (index > 0) {
      const given = typeof prev === 'string' ? prev : null;
      if (link.prevErased) {
        run.failures.linkErased.add(`entry ${index + 1}`);
      } else if (link.prevDigest07 === null || given === null) {
        run.failures.notEvaluated.add(`entry ${index + 1}`);
        run.links07 = false;
        run.links06 = false;
      } else {
        run.linksEvaluated++;
        if (given !== link.prevDigest07) {
          run.links07 = false;
          run.failures.link.add(`entry ${index + 1} prev_digest ${given.slice(0, 12)}... != recomputed ${link.prevDigest07.slice(0, 12)}...`);
          run.findings.reason('link_mismatch');
        }
        if (link.prevDigest06 === null || given !== link.prevDigest06) run.links06 = false;
      }
    }
    this.advance(seq, digest07, bytesHash, outcome);
  }

  /**
   * An entry whose content was erased (issue 29), given by what the ledger
   * still holds of it: `seq`, `close` and `provenance_class` as recorded.
   * Its digest cannot be recomputed, so its own link and the next entry's
   * link to it cannot be re-checked: they are counted apart
   * (`erased.links_not_rechecked`), never as holding nor as failing.
   */
  pushErased(known: { seq: number | null; close: boolean; provenance_class: string | null }): void {
    const index = this.count++;
    const outcome: EntryOutcome | null = this.collect ? { index, seq: known.seq, entry_digest: null, output_hash: null, reasons: [] } : null;
    const run = this.run;
    const link = this.link;
    if (link.closedAt !== null) {
      run.failures.closeNotLast.add(`seq of entry ${link.closedAt + 1} closes before entry ${index + 1}`);
      run.findings.reason('close_not_last');
      link.closedAt = null;
    }
    run.failures.erased.add(`entry ${index + 1}${known.seq === null ? '' : ` (seq ${known.seq})`}`);
    if (known.provenance_class !== null) {
      const slot = run.classes.get(known.provenance_class);
      if (slot) slot.count++;
      else run.classes.set(known.provenance_class, { count: 1, known: known.provenance_class.length === 0 || provenanceKind(known.provenance_class) !== null });
    }
    if (index === 0) run.genesis = { name: 'genesis', ok: null, detail: 'entry 1 was erased: its prev_digest cannot be re-checked' };
    else run.failures.linkErased.add(`entry ${index + 1}`);
    if (known.seq !== null) {
      const expected = index === 0 ? 1 : link.prevSeq !== null ? link.prevSeq + 1 : null;
      if (expected !== null && known.seq !== expected) {
        run.failures.contiguous.add(`entry ${index + 1} has seq ${known.seq}, expected ${expected}`);
        run.findings.reason('seq_not_contiguous');
      }
    }
    if (known.close) link.closedAt = index;
    link.lastClosed = known.close;
    this.advance(known.seq, null, null, outcome);
    link.prevErased = true;
  }

  /** Move the link state past the entry just checked. */
  private advance(seq: number | null, digest07: string | null, digest06: string | null, outcome: EntryOutcome | null): void {
    const link = this.link;
    link.prevSeq = seq;
    link.prevDigest07 = digest07;
    link.prevDigest06 = digest06;
    link.lastDigest07 = digest07;
    link.prevErased = false;
    if (outcome) this.entries.push(outcome);
  }

  /** Close the timeline and return its result. Call once. */
  finish(): TimelineResult {
    return timelineResult(this.run, this.link, this.count, this.jobId, this.collect ? this.entries : null);
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
