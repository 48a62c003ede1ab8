import { Injectable } from '@nestjs/common';
import { WitnessedCheckpoints } from '../log/witnessed.service';
import type { StoredCheckpoint } from '../log/tree.repository';
import { timeStampReplyFromToken } from '../core/timestamp';
import type { CheckpointEvidence } from './evidence.service';

/**
 * What witnesses and the TSA add to a pack's checkpoint (issue 15): the note
 * with the stored cosignature lines when the configured quorum of them
 * verifies (a note already carrying them is kept as is), and the RFC 3161
 * token stored for that size, as a DER TimeStampResp.
 */
@Injectable()
export class WitnessCheckpointEvidence implements CheckpointEvidence {
  constructor(private readonly witnessed: WitnessedCheckpoints) {}

  async witnessedNote(cp: StoredCheckpoint): Promise<string> {
    const signatures = cp.note.split('\n\n').slice(1).join('\n\n').split('\n').filter((l) => l.startsWith('\u2014 ')).length;
    if (signatures > 1) return cp.note;
    return (await this.witnessed.withCosignatures(cp))?.note ?? cp.note;
  }

  async timestamp(cp: StoredCheckpoint): Promise<Buffer | null> {
    const ts = await this.witnessed.timestamp(cp.size);
    return ts ? timeStampReplyFromToken(ts.token) : null;
  }
}
