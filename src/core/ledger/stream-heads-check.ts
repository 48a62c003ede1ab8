/**
 * Checking a stream-heads statement (src/core/tlog/stream-heads.ts) against
 * the log's leaves (issue 30): fed every leaf from index 0 to the
 * statement's size, in order, it finds for each named stream whether the
 * claimed head is the event at that position with that stream id and hash,
 * and whether any later leaf up to the size belongs to the same stream (a
 * signed statement saying otherwise is a signed false statement). Pure and
 * streaming: memory is one entry per named stream, never per leaf. The
 * caller computes the root of the leaves it fed (TreeIntegrator) and gives
 * it to {@link HeadsChecker.finish}, so the leaves are proven to be the ones
 * under the checkpoint the statement names.
 *
 * Leaves of every format carry their stream id, so heads are checked on
 * format 1 and 2 leaves too; only format 3 leaves carry `stream_prev`, the
 * link an offline verifier needs to prove a pack holds a stream from its
 * first event (reported as `first_format3_position`).
 *
 * An answer set (`answers:<receipt>:<subject>`, ./answer-sets.ts) is checked
 * like a stream whose events are the `OutcomeReported` leaves naming that
 * receipt and subject: its head must be the newest of them, and the
 * statement must name the `outcome:<id>` stream of each (`answer_not_listed`
 * otherwise: the statement claims the set whole).
 */
import { sha256Hex } from '../aer1';
import { StreamHead, StreamHeads } from '../tlog/stream-heads';
import { AnswerSet, inAnswerSet, outcomeIdsOf, parseAnswersStreamId } from './answer-sets';
import { LeafError, parseLeaf } from './leaf';

/** One leaf as the log serves it: its bytes (null when withheld or erased) and its RFC 6962 leaf hash. */
export interface ServedLeaf {
  readonly index: number;
  readonly leaf: Buffer | null;
  /** Why `leaf` is null, as the log says. */
  readonly withheld?: string;
}

/** The event that shows a claimed head is not the newest of its stream. */
export interface LaterEvent {
  position: number;
  stream_position: number;
  type: string;
  event_hash: string;
}

/** What was found for one named stream. */
export interface HeadFinding {
  stream_id: string;
  claimed: { position: number; event_hash: string | null };
  /**
   * `consistent`; `contradicted` (a later event of the stream exists at or
   * below the size: `later` names the first); `head_mismatch` (the leaf at
   * the claimed position is another stream's, or another event);
   * `chain_broken` (the log's own leaves of the stream disagree on
   * stream_position or stream_prev); `unchecked` (a leaf that matters could
   * not be read: withheld from this caller, or erased).
   */
  verdict: 'consistent' | 'contradicted' | 'head_mismatch' | 'chain_broken' | 'unchecked';
  code?: 'later_event' | 'answer_not_listed' | 'head_not_in_stream' | 'head_hash_mismatch' | 'stream_position_mismatch' | 'stream_prev_mismatch' | 'head_withheld' | 'withheld_after_head';
  detail: string;
  later?: LaterEvent;
  later_count: number;
  /** Events of the stream up to its head on format 1 or 2 leaves (no stream_prev). */
  legacy_events: number;
}

/** The whole check. */
export interface HeadsReport {
  /** `consistent` (every head checked and true); `inconsistent` (a head is false, or the leaves are not the checkpoint's); `unchecked` (none false, some not checkable). */
  result: 'consistent' | 'inconsistent' | 'unchecked';
  size: number;
  /** The root computed from the leaves fed equals the statement's root. */
  root_matches: boolean;
  leaves_read: number;
  /** Leaves whose bytes were not served (withheld or erased): their stream is unknown. */
  leaves_unread: number;
  /** The first format 3 leaf at or below the size (null: none): stream chains are provable offline from it on. */
  first_format3_position: number | null;
  streams: HeadFinding[];
}

interface Tracked {
  head: StreamHead;
  /** Set for an answer set's line. */
  set: AnswerSet | null;
  /** The first member of an answer set whose outcome stream the statement does not name. */
  unlisted: LaterEvent | null;
  count: number;
  lastPos: number;
  headSeen: boolean;
  headProblem: { code: 'head_not_in_stream' | 'head_hash_mismatch' | 'head_withheld'; detail: string } | null;
  chainProblem: { code: 'stream_position_mismatch' | 'stream_prev_mismatch'; detail: string } | null;
  later: LaterEvent | null;
  laterCount: number;
  legacy: number;
}

