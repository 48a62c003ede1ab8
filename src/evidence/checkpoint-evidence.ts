import { Injectable } from '@nestjs/common';
import { WitnessedCheckpoints } from '../log/witnessed.service';
import type { StoredCheckpoint } from '../log/tree.repository';
import { timeStampReplyFromToken } from '../core/timestamp';
import type { CheckpointEvidence } from './evidence.service';
import type { NostrMember } from '../core/pack/format';
import { LogService } from '../log/log.service';
import { NostrAnchors } from '../log/nostr-anchors.service';

/**
 * What witnesses and the TSA add to a pack's checkpoint (issue 15): the note
 * with the stored cosignature lines when the configured quorum of them
 * verifies (a note already carrying them is kept as is), and the RFC 3161
 * token stored for that size, as a DER TimeStampResp; and (issue 33) the
 * newest Nostr anchor a relay accepted of a checkpoint no larger than the
 * pack's, with the consistency proof from it to the pack's checkpoint.
 */
@Injectable()
export class WitnessCheckpointEvidence implements CheckpointEvidence {
  constructor(
    private readonly witnessed: WitnessedCheckpoints,
    private readonly nostr: NostrAnchors,
    private readonly log: LogService,
  ) {}

  async witnessedNote(cp: StoredCheckpoint): Promise<string> {
    const signatures = cp.note.split('\n\n').slice(1).join('\n\n').split('\n').filter((l) => l.startsWith('\u2014 ')).length;
    if (signatures > 1) return cp.note;
    return (await this.witnessed.withCosignatures(cp))?.note ?? cp.note;
  }

  async timestamp(cp: StoredCheckpoint): Promise<Buffer | null> {
    const ts = await this.witnessed.timestamp(cp.size);
    return ts ? timeStampReplyFromToken(ts.token) : null;
  }

  async nostrAnchor(cp: StoredCheckpoint): Promise<NostrMember | null> {
    if (!this.nostr.settings) return null;
    const a = await this.nostr.covering(0, cp.size);
    if (!a) return null;
    const stored = await this.log.checkpoint(a.size);
    const note = this.witnessed.enabled ? ((await this.witnessed.withCosignatures(stored))?.note ?? stored.note) : stored.note;
    const consistency = a.size === cp.size ? [] : (await this.log.consistency(a.size, cp.size)).proof;
    return { member: 'log/nostr', size: a.size, note, consistency, event: a.event as unknown as Record<string, unknown> };
  }
}
