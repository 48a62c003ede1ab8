import { Injectable, OnModuleInit } from '@nestjs/common';
import { verifyTimeline } from '../core/aer1';
import { splitJsonArray } from '../common/raw-json';
import { Tx } from '../database/database.service';
import { StoredEvent } from '../core/ledger/event-hash';
import { Projection, ProjectionRegistry } from '../ledger/projections';

/** Data of `TimelineEntryAppended` (stream `timeline:<job_id>`): one entry exactly as received and what the core computed. */
export interface TimelineEntryAppendedData {
  job_id: string;
  seq: number;
  /** The entry's exact source text. */
  raw: string;
  /** The recomputed S7.1 digest of this entry. */
  entry_digest: string;
  /** The entry's `id` (a receipt id), as given. */
  receipt_id: string;
  tool: string;
  provenance_class: string;
  close: boolean;
  /** The writing key's publication setting (absent in events before it existed = `full`). */
  publication?: 'full' | 'metadata';
}

/** Data of `TimelineImported`: a complete timeline recorded elsewhere, the whole body text as received and the core's verdict. */
export interface TimelineImportedData {
  job_id: string;
  /** The whole request body text (a JSON array). */
  raw: string;
  verdict: string;
  reasons: string[];
  construction: string | null;
  entry_count: number;
  final_entry_digest: string | null;
  /** The writing key's publication setting (absent = `full`). */
  publication?: 'full' | 'metadata';
}

/** Data of `EndpointCommitmentRecorded`: an external endpoint commitment exactly as received, and how it compared at that moment. */
export interface EndpointCommitmentRecordedData {
  id: string;
  job_id: string;
  /** The commitment object's exact text (witness metadata included). */
  raw: string;
  binding: boolean;
  reasons: string[];
  /** Entries in the visible timeline when the commitment was recorded. */
  entry_count_at_record: number;
}

const ROWS_PER_INSERT = 100;

/** The `timelines`, `timeline_entries` and `commitments` read models. */
@Injectable()
export class TimelinesProjection implements Projection, OnModuleInit {
  readonly name = 'timelines';
  readonly tables = ['timelines', 'timeline_entries', 'commitments'];

  constructor(private readonly registry: ProjectionRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  canHandle(type: string): boolean {
    return type === 'TimelineEntryAppended' || type === 'TimelineImported' || type === 'EndpointCommitmentRecorded';
  }

  async evolve(tx: Tx, e: StoredEvent): Promise<void> {
    if (e.type === 'TimelineEntryAppended') await this.appended(tx, e, JSON.parse(e.data) as TimelineEntryAppendedData);
    else if (e.type === 'TimelineImported') await this.imported(tx, e, JSON.parse(e.data) as TimelineImportedData);
    else await this.commitment(tx, e, JSON.parse(e.data) as EndpointCommitmentRecordedData);
  }

  private async appended(tx: Tx, e: StoredEvent, d: TimelineEntryAppendedData): Promise<void> {
    // Appends are checked to extend a -07 chain, so the only rule a timeline
    // built this way can still fail is closing (S7.2). GET .../verify re-verifies anyway.
    const verdict = d.close ? 'valid' : 'invalid';
    const reasons = JSON.stringify(d.close ? [] : ['not_closed']);
    if (d.seq === 1) {
      await tx.query(
        `INSERT INTO timelines (job_id, source, entry_count, head_digest, closed, verdict, reasons, construction, first_position, last_position)
         VALUES (?, 'append', ?, ?, ?, ?, ?, '-07', ?, ?)`,
        [d.job_id, 1, d.entry_digest, d.close ? 1 : 0, verdict, reasons, e.position, e.position],
      );
    } else {
      await tx.query('UPDATE timelines SET entry_count = ?, head_digest = ?, closed = ?, verdict = ?, reasons = ?, last_position = ? WHERE job_id = ?', [
        d.seq,
        d.entry_digest,
        d.close ? 1 : 0,
        verdict,
        reasons,
        e.position,
        d.job_id,
      ]);
    }
    await tx.query(
      'INSERT INTO timeline_entries (job_id, seq, raw, entry_digest, receipt_id, tool, provenance_class, close, position, publication) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [d.job_id, d.seq, d.raw, d.entry_digest, d.receipt_id.toLowerCase(), d.tool, d.provenance_class, d.close ? 1 : 0, e.position, d.publication ?? 'full'],
    );
  }

  private async imported(tx: Tx, e: StoredEvent, d: TimelineImportedData): Promise<void> {
    const texts = splitJsonArray(d.raw);
    if (texts === null) throw new Error(`TimelineImported at position ${e.position}: raw is not a JSON array`);
    const values = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
    // Per-entry digests are recomputed by the core from the stored texts (deterministic on replay).
    const result = verifyTimeline(values, { collectEntries: true });
    await tx.query(
      `INSERT INTO timelines (job_id, source, entry_count, head_digest, closed, verdict, reasons, construction, first_position, last_position)
       VALUES (?, 'import', ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.job_id, d.entry_count, d.final_entry_digest, result.closed ? 1 : 0, d.verdict, JSON.stringify(d.reasons), d.construction, e.position, e.position],
    );
    for (let start = 0; start < texts.length; start += ROWS_PER_INSERT) {
      const params: unknown[] = [];
      const rows: string[] = [];
      for (let k = start; k < Math.min(texts.length, start + ROWS_PER_INSERT); k++) {
        const v = values[k];
        rows.push('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
        params.push(
          d.job_id,
          v.seq,
          texts[k],
          result.entries?.[k]?.entry_digest ?? null,
          typeof v.id === 'string' ? v.id.toLowerCase() : null,
          typeof v.tool === 'string' ? v.tool : null,
          typeof v.provenance_class === 'string' ? v.provenance_class : null,
          v.close === true ? 1 : 0,
          e.position,
          d.publication ?? 'full',
        );
      }
      await tx.query(`INSERT INTO timeline_entries (job_id, seq, raw, entry_digest, receipt_id, tool, provenance_class, close, position, publication) VALUES ${rows.join(', ')}`, params);
    }
  }

  private async commitment(tx: Tx, e: StoredEvent, d: EndpointCommitmentRecordedData): Promise<void> {
    await tx.query('INSERT INTO commitments (id, job_id, raw, binding, reasons, entry_count_at_record, position, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      d.id,
      d.job_id,
      d.raw,
      d.binding ? 1 : 0,
      JSON.stringify(d.reasons),
      d.entry_count_at_record,
      e.position,
      e.recorded_at,
    ]);
  }
}