/** Leaves out of order or beyond the size: the caller broke the contract (a CLI bug or a log answering the wrong range). */
export class HeadsFeedError extends Error {}

/** A streaming check of one statement; see the module comment. */
export class HeadsChecker {
  private readonly streams = new Map<string, Tracked>();
  private readonly byHeadPosition = new Map<number, Tracked[]>();
  /** Answer sets by their receipt id. */
  private readonly sets = new Map<string, Tracked[]>();
  private next = 0;
  private unread = 0;
  private lastUnread = 0;
  private firstF3: number | null = null;

  constructor(readonly statement: StreamHeads) {
    for (const head of statement.heads) {
      const set = parseAnswersStreamId(head.streamId);
      const t: Tracked = { head, set, unlisted: null, count: 0, lastPos: 0, headSeen: false, headProblem: null, chainProblem: null, later: null, laterCount: 0, legacy: 0 };
      if (set) (this.sets.get(set.receiptId) ?? this.sets.set(set.receiptId, []).get(set.receiptId)!).push(t);
      else this.streams.set(head.streamId, t);
      if (head.position > 0) (this.byHeadPosition.get(head.position) ?? this.byHeadPosition.set(head.position, []).get(head.position)!).push(t);
    }
  }

  /** The number of leaves fed so far (the next index expected). */
  get fed(): number {
    return this.next;
  }

  /** Feed the leaf at index {@link fed}; throws {@link HeadsFeedError} for any other index or beyond the size. */
  push(l: ServedLeaf): void {
    if (l.index !== this.next || l.index >= this.statement.size) throw new HeadsFeedError(`leaf ${l.index} fed where leaf ${this.next} (below size ${this.statement.size}) was expected`);
    this.next++;
    const p = l.index + 1;
    const atHeads = this.byHeadPosition.get(p) ?? [];
    let ev;
    try {
      ev = l.leaf === null ? null : parseLeaf(l.leaf);
    } catch (e) {
      if (!(e instanceof LeafError)) throw e;
      ev = null;
    }
    if (ev === null || ev.position !== p) {
      this.unread++;
      this.lastUnread = p;
      for (const atHead of atHeads) atHead.headProblem ??= { code: 'head_withheld', detail: `the leaf at the claimed head ${p} could not be read (${l.leaf === null ? (l.withheld ?? 'withheld') : 'not a ledger event at that position'})` };
      return;
    }
    if (ev.format === 3) this.firstF3 ??= p;
    const hash = sha256Hex(l.leaf as Buffer);
    const ids = outcomeIdsOf(ev);
    for (const atHead of atHeads) {
      if (atHead.set ? !(ids && inAnswerSet(atHead.set, ev.type, ids.receipt_id, ids.job_id)) : atHead.head.streamId !== ev.stream_id) {
        atHead.headProblem ??= { code: 'head_not_in_stream', detail: atHead.set ? `the event at position ${p} (${ev.type} on ${JSON.stringify(ev.stream_id)}) is not an outcome answering receipt ${atHead.set.receiptId} for this subject` : `the event at position ${p} is on stream ${JSON.stringify(ev.stream_id)}, not this one` };
      }
    }
    if (ids && typeof ids.receipt_id === 'string') for (const s of this.sets.get(ids.receipt_id.toLowerCase()) ?? []) this.pushMember(s, p, ev, hash, ids);
    const t = this.streams.get(ev.stream_id);
    if (!t) return;
    if (p > t.head.position) {
      t.laterCount++;
      t.later ??= { position: p, stream_position: ev.stream_position, type: ev.type, event_hash: hash };
      return;
    }
    t.count++;
    if (ev.format !== 3) t.legacy++;
    if (ev.stream_position !== t.count) t.chainProblem ??= { code: 'stream_position_mismatch', detail: `the event at position ${p} says it is #${ev.stream_position} of the stream; it is the stream's event #${t.count} in the log` };
    else if (ev.format === 3 && ev.stream_prev !== t.lastPos) t.chainProblem ??= { code: 'stream_prev_mismatch', detail: `the event at position ${p} names ${ev.stream_prev} as the stream's previous event; the log's previous event of the stream is at ${t.lastPos}` };
    t.lastPos = p;
    if (p === t.head.position) {
      t.headSeen = true;
      if (hash !== t.head.eventHash) t.headProblem ??= { code: 'head_hash_mismatch', detail: `the event at position ${p} has hash ${hash}, the statement claims ${String(t.head.eventHash)}` };
    }
  }

