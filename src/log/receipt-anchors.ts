import { Injectable, Logger } from '@nestjs/common';
import { RECEIPT_ANCHOR_ENVELOPE } from '../core/nostr/anchor';
import { verifyInclusion } from '../core/tlog';
import type { LogLocation } from './log-answers';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { NostrAnchorInfo, NostrAnchors } from './nostr-anchors.service';

/**
 * The envelope binding one receipt to an anchored checkpoint
 * (`aer1-receipt-anchor/1`; the draft's reference deployment calls its own
 * `zambo-receipt-anchor/1`): the receipt id, its `output_hash`, its evidence
 * hash (the leaf hash of its event, base64) at `leaf_index`, the anchored
 * checkpoint, and the RFC 6962 inclusion proof that joins that leaf to the
 * checkpoint's root, checked before it is served.
 */
export interface ReceiptAnchorEnvelope {
  format: typeof RECEIPT_ANCHOR_ENVELOPE;
  receipt_id: string;
  output_hash: string | null;
  evidence_hash: string;
  leaf_index: number;
  checkpoint: { origin: string; size: number; root: string };
  inclusion_proof: string[];
  relay_event_id: string;
}

/** A receipt's Nostr anchor (draft S10): the checkpoint's anchor and the receipt's envelope. */
export type ReceiptNostrAnchor = NostrAnchorInfo & { envelope: ReceiptAnchorEnvelope };

/**
 * The `anchors` list of a receipt's verifier answer and page (issue 33):
 * the newest Nostr anchor accepted by a relay whose checkpoint covers the
 * receipt's leaf, with its envelope. Anchoring never changes the receipt's
 * bytes or verdict (S10): this is added beside them.
 */
@Injectable()
export class ReceiptAnchors {
  private readonly logger = new Logger('ReceiptAnchors');

  constructor(
    private readonly log: LogService,
    private readonly nostr: NostrAnchors,
    private readonly identity: LogIdentityService,
  ) {}

  /** True when Nostr anchoring is configured: answers then carry `anchors` (possibly empty). */
  get enabled(): boolean {
    return this.nostr.settings !== null;
  }

  /**
   * The anchors of the receipt `id` (output hash `outputHash`) whose event
   * sits at `loc`: empty until its leaf is proven and a published anchor
   * covers it, or when the inclusion proof to the anchored root does not
   * check (then logged, never shown).
   */
  async of(id: string, outputHash: string | null, loc: LogLocation): Promise<ReceiptNostrAnchor[]> {
    if (!this.enabled || loc.status !== 'proven' || !this.identity.current) return [];
    const served = await this.log.latest();
    if (!served) return [];
    const a = await this.nostr.covering(loc.leaf_index, served.size);
    if (!a) return [];
    const cp = await this.log.checkpoint(a.size);
    const [proof] = await this.log.inclusionProofs([loc.leaf_index], a.size);
    try {
      verifyInclusion(loc.leaf_index, a.size, Buffer.from(loc.leaf_hash, 'base64'), proof.map((h) => Buffer.from(h, 'base64')), Buffer.from(cp.root, 'base64'));
    } catch (e) {
      this.logger.error(`receipt ${id}: its leaf ${loc.leaf_index} is not proven by anchored checkpoint ${a.size}: ${(e as Error).message}`);
      return [];
    }
    const envelope: ReceiptAnchorEnvelope = {
      format: RECEIPT_ANCHOR_ENVELOPE,
      receipt_id: id,
      output_hash: outputHash,
      evidence_hash: loc.leaf_hash,
      leaf_index: loc.leaf_index,
      checkpoint: { origin: this.identity.current.origin, size: cp.size, root: cp.root },
      inclusion_proof: proof,
      relay_event_id: a.relay_event_id,
    };
    return [{ ...a, envelope }];
  }
}
