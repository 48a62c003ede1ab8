/**
 * Worker thread of the parallel NDJSON timeline verifier (see
 * parallel-chain.ts): verifies one byte range of the file, which starts at
 * a line start and ends after a LF (or at the end of the file).
 *
 * Protocol (workerData: {@link SegmentRange}):
 *  1. the worker reads its range and answers {@link Counted}: its lines and
 *     entries (non-blank lines), where its last entry line is, and the
 *     first non-empty job_id in it;
 *  2. the main thread answers {@link VerifyOrder} (where the segment starts
 *     in the timeline, the entry before it, the job so far) and the worker
 *     verifies its range and answers {@link Verified}.
 * Any failure is answered `{type: 'error', message}`.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { isNonEmptyString, isObject, TimelineSegment, TimelineVerifier } from '../core/aer1';
import { changedWhileRead, isJsonSpace, LineCounts, LineSplitter, MAX_LINE_BYTES, parseLine, RawLine, timelineLineReader } from './input';

/** Read size: large reads into one reused buffer (64 KiB stream chunks cost 4x as much per byte, measured). */
const READ_CHUNK = 1024 * 1024;

/** The range a worker verifies: bytes [start, end) of `path`. */
export interface SegmentRange {
  path: string;
  start: number;
  end: number;
}

/** Lines that hold an entry are the non-blank ones; a line too long to read counts as one (an invalid entry). */
export interface Counted {
  type: 'counted';
  lines: number;
  entries: number;
  /** Byte range of the last entry line (CR included, LF excluded), or null when the range has none. */
  lastEntry: { start: number; end: number } | null;
  firstJobId: string | null;
}

export interface VerifyOrder {
  type: 'verify';
  /** Index of the segment's first entry in the timeline, and number of its first line. */
  startIndex: number;
  firstLineNo: number;
  /** The first non-empty job_id before this segment (null if none). */
  jobId: string | null;
  /** Byte range of the entry line right before the segment (null when the segment starts the timeline). */
  previous: { start: number; end: number } | null;
}

export type SegmentStats = LineCounts;

export interface Verified {
  type: 'verified';
  segment: TimelineSegment;
  stats: SegmentStats;
}

/** The bytes of the range in order, read into one reused buffer: use each chunk before asking for the next. */
function* chunksOf(range: SegmentRange): Generator<Buffer> {
  if (range.end <= range.start) return;
  const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, range.end - range.start));
  const fd = openSync(range.path, 'r');
  try {
    for (let pos = range.start; pos < range.end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, range.end - pos), pos);
      if (n === 0) throw new Error(changedWhileRead(range.path));
      yield buf.subarray(0, n);
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

function eachLine(range: SegmentRange, firstLineNo: number, onLine: (line: RawLine) => void): void {
  const splitter = new LineSplitter(MAX_LINE_BYTES, firstLineNo, range.start);
  for (const chunk of chunksOf(range)) splitter.push(chunk, onLine);
  splitter.end(onLine);
}

/**
 * Count lines and entry lines without splitting or decoding (one native LF
 * search per line), as the splitter and parseLine would classify them: a
 * line is blank when it has only white space and is not too long to read.
 */
function count(range: SegmentRange): Counted {
  const c: Counted = { type: 'counted', lines: 0, entries: 0, lastEntry: null, firstJobId: null };
  let lineStart = range.start;
  let blank = true; // no non-space byte seen yet on the current line
  const endLine = (end: number): void => {
    c.lines++;
    if (blank && end - lineStart <= MAX_LINE_BYTES) return;
    c.entries++;
    c.lastEntry = { start: lineStart, end };
  };
  let base = range.start;
  for (const chunk of chunksOf(range)) {
    let i = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, i);
      const stop = nl === -1 ? chunk.length : nl;
      // Usually the first byte of a line settles it; only leading white space is scanned.
      for (let k = i; blank && k < stop; k++) if (!isJsonSpace(chunk[k])) blank = false;
      if (nl === -1) break;
      endLine(base + nl);
      lineStart = base + nl + 1;
      blank = true;
      i = nl + 1;
    }
    base += chunk.length;
  }
  if (lineStart < range.end) endLine(range.end); // a last line without LF
  c.firstJobId = firstJobId(range);
  return c;
}

/** The first non-empty job_id of an entry in the range: read only as far as that entry (usually the first line). */
function firstJobId(range: SegmentRange): string | null {
  const splitter = new LineSplitter(MAX_LINE_BYTES, 1, range.start);
  let found: string | null = null;
  const onLine = (line: RawLine): void => {
    if (found !== null) return;
    const p = parseLine(line);
    if (p.type === 'json' && isObject(p.value) && isNonEmptyString(p.value.job_id)) found = p.value.job_id;
  };
  for (const chunk of chunksOf(range)) {
    splitter.push(chunk, onLine);
    if (found !== null) return found; // leaving the loop closes the file
  }
  splitter.end(onLine);
  return found;
}

/** The entry on the line at `at`, as the one-thread path pushes it (a line that is not JSON as undefined). */
function entryAt(path: string, at: { start: number; end: number }): unknown {
  let line: RawLine = { no: 0, bytes: null, start: at.start, end: at.end };
  if (at.end - at.start <= MAX_LINE_BYTES) {
    const bytes = Buffer.alloc(at.end - at.start);
    const fd = openSync(path, 'r');
    try {
      let got = 0;
      while (got < bytes.length) {
        const n = readSync(fd, bytes, got, bytes.length - got, at.start + got);
        if (n === 0) throw new Error(changedWhileRead(path));
        got += n;
      }
    } finally {
      closeSync(fd);
    }
    // The same splitter as the main pass (the range holds no LF): drops a trailing CR.
    const s = new LineSplitter();
    s.push(bytes, (l) => (line = l));
    s.end((l) => (line = l));
  }
  const p = parseLine(line);
  return p.type === 'json' ? p.value : undefined;
}

function verify(range: SegmentRange, order: VerifyOrder): Verified {
  const v = order.previous === null ? new TimelineVerifier({ collectEntries: false }) : TimelineVerifier.continuing(order.startIndex, entryAt(range.path, order.previous), order.jobId);
  const stats: SegmentStats = { lines: 0, blank_lines: 0, not_json_lines: 0, not_json_at: [] };
  eachLine(range, order.firstLineNo, timelineLineReader(v, stats));
  return { type: 'verified', segment: v.segment(), stats };
}

if (parentPort) {
  const port = parentPort;
  const range = workerData as SegmentRange;
  const fail = (err: unknown): void => port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  port.once('message', (order: VerifyOrder) => {
    try {
      port.postMessage(verify(range, order));
    } catch (err) {
      fail(err);
    }
  });
  try {
    port.postMessage(count(range));
  } catch (err) {
    fail(err);
  }
}
