/**
 * A timeline verified in consecutive segments (TimelineVerifier.continuing,
 * then mergeTimelineSegments) must give exactly the result one verifier gives
 * over all the entries: the parallel CLI relies on it. Timelines are built
 * with the reference, then damaged in many ways at once, so that findings,
 * reason order, listed positions and the end state all cross segment
 * boundaries.
 */
import * as fc from 'fast-check';
import { mergeTimelineSegments, TimelineSegment, TimelineVerifier } from '../../src/core/aer1';
import { refBuildTimeline, refEntrySpec } from './helpers';

/** One verifier over all entries, streaming (as the CLI runs it). */
function whole(entries: unknown[]) {
  const v = new TimelineVerifier({ collectEntries: false });
  for (const e of entries) v.push(e);
  return v.finish();
}

/** The same entries in segments starting at `cuts` (sorted, distinct, inside 1..n-1), each verified on its own. */
function segmented(entries: unknown[], cuts: number[], jobId: string | null) {
  const starts = [0, ...cuts];
  const segments: TimelineSegment[] = starts.map((start, k) => {
    const end = k + 1 < starts.length ? starts[k + 1] : entries.length;
    const v = start === 0 ? new TimelineVerifier({ collectEntries: false }) : TimelineVerifier.continuing(start, entries[start - 1], jobId);
    for (let i = start; i < end; i++) v.push(entries[i]);
    // Through structured clone, as a worker thread sends it.
    return structuredClone(v.segment());
  });
  return mergeTimelineSegments(segments);
}

/** The first non-empty job_id among the entries, as the CLI finds it. */
function firstJob(entries: unknown[]): string | null {
  for (const e of entries) {
    const j = (e as { job_id?: unknown } | null)?.job_id;
    if (typeof e === 'object' && e !== null && typeof j === 'string' && j.length > 0) return j;
  }
  return null;
}

const damage = fc.constantFrom(
  'none', 'none', 'none', 'close', 'unclose', 'seq+1', 'seq=str', 'job', 'job=""', 'tool=1', 'prov', 'bytes', 'b64', 'prev', 'drop-id', 'not-object', 'null', 'extra',
);

function apply(e: Record<string, unknown>, d: string): unknown {
  const x = { ...e };
  switch (d) {
    case 'close': x.close = true; break;
    case 'unclose': delete x.close; break;
    case 'seq+1': x.seq = (x.seq as number) + 1; break;
    case 'seq=str': x.seq = '1'; break;
    case 'job': x.job_id = 'other-job'; break;
    case 'job=""': x.job_id = ''; break;
    case 'tool=1': x.tool = 1; break;
    case 'prov': x.provenance_class = 'SAID BY SOMEONE'; break;
    case 'bytes': x.canonical_bytes = Buffer.from('changed').toString('base64'); break;
    case 'b64': x.canonical_bytes = 'not base64!'; break;
    case 'prev': x.prev_digest = 'f'.repeat(64); break;
    case 'drop-id': delete x.id; break;
    case 'not-object': return [x];
    case 'null': return null;
    case 'extra': x.note = 'ignored'; break;
  }
  return x;
}

describe('timeline segments merge to the one-verifier result', () => {
  test('valid timelines, any cuts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (n, rawCuts) => {
        const t = refBuildTimeline(refEntrySpec('job-seg', n));
        const cuts = [...new Set(rawCuts.map((c) => 1 + (c % Math.max(1, n - 1))))].filter((c) => c < n).sort((a, b) => a - b);
        expect(segmented(t, cuts, firstJob(t))).toEqual(whole(t));
      }),
      { numRuns: 150 },
    );
  });

  test('damaged timelines (several faults at once), any cuts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.tuple(fc.nat(), damage), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (n, faults, rawCuts) => {
          const entries: unknown[] = refBuildTimeline(refEntrySpec('job-seg', n));
          for (const [at, d] of faults) entries[at % n] = apply(entries[at % n] as Record<string, unknown>, d);
          const cuts = [...new Set(rawCuts.map((c) => 1 + (c % Math.max(1, n - 1))))].filter((c) => c < n).sort((a, b) => a - b);
          expect(segmented(entries, cuts, firstJob(entries))).toEqual(whole(entries));
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a -06 timeline stays historical when split', () => {
    const t = refBuildTimeline(refEntrySpec('job-06', 9), '-06');
    const r = segmented(t, [3, 4, 8], 'job-06');
    expect(r).toEqual(whole(t));
    expect(r.verdict).toBe('historical');
  });

  test('more than 20 failures of one kind over several segments: the first 20 listed, the rest counted', () => {
    const t: unknown[] = refBuildTimeline(refEntrySpec('job-many', 50)).map((e, i) => (i % 2 === 1 ? { ...e, provenance_class: 'UNKNOWN' } : e));
    const r = segmented(t, [7, 19, 33], 'job-many');
    expect(r).toEqual(whole(t));
    expect(r.checks.find((c) => c.name === 'entries.provenance_class')?.detail).toMatch(/ and 5 more$/);
  });

  test('segments out of order are refused', () => {
    const t = refBuildTimeline(refEntrySpec('job-order', 4));
    const a = new TimelineVerifier({ collectEntries: false });
    a.push(t[0]);
    a.push(t[1]);
    const b = TimelineVerifier.continuing(3, t[2], 'job-order');
    b.push(t[3]);
    expect(() => mergeTimelineSegments([a.segment(), b.segment()])).toThrow(RangeError);
  });
});
