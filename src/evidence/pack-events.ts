/**
 * The `event/<position>` members of an evidence pack (docs/evidence-pack.md):
 * leaf (or withheld), leaf hash, inclusion proof, a format 3 event's payload
 * and salt, or the erasure of an erased one (issue 29), remembering per pack
 * which `PayloadsErased` events it must carry. Used by EvidenceService.
 */
import { LedgerError } from '../common/errors';
import { isObject } from '../core/aer1';
import type { ErasureNote } from '../core/coverage/types';
import { ERASED_LEAF_NOTE, payloadState, StoredEvent, storedLeaf } from '../core/ledger/event-hash';
import { EventMember, memberName, PackWriter } from '../core/pack/format';
import { leafHash } from '../core/tlog';
import { withRetained } from '../coverage/ledger-reader';
import type { Principal } from '../auth/api-keys.service';
import { DatabaseService } from '../database/database.service';
import { parseStoredJson } from '../database/rows';
import { ErasureService } from '../erasure/erasure.service';
import type { ErasureRow } from '../erasure/erasures.repository';
import { EventsRepository } from '../ledger/events.repository';
import { leafWithheld } from '../log/log-answers';
import { LogService } from '../log/log.service';

/** Writes event members for the packs of one EvidenceService. */
export class PackEvents {
  constructor(
    private readonly db: DatabaseService,
    private readonly log: LogService,
    private readonly events: EventsRepository,
    private readonly erasure: ErasureService,
  ) {}

  /** `event/<position>` members for a page of events: leaf (or withheld), leaf hash, inclusion proof. */
  async members(w: PackWriter, evs: StoredEvent[], size: number, viewer: Principal): Promise<string> {
    if (evs.length === 0) return '';
    const proofs = await this.log.inclusionProofs(
      evs.map((e) => e.position - 1),
      size,
    );
    const withheld = await this.events.withheldAmong(this.db, evs.map((e) => e.position));
    const erased = evs.some((e) => payloadState(e) === 'erased') ? await this.erasure.erasuresOf(evs.map((e) => e.position)) : new Map<number, ErasureRow>();
    const gone = evs.filter((e) => storedLeaf(e).erased);
    const goneHashes = new Map<number, Buffer>();
    if (gone.length > 0) (await this.log.storedLeafHashes(gone.map((e) => e.position - 1))).forEach((h, i) => goneHashes.set(gone[i].position, h));
    let out = '';
    evs.forEach((e, k) => {
      const state = payloadState(e);
      // A format 1/2 leaf whose data was erased cannot be rebuilt: its stated hash and proof still place it (issue 29).
      const leaf = storedLeaf(e).leaf;
      if (leaf === null && state !== 'erased') throw new LedgerError(409, 'tree_mismatch', `the event at position ${e.position} cannot be serialized (its stored format or key was changed): no pack is served`, { position: e.position });
      const why = leafWithheld(e.type, withheld.has(e.position), viewer);
      const x = erased.get(e.position);
      if (x) {
        const set = this.erasuresInPack.get(w) ?? new Set<number>();
        set.add(x.position);
        this.erasuresInPack.set(w, set);
      }
      const erasure = x ? { erasure_id: x.erasure_id, position: x.position, erased_at: x.erased_at, by: x.key_name, legal_basis: x.legal_basis, reason: x.reason } : undefined;
      const m: EventMember =
        Number(e.format) === 3
          ? {
              // Format 3: the leaf holds no content and is always served; the payload follows the publication rules (issue 29).
              member: memberName.event(e.position),
              position: e.position,
              leaf_index: e.position - 1,
              type: e.type,
              leaf: leaf!.toString('base64'),
              leaf_hash: leafHash(leaf!).toString('base64'),
              proof: proofs[k],
              payload: state === 'held' && !why ? Buffer.from(e.data, 'utf8').toString('base64') : null,
              payload_salt: state === 'held' && !why ? (e.payload_salt as string) : null,
              ...(state === 'erased' && erasure ? { erased: erasure } : why ? { withheld: why } : {}),
            }
          : {
              member: memberName.event(e.position),
              position: e.position,
              leaf_index: e.position - 1,
              type: e.type,
              leaf: why || leaf === null ? null : leaf.toString('base64'),
              leaf_hash: leaf === null ? (goneHashes.get(e.position) ?? Buffer.alloc(32)).toString('base64') : leafHash(leaf).toString('base64'),
              proof: proofs[k],
              ...(leaf === null ? { withheld: ERASED_LEAF_NOTE, ...(erasure ? { erased: erasure } : {}) } : why ? { withheld: why } : {}),
            };
      out += w.member(m);
    });
    return out;
  }

  /** The erased ones of `evs` (issue 29): their retained data (no content) and erasure, keyed by position. */
  async erasedOf(evs: StoredEvent[]): Promise<Map<number, { kept: Record<string, unknown>; erased: ErasureNote }>> {
    const out = new Map<number, { kept: Record<string, unknown>; erased: ErasureNote }>();
    if (!evs.some((e) => e.data === '')) return out;
    for (const e of await withRetained(this.db, evs.filter((x) => x.data === '').map((x) => ({ position: x.position, stream_id: x.stream_id, type: x.type, key_name: x.key_name ?? null, data: x.data })), (ps) => this.erasure.erasuresOf(ps))) {
      const kept = parseStoredJson(e.data);
      if (e.erased && isObject(kept)) out.set(e.position, { kept, erased: e.erased });
    }
    return out;
  }

  /** Per pack being written: positions of the `PayloadsErased` events that erased its members (written last). */
  private readonly erasuresInPack = new WeakMap<PackWriter, Set<number>>();

  /** Positions of the `PayloadsErased` events that erased members `w` has written so far. */
  erasuresOf(w: PackWriter): ReadonlySet<number> {
    return this.erasuresInPack.get(w) ?? new Set();
  }

}
