/**
 * Segments: a timeline verified in consecutive runs (worker threads), each
 * by its own verifier, and merged into exactly the result of one verifier
 * over all the entries.
 */
import { Check } from './result';
import type { ReasonCode } from './reasons';
import { FAILURE_KINDS, LinkState, RunFindings } from './chain-state';

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
  state: LinkState;
}

/** The segment of `run`, whose entries are `startIndex` to `startIndex + count - 1`, ending in `link`. */
export function segmentOf(run: RunFindings, link: LinkState, startIndex: number, count: number, jobId: string | null): TimelineSegment {
  const failures: TimelineSegment['failures'] = {};
  for (const k of FAILURE_KINDS) failures[k] = { listed: [...run.failures[k].listed], count: run.failures[k].count };
  return {
    startIndex,
    count,
    jobId,
    reasons: run.findings.reasons,
    failures,
    provenance: [...run.classes].map(([k, slot]) => [k, slot.count, slot.known]),
    links07: run.links07,
    links06: run.links06,
    linksEvaluated: run.linksEvaluated,
    genesis: run.genesis,
    state: { prevSeq: link.prevSeq, prevDigest07: link.prevDigest07, prevDigest06: link.prevDigest06, lastDigest07: link.lastDigest07, closedAt: link.closedAt, lastClosed: link.lastClosed, prevErased: link.prevErased },
  };
}

/** Fold the findings of `s`, the segment right after those of `run`, into `run`; its end state into `link`. */
export function absorbSegment(run: RunFindings, link: LinkState, s: TimelineSegment): void {
  for (const r of s.reasons) run.findings.reason(r);
  for (const k of FAILURE_KINDS) run.failures[k].absorb(s.failures[k]);
  for (const [k, count, known] of s.provenance) {
    const slot = run.classes.get(k);
    if (slot) slot.count += count;
    else run.classes.set(k, { count, known });
  }
  run.links07 &&= s.links07;
  run.links06 &&= s.links06;
  run.linksEvaluated += s.linksEvaluated;
  if (s.startIndex === 0) run.genesis = s.genesis;
  ({ prevSeq: link.prevSeq, prevDigest07: link.prevDigest07, prevDigest06: link.prevDigest06, lastDigest07: link.lastDigest07, closedAt: link.closedAt, lastClosed: link.lastClosed, prevErased: link.prevErased } = s.state);
}
