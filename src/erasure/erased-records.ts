import type { Queryable } from '../database/rows';
/**
 * What an erased record shows (issue 29): the erasure that took its content
 * (who, when, why, on which basis), the position of the `PayloadsErased`
 * event and where that event sits in the verifiable log. Read-only; shared
 * by the receipt, job and outcome pages and their machine verifiers.
 */
import { Injectable } from '@nestjs/common';
import { PublicUrls } from '../common/urls';
import { DatabaseService } from '../database/database.service';
import type { LogLocation } from '../log/log-answers';
import { LogService } from '../log/log.service';
import { ErasureRow, ErasuresRepository } from './erasures.repository';

/**
 * The HTTP status of a machine verifier whose record's content was erased:
 * 410 Gone. 200 stays "everything re-checked and valid" and 422 "a check
 * failed" (which wins over erasure); 410 says the bytes a re-check needs are
 * gone for good, with the erasure and the verdict recorded at ingestion in
 * the body, so `curl -f` and `response.ok` never read an erased record as
 * verified.
 */
export const ERASED_STATUS = 410;

/** An erasure as an erased record's page and verifier state it. */
export interface ErasureNotice {
  erasure_id: string;
  /** `GET /api/erasures/{id}`. */
  url: string;
  erased_at: string;
  erased_by: { key_id: string; name: string };
  reason: string;
  legal_basis: string;
  /** The ledger position of the `PayloadsErased` event. */
  erasure_position: number;
  /** "Content erased on <date> by <key name> (<legal basis>): <reason>". */
  statement: string;
}

/** {@link ErasureNotice} with the `PayloadsErased` event's place in the log and its inclusion proof. */
export interface LocatedErasureNotice extends ErasureNotice {
  /** Null only when the erasure is missing from the read model. */
  erasure_log: LogLocation | null;
}

/** "Content erased on <date> by <key name> (<legal basis>): <reason>" (the date is the UTC day of `erased_at`). */
export function erasureStatement(e: Pick<ErasureRow, 'erased_at' | 'key_name' | 'legal_basis' | 'reason'>): string {
  return `Content erased on ${e.erased_at.slice(0, 10)} by ${e.key_name} (${e.legal_basis}): ${e.reason}`;
}

/** True when a read model's stored text is the mark of erased content (`raw = ''`, issue 29). */
export function isErasedRaw(raw: string | null | undefined): boolean {
  return raw === '';
}

/** Reads the erasures of erased records for pages and verifiers. */
@Injectable()
export class ErasedRecords {
  private readonly repo = new ErasuresRepository();

  constructor(
    private readonly db: DatabaseService,
    private readonly urls: PublicUrls,
    private readonly log: LogService,
  ) {}

  /** How many events were erased so far (ledger-wide, in `q`): part of the key of any cached result computed from content, so an erasure invalidates it. */
  erasedCount(q: Queryable): Promise<number> {
    return this.repo.erasedCount(q);
  }

  /** The erasure notices of those of `positions` that were erased, keyed by position. */
  async ofPositions(positions: readonly number[]): Promise<Map<number, ErasureNotice>> {
    const rows = await this.repo.ofPositions(this.db, positions);
    return new Map([...rows].map(([p, r]) => [p, this.notice(r)]));
  }

  /**
   * The erasure of the event at `position` with the `PayloadsErased` event's
   * log location (its inclusion proof checked), or null when the payload is
   * held.
   */
  async located(position: number): Promise<LocatedErasureNotice | null> {
    const r = await this.repo.ofPosition(this.db, position);
    if (!r) return null;
    return { ...this.notice(r), erasure_log: await this.log.locate(r.position, this.urls.path(`/api/ledger/events/${r.position}/proof`)) };
  }

  private notice(r: ErasureRow): ErasureNotice {
    return {
      erasure_id: r.erasure_id,
      url: this.urls.erasure(r.erasure_id),
      erased_at: r.erased_at,
      erased_by: { key_id: r.key_id, name: r.key_name },
      reason: r.reason,
      legal_basis: r.legal_basis,
      erasure_position: r.position,
      statement: erasureStatement(r),
    };
  }
}
