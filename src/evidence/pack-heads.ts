/**
 * The stream-heads statements of one pack (issue 30, docs/evidence-pack.md):
 * the pack writer names each stream its subject spans as it writes the
 * stream's events; every {@link BATCH} names are signed as one statement as
 * of the pack's checkpoint (StreamHeadsService: heads from the events table,
 * backed by the stored tree), so memory is one batch of names, never the
 * job's. Answer sets (`answers:`) bring their outcomes' streams with them.
 */
import { LedgerError } from '../common/errors';
import { memberName, PackWriter, StreamHeadsMember } from '../core/pack/format';
import { StreamHeadsService } from '../log/stream-heads.service';
import type { StoredCheckpoint } from '../log/tree.repository';

/** Streams named per statement: an answer set adds its outcomes' streams, and a statement takes at most 5,000. */
export const BATCH = 1000;

/** Collects one pack's stream names and writes its `log/stream-heads` members. */
export class PackHeads {
  private pending: string[] = [];
  private readonly queued = new Set<string>();
  private written = 0;

  constructor(
    private readonly heads: StreamHeadsService,
    private readonly cp: StoredCheckpoint,
    private readonly w: PackWriter,
    /** The pack's subject line (answer-sets.ts `subjectLineId`), signed into its first statement. */
    private readonly subjectLine: string,
  ) {}

  /** Name a stream the subject spans (a name already in the pending batch is named once; the writer names each stream once in a pack). */
  add(streamId: string): void {
    if (this.queued.has(streamId)) return;
    this.queued.add(streamId);
    this.pending.push(streamId);
  }

  /** The statement members due: one per full batch ('' when none is). */
  async drain(): Promise<string> {
    let out = '';
    while (this.pending.length >= BATCH) {
      const batch = this.pending.splice(0, BATCH);
      for (const x of batch) this.queued.delete(x); // the set holds the pending batch only, never the job's names
      out += await this.sign(batch);
    }
    return out;
  }

  /** The remaining statement member (every pack carries at least one: its subject's own stream is always named). */
  async finish(): Promise<string> {
    let out = await this.drain();
    if (this.pending.length > 0) out += await this.sign(this.pending.splice(0));
    this.queued.clear();
    return out;
  }

  /**
   * One statement for `ids`. A head the ledger cannot back (409
   * `stream_head_unbacked`: a format 1/2 head whose content was erased, a
   * tree that disagrees) is left out of it rather than signed or failing the
   * pack mid-stream: the verifier then names that stream `stream_unlisted`,
   * and the pack is not VERIFIED.
   */
  private async sign(ids: string[]): Promise<string> {
    let todo = ids;
    while (todo.length > 0) {
      try {
        const s = await this.heads.sign(todo, this.cp, undefined, this.written === 0 ? { packSubject: this.subjectLine } : {});
        this.written++;
        return this.w.member({ member: memberName.streamHeads(this.written), note: s.note } satisfies StreamHeadsMember);
      } catch (e) {
        const bad = e instanceof LedgerError && e.code === 'stream_head_unbacked' ? e.details.stream_id : undefined;
        if (typeof bad !== 'string' || !todo.includes(bad)) throw e;
        todo = todo.filter((x) => x !== bad);
      }
    }
    return '';
  }
}
