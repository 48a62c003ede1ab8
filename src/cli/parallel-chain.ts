/**
 * An NDJSON timeline file verified on several threads: the file is cut into
 * byte ranges at line starts, one worker thread per range (chain-worker.ts)
 * verifies its entries with its own TimelineVerifier continuing from the
 * entry before the range, and the segments are merged with
 * `mergeTimelineSegments`: the result is exactly the one-thread result
 * (tested), in the same constant memory per thread.
 *
 * Only for a file (stdin can be read once) and only where the compiled
 * worker script exists (not when running from TypeScript sources).
 */
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { mergeTimelineSegments, TimelineResult, TimelineSegment } from '../core/aer1';
import type { Counted, SegmentRange, SegmentStats, Verified, VerifyOrder } from './chain-worker';
import { changedWhileRead, NOT_JSON_LISTED } from './input';
import { CliError, errorText } from './io';
import { NdjsonStats } from './report';

/** Without `--threads`, files smaller than this verify on one thread (starting workers costs about 50 ms each). */
export const PARALLEL_MIN_BYTES = 16 * 1024 * 1024;
/** Without `--threads`, at least this many bytes per worker. */
const SEGMENT_MIN_BYTES = 4 * 1024 * 1024;
/** Worker threads used without `--threads`: one per available CPU, at most this many. */
const AUTO_MAX_THREADS = 8;

const WORKER_SCRIPT = join(__dirname, 'chain-worker.js');

/**
 * How many threads to verify a `size`-byte file with: `requested` (from
 * `--threads`) as given, else one per CPU for files of at least
 * {@link PARALLEL_MIN_BYTES} (and {@link SEGMENT_MIN_BYTES} per thread).
 */
export function threadsFor(size: number, requested: number | undefined): number {
  if (requested !== undefined) return Math.max(1, Math.min(requested, size));
  if (size < PARALLEL_MIN_BYTES) return 1;
  return Math.max(1, Math.min(availableParallelism(), AUTO_MAX_THREADS, Math.floor(size / SEGMENT_MIN_BYTES)));
}

/** The offset just after the first LF at or after `from` (the file's size when there is none). */
function nextLineStart(fd: number, from: number, size: number): number {
  const buf = Buffer.alloc(64 * 1024);
  let at = from;
  while (at < size) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
    if (n === 0) break;
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl >= 0) return at + nl + 1;
    at += n;
  }
  return size;
}

/** Byte ranges of about equal size, each starting at a line start; empty ranges dropped. */
function ranges(path: string, size: number, parts: number): SegmentRange[] {
  const cuts = [0];
  const fd = openSync(path, 'r');
  try {
    for (let i = 1; i < parts; i++) {
      const cut = nextLineStart(fd, Math.floor((size * i) / parts), size);
      if (cut > cuts[cuts.length - 1] && cut < size) cuts.push(cut);
    }
  } finally {
    closeSync(fd);
  }
  return cuts.map((start, i) => ({ path, start, end: i + 1 < cuts.length ? cuts[i + 1] : size }));
}

type Answer = Counted | Verified | { type: 'error'; message: string };

/** One worker and its answers, in order. */
class SegmentWorker {
  private readonly worker: Worker;
  private readonly answers: Answer[] = [];
  private waiting: ((a: Answer) => void) | null = null;

  constructor(private readonly range: SegmentRange) {
    // Small young generation: each worker keeps one line and one entry at a time.
    this.worker = new Worker(WORKER_SCRIPT, { workerData: range, resourceLimits: { maxYoungGenerationSizeMb: 16 } });
    const deliver = (a: Answer): void => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = null;
        w(a);
      } else this.answers.push(a);
    };
    this.worker.on('message', deliver);
    this.worker.on('error', (err) => deliver({ type: 'error', message: errorText(err) }));
    this.worker.on('exit', (code) => deliver({ type: 'error', message: `worker thread exited with code ${code}` }));
  }

  next<T extends Answer['type']>(type: T): Promise<Extract<Answer, { type: T }>> {
    const path = this.range.path;
    const check = (a: Answer): Extract<Answer, { type: T }> => {
      if (a.type === 'error') throw new CliError(a.message === changedWhileRead(path) ? a.message : `cannot verify the timeline: ${a.message}`);
      if (a.type !== type) throw new CliError(`cannot verify the timeline: worker answered ${a.type}, expected ${type}`);
      return a as Extract<Answer, { type: T }>;
    };
    const queued = this.answers.shift();
    if (queued) return Promise.resolve(queued).then(check);
    return new Promise<Answer>((resolve) => (this.waiting = resolve)).then(check);
  }

  send(order: VerifyOrder): void {
    this.worker.postMessage(order);
  }

  async stop(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }
}

/**
 * Verify the NDJSON timeline in `path` on worker threads ({@link threadsFor}
 * `requested`, from `--threads`). Returns null when that is not possible
 * or not worth it (one thread, a file too small to cut, no compiled worker
 * script): the caller then streams it on this thread. Throws CliError when
 * the file cannot be read.
 */
export async function verifyTimelineFileInParallel(path: string, requested: number | undefined): Promise<{ result: TimelineResult; ndjson: NdjsonStats } | null> {
  if (!existsSync(WORKER_SCRIPT)) return null;
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${errorText(err)}`);
  }
  const threads = threadsFor(size, requested);
  if (threads < 2) return null;
  const parts = ranges(path, size, threads);
  if (parts.length < 2) return null;
  const workers = parts.map((r) => new SegmentWorker(r));
  try {
    const counted = await Promise.all(workers.map((w) => w.next('counted')));
    // Where each segment starts in the timeline, and what comes before it.
    let startIndex = 0;
    let firstLineNo = 1;
    let jobId: string | null = null;
    let previous: { start: number; end: number } | null = null;
    workers.forEach((w, k) => {
      w.send({ type: 'verify', startIndex, firstLineNo, jobId, previous: startIndex === 0 ? null : previous });
      const c = counted[k];
      startIndex += c.entries;
      firstLineNo += c.lines;
      jobId ??= c.firstJobId;
      if (c.lastEntry) previous = c.lastEntry;
    });
    const verified = await Promise.all(workers.map((w) => w.next('verified')));
    const segments: TimelineSegment[] = verified.map((v) => v.segment);
    const stats = verified.map((v) => v.stats);
    return { result: mergeTimelineSegments(segments), ndjson: mergeStats(stats) };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

function mergeStats(stats: SegmentStats[]): NdjsonStats {
  const out: NdjsonStats = { format: 'ndjson', lines: 0, blank_lines: 0, not_json_lines: 0, not_json_at: [] };
  for (const s of stats) {
    out.lines += s.lines;
    out.blank_lines += s.blank_lines;
    out.not_json_lines += s.not_json_lines;
    for (const no of s.not_json_at) if (out.not_json_at.length < NOT_JSON_LISTED) out.not_json_at.push(no);
  }
  return out;
}
