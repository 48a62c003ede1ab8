import { Injectable, OnModuleInit } from '@nestjs/common';
import { verifyTimeline } from '../core/aer1';
import { ndjsonTexts, splitJsonArray } from '../common/raw-json';
import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, ProjectionRegistry, unhandled } from '../ledger/projections';
import { EndpointCommitmentRecordedData, TIMELINE_EVENT_TYPES, TimelineEntryAppendedData, TimelineEvent, TimelineImportedData } from './timelines.events';
import { TimelineEntryRow, TimelinesRepository } from './timelines.repository';

/** The `timelines`, `timeline_entries` and `commitments` read models. */
@Injectable()
export class TimelinesProjection implements Projection<TimelineEvent>, OnModuleInit {
  readonly name = 'timelines';
  readonly tables = ['timelines', 'timeline_entries', 'commitments'];
  readonly eventTypes = TIMELINE_EVENT_TYPES;

  constructor(
    private readonly registry: ProjectionRegistry,
    private readonly timelines: TimelinesRepository,
  ) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  async evolve(tx: Tx, e: RecordedEvent<TimelineEvent>): Promise<void> {
    switch (e.type) {
      case 'TimelineEntryAppended':
        return this.appended(tx, e.position, e.data);
      case 'TimelineImported':
        return this.imported(tx, e.position, e.data);
      case 'EndpointCommitmentRecorded':
        return this.commitment(tx, e.position, e.recorded_at, e.data);
      default:
        return unhandled(e);
    }
  }

  private async appended(tx: Tx, position: number, d: TimelineEntryAppendedData): Promise<void> {
    // Appends are checked to extend a -07 chain, so the only rule a timeline
    // built this way can still fail is closing (S7.2). GET .../verify re-verifies anyway.
    const verdict = d.close ? 'valid' : 'invalid';
    const reasons = d.close ? [] : ['not_closed'];
    if (d.seq === 1) {
      await this.timelines.insertTimeline(tx, { job_id: d.job_id, source: 'append', entry_count: 1, head_digest: d.entry_digest, closed: d.close, verdict, reasons, construction: '-07' }, position);
    } else {
      await this.timelines.updateHead(tx, d.job_id, { entry_count: d.seq, head_digest: d.entry_digest, closed: d.close, verdict, reasons }, position);
    }
    await this.timelines.insertEntries(tx, [
      {
        job_id: d.job_id,
        seq: d.seq,
        raw: d.raw,
        entry_digest: d.entry_digest,
        receipt_id: d.receipt_id.toLowerCase(),
        tool: d.tool,
        provenance_class: d.provenance_class,
        close: d.close,
        position,
        publication: d.publication ?? 'full',
      },
    ]);
  }

  private async imported(tx: Tx, position: number, d: TimelineImportedData): Promise<void> {
    const texts = importedEntryTexts(d);
    if (texts === null) throw new Error(`TimelineImported at position ${position}: raw is not a JSON array`);
    const values = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
    // Per-entry digests are recomputed by the core from the stored texts (deterministic on replay).
    const result = verifyTimeline(values, { collectEntries: true });
    await this.timelines.insertTimeline(
      tx,
      { job_id: d.job_id, source: 'import', entry_count: d.entry_count, head_digest: d.final_entry_digest, closed: result.closed, verdict: d.verdict, reasons: d.reasons, construction: d.construction },
      position,
    );
    const rows: TimelineEntryRow[] = values.map((v, k) => ({
      job_id: d.job_id,
      seq: v.seq as number,
      raw: texts[k],
      entry_digest: result.entries?.[k]?.entry_digest ?? null,
      receipt_id: typeof v.id === 'string' ? v.id.toLowerCase() : null,
      tool: typeof v.tool === 'string' ? v.tool : null,
      provenance_class: typeof v.provenance_class === 'string' ? v.provenance_class : null,
      close: v.close === true,
      position,
      publication: d.publication ?? 'full',
    }));
    await this.timelines.insertEntries(tx, rows);
  }

  private async commitment(tx: Tx, position: number, recordedAt: string, d: EndpointCommitmentRecordedData): Promise<void> {
    await this.timelines.insertCommitment(tx, {
      id: d.id,
      job_id: d.job_id,
      raw: d.raw,
      binding: d.binding,
      reasons: d.reasons,
      entry_count_at_record: d.entry_count_at_record,
      position,
      recorded_at: recordedAt,
      attestation: d.attestation ?? null,
      issued_by: d.issued_by ?? null,
    });
  }
}

/** The exact texts of the entries of an import: the lines of NDJSON, or the elements of a JSON array (null when `raw` is neither). */
export function importedEntryTexts(d: Pick<TimelineImportedData, 'raw' | 'format'>): string[] | null {
  return d.format === 'ndjson' ? ndjsonTexts(d.raw) : splitJsonArray(d.raw);
}
