/**
 * The stream-heads statements of one pack (issue 30, docs/evidence-pack.md):
 * the pack writer names each stream its subject spans as it writes the
 * stream's events; every {@link BATCH} names are signed as one statement as
 * of the pack's checkpoint (StreamHeadsService: heads from the events table,
 * backed by the stored tree), so memory is one batch of names, never the
 * job's. Answer sets (`answers:`) bring their outcomes' streams with them.
 */
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
  ) {}

  /** Name a stream the subject spans (a name already in the pending batch is named once). */
  add(streamId: string): void {
    if (this.queued.has(streamId)) return;
    this.queued.add(streamId);
    this.pending.push(streamId);
  }

  /** The statement members due: one per full batch ('' when none is). */
  async drain(): Promise<string> {
    let out = '';
    while (this.pending.length >= BATCH) out += await this.sign(this.pending.splice(0, BATCH));
    if (this.pending.length === 0) this.queued.clear();
    return out;
  }

  /** The remaining statement member (every pack carries at least one: its subject's own stream is always named). */
  async finish(): Promise<string> {
    let out = await this.drain();
    if (this.pending.length > 0) out += await this.sign(this.pending.splice(0));
    this.queued.clear();
    return out;
  }

  private async sign(ids: string[]): Promise<string> {
    const s = await this.heads.sign(ids, this.cp);
    this.written++;
    return this.w.member({ member: memberName.streamHeads(this.written), note: s.note } satisfies StreamHeadsMember);
  }
}
