import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiErrors } from '../common/openapi';
import { PublicRead } from '../common/rate-limit';
import { countParam } from './log-answers';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { NostrAnchorInfo, NostrAnchors } from './nostr-anchors.service';
import { WitnessedCheckpoints } from './witnessed.service';

/** An RFC 3161 anchor in the anchors list. */
export interface Rfc3161AnchorInfo {
  type: 'rfc3161';
  size: number;
  gen_time: string;
  tsa_name: string;
  received_at: string;
  /** Where the token is served (DER TimeStampResp). */
  url: string;
}

/** Every anchor of one checkpoint (issue 33). */
@ApiTags('log')
@Controller()
export class AnchorsController {
  constructor(
    private readonly log: LogService,
    private readonly witnessed: WitnessedCheckpoints,
    private readonly nostr: NostrAnchors,
    private readonly identity: LogIdentityService,
  ) {}

  /**
   * `{size, anchors: [...]}`: the RFC 3161 token (`type: "rfc3161"`: genTime,
   * TSA, when received, its URL) and the Nostr event (`type: "nostr"`: the
   * draft's S10 fields `relay_event_id`, `publisher_key`, `relays` (those that
   * answered OK true), `published`, `published_at`, each relay's newest
   * answer in `relay_status`, and the signed NIP-01 `event`) of the
   * checkpoint of `size`; an empty list when it has none. 404
   * `checkpoint_not_found` when no checkpoint of that size was signed.
   */
  @Get('api/ledger/checkpoints/:size/anchors')
  @PublicRead(1)
  @ApiOperation({ operationId: 'getCheckpointAnchors', summary: 'Every anchor of a checkpoint: RFC 3161 tokens and Nostr events, with each relay\'s answer' })
  @ApiParam({ name: 'size', schema: { type: 'integer', minimum: 0 } })
  @ApiAnswer(200, 'CheckpointAnchors', 'the anchors (possibly none)')
  @ApiErrors([400, 404, 429])
  async anchors(@Param('size') size: string): Promise<{ size: number; anchors: (Rfc3161AnchorInfo | NostrAnchorInfo)[] }> {
    const cp = await this.log.checkpoint(countParam('size', size) as number);
    const out: (Rfc3161AnchorInfo | NostrAnchorInfo)[] = [];
    const ts = await this.witnessed.timestamp(cp.size);
    if (ts) out.push({ type: 'rfc3161', size: ts.size, gen_time: ts.gen_time, tsa_name: ts.tsa_name, received_at: ts.received_at, url: `${this.identity.publicBase}/api/ledger/checkpoints/${ts.size}/timestamp` });
    const n = await this.nostr.of(cp.size);
    if (n) out.push(n);
    return { size: cp.size, anchors: out };
  }
}
