/**
 * What a {@link TimelineVerifier} carries from entry to entry, in two parts
 * each made by one function: the findings of the entries it was given
 * ({@link RunFindings}: reasons, failures per rule, provenance counts, link
 * tallies) and the link state after the last entry ({@link LinkState}: what
 * the next entry's seq and prev_digest are checked against, S7.2).
 */
import { Check, Findings } from './result';

/** At most this many positions are named per failing rule; the rest are counted. */
const MAX_LISTED = 20;

/** Positions where one rule failed, for one aggregated check: the first {@link MAX_LISTED} named, all counted. */
export class FailureList {
  readonly listed: string[] = [];
  count = 0;

  add(where: string): void {
    this.count++;
    if (this.listed.length < MAX_LISTED) this.listed.push(where);
  }

  /** Append the failures of the entries that follow (a later segment). */
  absorb(later: { listed: readonly string[]; count: number }): void {
    this.count += later.count;
    for (const w of later.listed) if (this.listed.length < MAX_LISTED) this.listed.push(w);
  }

  text(prefix: string): string {
    const more = this.count > this.listed.length ? ` and ${this.count - this.listed.length} more` : '';
    return `${prefix}: ${this.listed.join(', ')}${more}`;
  }
}

/** The rules whose failures are aggregated into one check each (named in finish()). */
export const FAILURE_KINDS = ['entry', 'members', 'seq', 'close', 'base64', 'provenance', 'contiguous', 'job', 'closeNotLast', 'link', 'notEvaluated', 'erased', 'linkErased'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** One provenance class as counted: how often, and whether S5 defines it (the empty string is a member failure instead). */
export interface ProvenanceSlot {
  count: number;
  known: boolean;
}

/** The findings over a run of consecutive entries. */
export interface RunFindings {
  findings: Findings;
  failures: Record<FailureKind, FailureList>;
  /** Per distinct provenance class, in order of first appearance (classified once). */
  classes: Map<string, ProvenanceSlot>;
  /** Every evaluated link holds under the -07 construction (S7.1). */
  links07: boolean;
  /** Every evaluated link holds under the historical -06 construction (S7.4). */
  links06: boolean;
  linksEvaluated: number;
  /** The genesis check, when the run holds entry 0. */
  genesis: Check | null;
}

/** Findings of no entries yet. */
export function newRunFindings(): RunFindings {
  const failures = Object.fromEntries(FAILURE_KINDS.map((k) => [k, new FailureList()])) as Record<FailureKind, FailureList>;
  return { findings: new Findings(), failures, classes: new Map(), links07: true, links06: true, linksEvaluated: 0, genesis: null };
}

/** The chain after the last entry given: what the next one continues (plain data, sent between threads). */
export interface LinkState {
  prevSeq: number | null;
  /** The -07 digest of the previous entry (null when it was malformed). */
  prevDigest07: string | null;
  /** The -06 digest of the previous entry: SHA-256 of its canonical bytes. */
  prevDigest06: string | null;
  /** The -07 digest of the last entry: the final entry digest. */
  lastDigest07: string | null;
  /** Index of an entry that closed before the end, not yet reported. */
  closedAt: number | null;
  lastClosed: boolean;
  /** The previous entry's content was erased (issue 29): the next link cannot be re-checked. */
  prevErased: boolean;
}

/** The state before the first entry. */
export function newLinkState(): LinkState {
  return { prevSeq: null, prevDigest07: null, prevDigest06: null, lastDigest07: null, closedAt: null, lastClosed: false, prevErased: false };
}
