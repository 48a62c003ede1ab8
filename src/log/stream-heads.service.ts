import { Injectable } from '@nestjs/common';
import { BadInputError, LedgerError, UnavailableError } from '../common/errors';
import { sha256Hex } from '../core/aer1';
import { AnswerSet, inAnswerSet, outcomeIdsOf, parseAnswersStreamId, SUBJECT_PREFIX } from '../core/ledger/answer-sets';
import { StoredEvent, storedLeaf } from '../core/ledger/event-hash';
import { parseLeaf } from '../core/ledger/leaf';
import { outcomeNamesSubject } from '../core/coverage/outcomes';
import { encodeStreamId, leafHash, MAX_STREAM_HEADS, signStreamHeads, StreamHead, StreamHeads, TlogError } from '../core/tlog';
import { DatabaseService } from '../database/database.service';
import { pages, placeholders, Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { MissingNodeError, StoredCheckpoint, TreeRepository } from './tree.repository';

/** Why the ledger refuses to sign a head (409 `stream_head_unbacked`, `reason`). */
export type UnbackedReason = 'leaf_not_recomputable' | 'tree_leaf_missing' | 'tree_leaf_mismatch' | 'event_hash_mismatch' | 'answer_not_outcome';

/** A signed statement and what it says. */
export interface SignedStreamHeads {
  /** The signed note (c2sp.org/signed-note), as served. */
  note: string;
  statement: StreamHeads;
}

/**
 * Stream-heads statements (issue 30): for named streams, the newest event
 * of each as of a signed checkpoint, signed with the log key
 * (src/core/tlog/stream-heads.ts has the format). The heads come from the
 * `events` table, one indexed read per stream (never a scan, never a
 * projection), and each is checked against the stored tree before it is
 * signed: its leaf is rebuilt from the stored event, its SHA-256 must be
 * the stored `event_hash`, and its RFC 6962 leaf hash the stored level-0
 * node. What cannot be backed so is refused, never signed.
 *
 * Answer sets (`answers:<receipt>:<subject>`, src/core/ledger/answer-sets.ts)
 * are found through the `outcomes` table's receipt index (the one place that
 * lists the outcomes of a receipt without a scan); their head is then backed
 * like any other (the event at that position must be an `OutcomeReported`
 * leaf naming the receipt and the subject), and the `outcome:<id>` stream of
 * every member is named in the same statement. An outcome the index missed
 * would make the statement false, and `aer1 log check-heads` shows it.
 */
@Injectable()
export class StreamHeadsService {
  private readonly tree = new TreeRepository();

  constructor(
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
    private readonly log: LogService,
    private readonly identity: LogIdentityService,
  ) {}

  /**
   * The checkpoint a statement is as of: `size` (a stored checkpoint, at
   * most the newest served one: 404 `tree_size_beyond_checkpoint` above it,
   * 404 `checkpoint_not_found` for a size never signed), else the newest
   * ({@link LogService.requireLatest}: 404 `no_checkpoint`, 503 `log_unavailable`).
   */
  async checkpointFor(size?: number): Promise<StoredCheckpoint> {
    const latest = await this.log.requireLatest();
    if (size === undefined || size === latest.size) return latest;
    if (size > latest.size) throw new LedgerError(404, 'tree_size_beyond_checkpoint', `size ${size} is beyond the newest checkpoint (${latest.size}); statements are signed up to it`, { size, checkpoint_size: latest.size });
    return this.log.checkpoint(size);
  }

  /**
   * Sign the heads of `streamIds` (1..{@link MAX_STREAM_HEADS}, each once; 400
   * `invalid_query` otherwise, or for an id the format cannot write) as of
   * `cp`. Reads: two per 500 streams (their heads), one per 500 answer sets
   * (their outcomes) and one per 500 of their newest, plus one per 100 heads
   * for the tree's leaves. 409 `stream_head_unbacked` (`reason`: {@link UnbackedReason},
   * `stream_id`, `position`) when a head cannot be backed by the stored tree;
   * 503 `log_unavailable` without a log key.
   */
  async sign(streamIds: readonly string[], cp: StoredCheckpoint, q: Queryable = this.db, opts: { packSubject?: string } = {}): Promise<SignedStreamHeads> {
    const id = this.identity.current;
    if (!id) throw new UnavailableError('log_unavailable', `this deployment signs nothing: ${this.identity.reason}`);
    if (streamIds.length === 0 || streamIds.length > MAX_STREAM_HEADS) throw new BadInputError('invalid_query', `name 1..${MAX_STREAM_HEADS} streams`, { count: streamIds.length });
    if (new Set(streamIds).size !== streamIds.length) throw new BadInputError('invalid_query', 'a stream is named twice', {});
    for (const s of streamIds) {
      // `subject:` lines bind a pack's statement to its subject (src/core/ledger/answer-sets.ts): the pack writer's alone.
      if (typeof s === 'string' && s.startsWith(SUBJECT_PREFIX)) throw new BadInputError('invalid_query', `stream ${JSON.stringify(s.slice(0, 100))}: subject: lines are written only into evidence packs`, {});
      try {
        encodeStreamId(s);
      } catch (e) {
        if (e instanceof TlogError) throw new BadInputError('invalid_query', `stream ${JSON.stringify(String(s).slice(0, 100))}: ${e.message}`, {});
        throw e;
      }
    }
    const heads: StreamHead[] = [];
    const toCheck: { streamId: string; position: number; leaf: Buffer }[] = [];
    const named = new Set(streamIds);
    const plain: string[] = [];
    const sets: { streamId: string; set: AnswerSet }[] = [];
    for (const streamId of streamIds) {
      const set = parseAnswersStreamId(streamId);
      if (set) sets.push({ streamId, set });
      else if (streamId.startsWith('answers:')) throw new BadInputError('invalid_query', `stream ${JSON.stringify(streamId.slice(0, 100))}: an answer set is answers:<receipt uuid, lowercase>:timeline:<job id> or :workflow:<uuid, lowercase>`, {});
      else plain.push(streamId);
    }
    // Each set's members as of the size (ledger order), through the outcomes index; each member's stream joins the statement.
    const newest = new Map<string, number>();
    const byReceipt = new Map<string, { outcome_id: string; job_id: string; position: number }[]>();
    for (const page of pages([...new Set(sets.map((x) => x.set.receiptId))], 500)) {
      const rows = await q.query<{ outcome_id: string; job_id: string; receipt_id: string; position: number | string }>(`SELECT outcome_id, job_id, receipt_id, position FROM outcomes WHERE position <= ? AND receipt_id IN (${placeholders(page.length)}) ORDER BY position`, [cp.size, ...page]);
      for (const r of rows) (byReceipt.get(r.receipt_id) ?? byReceipt.set(r.receipt_id, []).get(r.receipt_id)!).push({ outcome_id: r.outcome_id, job_id: r.job_id, position: Number(r.position) });
    }
    for (const { streamId, set } of sets) {
      const members = (byReceipt.get(set.receiptId) ?? []).filter((r) => outcomeNamesSubject(r.job_id, set.subject));
      for (const m of members) {
        const s = `outcome:${m.outcome_id}`;
        if (!named.has(s)) {
          named.add(s);
          plain.push(s);
        }
      }
      if (members.length > 0) newest.set(streamId, members[members.length - 1].position);
    }
    if (named.size > MAX_STREAM_HEADS) throw new BadInputError('invalid_query', `the streams named and the outcomes of the answer sets named are ${named.size}, more than ${MAX_STREAM_HEADS}: name fewer`, { count: named.size });
    // A head is signed only backed: its leaf rebuilt from the stored event hashes to the stored event_hash (the tree is checked below).
    const back = (streamId: string, e: StoredEvent, noLeaf: (l: ReturnType<typeof storedLeaf>) => string): Buffer => {
      const l = storedLeaf(e);
      if (l.leaf === null) throw unbacked('leaf_not_recomputable', streamId, e.position, noLeaf(l));
      if (sha256Hex(l.leaf) !== e.event_hash) throw unbacked('event_hash_mismatch', streamId, e.position, 'the stored event_hash is not the SHA-256 of the leaf rebuilt from the stored event');
      heads.push({ streamId, position: e.position, eventHash: e.event_hash });
      toCheck.push({ streamId, position: e.position, leaf: l.leaf });
      return l.leaf;
    };
    const setEvents: Map<number, StoredEvent> = await this.events.atPositions(q, [...newest.values()]);
    for (const { streamId, set } of sets) {
      const at = newest.get(streamId);
      if (at === undefined) {
        heads.push({ streamId, position: 0, eventHash: null });
        continue;
      }
      const e = setEvents.get(at);
      const noLeaf = 'the newest outcome of the set has no stored leaf that can be rebuilt';
      if (!e) throw unbacked('leaf_not_recomputable', streamId, at, noLeaf);
      const ids = outcomeIdsOf(parseLeaf(back(streamId, e, () => noLeaf)));
      if (!ids || !inAnswerSet(set, e.type, ids.receipt_id, ids.job_id)) throw unbacked('answer_not_outcome', streamId, e.position, 'the event the outcomes index names is not an OutcomeReported leaf answering this receipt for this subject');
    }
    const found = await this.events.headsAsOf(q, plain, cp.size);
    for (const streamId of plain) {
      const e = found.get(streamId);
      if (!e) {
        heads.push({ streamId, position: 0, eventHash: null });
        continue;
      }
      back(streamId, e, (l) => (l.erased ? 'its format 1/2 leaf held content that was erased' : 'its stored row cannot be serialized'));
    }
    let stored: Buffer[];
    try {
      stored = await this.tree.hashes(q, toCheck.map((h) => ({ level: 0, index: h.position - 1 })));
    } catch (e) {
      if (!(e instanceof MissingNodeError)) throw e;
      const h = toCheck.find((x) => x.position - 1 === e.node.index);
      throw unbacked('tree_leaf_missing', h?.streamId ?? '', e.node.index + 1, 'the stored tree has no leaf at that position');
    }
    toCheck.forEach((h, i) => {
      if (!leafHash(h.leaf).equals(stored[i])) throw unbacked('tree_leaf_mismatch', h.streamId, h.position, 'the leaf rebuilt from the stored event is not the stored tree leaf');
    });
    if (opts.packSubject !== undefined) heads.push({ streamId: opts.packSubject, position: 0, eventHash: null });
    const statement: StreamHeads = { origin: id.origin, size: cp.size, rootHash: Buffer.from(cp.root, 'base64'), heads };
    return { note: signStreamHeads(statement, id.signer), statement };
  }
}

function unbacked(reason: UnbackedReason, streamId: string, position: number, why: string): LedgerError {
  return new LedgerError(409, 'stream_head_unbacked', `the head of stream ${JSON.stringify(streamId.slice(0, 200))} (position ${position}) cannot be backed: ${why}; no statement is signed`, { reason, stream_id: streamId.slice(0, 200), position });
}
