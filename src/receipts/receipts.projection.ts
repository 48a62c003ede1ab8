import { Injectable, OnModuleInit } from '@nestjs/common';
import { Tx } from '../database/database.service';
import { StoredEvent } from '../core/ledger/event-hash';
import { Projection, ProjectionRegistry } from '../ledger/projections';

/** Data of `ReceiptRecorded`: the receipt document exactly as received, and what the core found at ingestion. */
export interface ReceiptRecordedData {
  id: string;
  raw: string;
  form: string;
  wrapped_in: string | null;
  verdict: string;
  reasons: string[];
  provenance_class: string | null;
  tool: string | null;
  status: string | null;
  output_hash: string | null;
  created_at: string | null;
  supersedes: string | null;
  /** The writing key's publication setting (absent in events before it existed = `full`). */
  publication?: 'full' | 'metadata';
}

/** Data of `ReceiptCorrected`, appended to the superseded receipt's stream (S9). */
export interface ReceiptCorrectedData {
  id: string;
  superseded_by: string;
}

/** The `receipts` read model. */
@Injectable()
export class ReceiptsProjection implements Projection, OnModuleInit {
  readonly name = 'receipts';
  readonly tables = ['receipts'];

  constructor(private readonly registry: ProjectionRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  canHandle(type: string): boolean {
    return type === 'ReceiptRecorded' || type === 'ReceiptCorrected';
  }

  async evolve(tx: Tx, e: StoredEvent): Promise<void> {
    if (e.type === 'ReceiptRecorded') {
      const d = JSON.parse(e.data) as ReceiptRecordedData;
      await tx.query(
        `INSERT INTO receipts (id, id_as_given, form, wrapped_in, raw, verdict, reasons, provenance_class, tool, status, output_hash, created_at, supersedes, superseded_by, position, recorded_at, publication)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
        [d.id.toLowerCase(), d.id, d.form, d.wrapped_in, d.raw, d.verdict, JSON.stringify(d.reasons), d.provenance_class, d.tool, d.status, d.output_hash, d.created_at, d.supersedes, e.position, e.recorded_at, d.publication ?? 'full'],
      );
    } else {
      const d = JSON.parse(e.data) as ReceiptCorrectedData;
      await tx.query('UPDATE receipts SET superseded_by = ? WHERE id = ?', [d.superseded_by.toLowerCase(), d.id.toLowerCase()]);
    }
  }
}
