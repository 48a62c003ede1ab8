/**
 * Read-only listings of receipts: `GET /api/receipts` (metadata only) and
 * `GET /api/receipts/{id}` (the stored record). The SQL is in the module's repository.
 */
import { Injectable } from '@nestjs/common';
import { isUuid } from '../core/aer1';
import type { Principal } from '../auth/api-keys.service';
import { LedgerError, NotFoundError } from '../common/errors';
import { PageRequest, toPage } from '../common/pagination';
import { PublicUrls } from '../common/urls';
import { ReceiptsRepository } from './receipts.repository';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { mayReadWithheld } from '../auth/permissions';
import { ReceiptsService } from './receipts.service';
import { ErasedRecords, ERASED_STATUS, isErasedRaw } from '../erasure/erased-records';



@Injectable()
export class ReceiptsListing {
  constructor(
    private readonly db: DatabaseService,
    private readonly receipts: ReceiptsService,
    private readonly urls: PublicUrls,
    private readonly receiptsRepo: ReceiptsRepository,
    private readonly events: EventsRepository,
    private readonly erased: ErasedRecords,
  ) {}

  /** A page of receipt metadata `{items: ReceiptSummary[], next}` (no canonical bytes, whatever the publication setting). */
  async list(p: PageRequest) {
    const rows = await this.receiptsRepo.receiptsAfter(this.db, p);
    const by = await this.events.recordedByAt(this.db, rows.slice(0, p.limit).map((r) => Number(r.position)));
    return toPage(rows, p.limit, (r) => ({
      id: r.id,
      recorded_at: r.recorded_at,
      position: Number(r.position),
      provenance_class: r.provenance_class,
      tool: r.tool,
      status: r.status,
      verdict: r.verdict,
      erased: r.erased === true || Number(r.erased) === 1,
      output_hash: r.output_hash,
      recorded_by: by.get(Number(r.position)) ?? null,
      url: this.urls.receipt(r.id),
    }));
  }

  /**
   * The stored document of `id`, byte for byte as recorded: what
   * `aer1 verify` reads as is. 403 `canonical_bytes_withheld` under a
   * `metadata` publication unless `viewer` is an auditor or admin; 404
   * `not_found`.
   */
  async raw(id: string, viewer: Principal | null): Promise<string> {
    if (!isUuid(id)) throw new NotFoundError('receipt', id);
    const row = await this.receipts.get(id);
    if (row.publication === 'metadata' && !mayReadWithheld(viewer)) {
      throw new LedgerError(403, 'canonical_bytes_withheld', 'the recording key\'s publication setting is `metadata`: the stored document (with its canonical bytes) is served to auditor and admin keys only (S13)');
    }
    if (isErasedRaw(row.raw)) {
      const erasure = (await this.erased.ofPositions([Number(row.position)])).get(Number(row.position)) ?? null;
      throw new LedgerError(ERASED_STATUS, 'content_erased', `${erasure?.statement ?? 'Content erased'}; the stored document is gone for good`, { erasure });
    }
    return row.raw;
  }

  /**
   * The stored record of `id` as recorded (verdict and reasons at record,
   * not re-verified). Under a `metadata` publication the stored text and the
   * canonical bytes are withheld unless `viewer` is an auditor or admin. 404
   * `not_found`. Erased content (issue 29): 200 with `document` and `raw`
   * null, `output_hash` null, `erased: true` and `erasure` (the
   * `ErasureNotice`); `verdict_at_record` stays.
   */
  async get(id: string, viewer: Principal | null) {
    if (!isUuid(id)) throw new NotFoundError('receipt', id);
    const row = await this.receipts.get(id);
    const gone = isErasedRaw(row.raw);
    const withheld = !gone && row.publication === 'metadata' && !mayReadWithheld(viewer);
    let document: unknown = null;
    try {
      document = JSON.parse(row.raw);
    } catch {
      document = null;
    }
    if (withheld) document = withhold(document);
    return {
      id: row.id,
      document,
      raw: withheld || gone ? null : row.raw,
      canonical_bytes_withheld: withheld,
      erased: gone,
      erasure: gone ? ((await this.erased.ofPositions([Number(row.position)])).get(Number(row.position)) ?? null) : null,
      form: row.form,
      wrapped_in: row.wrapped_in,
      verdict_at_record: row.verdict,
      reasons_at_record: JSON.parse(row.reasons) as string[],
      provenance_class: row.provenance_class,
      tool: row.tool,
      status: row.status,
      output_hash: gone ? null : row.output_hash,
      created_at: row.created_at,
      supersedes: row.supersedes,
      superseded_by: row.superseded_by,
      position: Number(row.position),
      recorded_at: row.recorded_at,
      publication: row.publication,
      recorded_by: await this.receipts.recordedBy(row),
      url: this.urls.receipt(row.id),
      verify_url: this.urls.receiptVerify(row.id),
    };
  }
}

/** A copy of a stored document with every `canonical_bytes` member of its receipt replaced (the stored text is never changed). */
function withhold(doc: unknown): unknown {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return doc;
  const d = doc as Record<string, unknown>;
  if ('canonical_bytes' in d) return { ...d, canonical_bytes: '(withheld)' };
  const result = d.result;
  if (result && typeof result === 'object' && !Array.isArray(result) && (result as Record<string, unknown>)._receipt) {
    return { ...d, result: { ...(result as Record<string, unknown>), _receipt: withhold((result as Record<string, unknown>)._receipt) } };
  }
  return d;
}