  /** An `OutcomeReported` leaf at `p` naming the receipt of answer set `s`: a member when it names the subject too. */
  private pushMember(s: Tracked, p: number, ev: { type: string; stream_position: number }, hash: string, ids: { receipt_id: unknown; job_id: unknown; outcome_id: unknown }): void {
    if (!s.set || !inAnswerSet(s.set, ev.type, ids.receipt_id, ids.job_id)) return;
    const seen = { position: p, stream_position: ev.stream_position, type: ev.type, event_hash: hash };
    if (p > s.head.position) {
      s.laterCount++;
      s.later ??= seen;
      return;
    }
    s.count++;
    if (typeof ids.outcome_id !== 'string' || !this.streams.has(`outcome:${ids.outcome_id.toLowerCase()}`)) s.unlisted ??= seen;
    if (p === s.head.position) {
      s.headSeen = true;
      if (hash !== s.head.eventHash) s.headProblem ??= { code: 'head_hash_mismatch', detail: `the event at position ${p} has hash ${hash}, the statement claims ${String(s.head.eventHash)}` };
    }
  }

  /**
   * The report, once every leaf below the size was fed; `root` is the RFC
   * 6962 root of those leaves (from their served leaf hashes, each checked
   * against its bytes by the caller). Throws {@link HeadsFeedError} before.
   */
  finish(root: Buffer): HeadsReport {
    if (this.next !== this.statement.size) throw new HeadsFeedError(`${this.next} leaves fed, the statement is as of size ${this.statement.size}`);
    const rootOk = Buffer.from(root).equals(this.statement.rootHash);
    const streams = [...this.streams.values(), ...[...this.sets.values()].flat()].map((t) => this.finding(t));
    const bad = !rootOk || streams.some((s) => s.verdict !== 'consistent' && s.verdict !== 'unchecked');
    const result = bad ? 'inconsistent' : streams.some((s) => s.verdict === 'unchecked') ? 'unchecked' : 'consistent';
    return { result, size: this.statement.size, root_matches: rootOk, leaves_read: this.next - this.unread, leaves_unread: this.unread, first_format3_position: this.firstF3, streams };
  }

  private finding(t: Tracked): HeadFinding {
    const base = { stream_id: t.head.streamId, claimed: { position: t.head.position, event_hash: t.head.eventHash }, later_count: t.laterCount, legacy_events: t.legacy };
    if (t.later) {
      const l = t.later;
      const claim = t.head.position === 0 ? 'no event' : `head ${t.head.position}`;
      return { ...base, verdict: 'contradicted', code: 'later_event', later: l, detail: `the statement claims ${claim} as of size ${this.statement.size}, but the ${l.type} event at position ${l.position} (#${l.stream_position} of the stream, hash ${l.event_hash}) is later and on the same stream${t.laterCount > 1 ? ` (${t.laterCount} later events in all)` : ''}` };
    }
    if (t.unlisted) {
      const u = t.unlisted;
      return { ...base, verdict: 'contradicted', code: 'answer_not_listed', later: u, detail: `the statement claims the set of outcomes answering receipt ${t.set?.receiptId ?? ''} as of size ${this.statement.size}, but the ${u.type} event at position ${u.position} (hash ${u.event_hash}) answers it and its outcome stream is not named in the statement` };
    }
    if (t.headProblem && t.headProblem.code !== 'head_withheld') return { ...base, verdict: 'head_mismatch', code: t.headProblem.code, detail: t.headProblem.detail };
    if (t.chainProblem) return { ...base, verdict: 'chain_broken', code: t.chainProblem.code, detail: t.chainProblem.detail };
    if (t.headProblem) return { ...base, verdict: 'unchecked', code: 'head_withheld', detail: t.headProblem.detail };
    if (this.lastUnread > t.head.position) {
      return { ...base, verdict: 'unchecked', code: 'withheld_after_head', detail: `${this.unread} leaves could not be read (the last at position ${this.lastUnread}, after the claimed head): they may belong to this stream` };
    }
    return { ...base, verdict: 'consistent', detail: t.head.position === 0 ? `no event of the stream at or below size ${this.statement.size}` : `position ${t.head.position} is the stream's event #${t.count}, and no later one at or below size ${this.statement.size}` };
  }
}
