import { Injectable, OnModuleInit } from '@nestjs/common';
import { Tx } from '../database/database.service';
import { StoredEvent } from '../core/ledger/event-hash';
import { Projection, ProjectionRegistry } from '../ledger/projections';
import { BatchRequestedData, ResultsRecordedData } from './batch.types';
import { VERIFICATION_TABLE_NAMES } from './schema';

const ROWS_PER_INSERT = 500;

/**
 * `verification_batches` and `verification_results` from the `batch:<id>`
 * streams. Results are inserted with ON CONFLICT DO NOTHING (primary key
 * batch, kind, id) and the counts recomputed, so replaying or a duplicated
 * event never counts a result twice.
 */
@Injectable()
export class VerificationProjection implements Projection, OnModuleInit {
  readonly name = 'verification_batches';
  readonly tables = VERIFICATION_TABLE_NAMES;

  constructor(private readonly registry: ProjectionRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  canHandle(type: string): boolean {
    return type === 'VerificationBatchRequested' || type === 'VerificationResultsRecorded';
  }

  async evolve(tx: Tx, e: StoredEvent): Promise<void> {
    if (e.type === 'VerificationBatchRequested') {
      const d = JSON.parse(e.data) as BatchRequestedData;
      await tx.query(
        'INSERT INTO verification_batches (batch_id, scope, total, done, invalid, created_at, completed_at, position) VALUES (?, ?, ?, 0, 0, ?, ?, ?) ON CONFLICT (batch_id) DO NOTHING',
        [d.batch_id, JSON.stringify(d.scope), d.total, e.recorded_at, d.total === 0 ? e.recorded_at : null, e.position],
      );
      return;
    }
    const d = JSON.parse(e.data) as ResultsRecordedData;
    for (let i = 0; i < d.results.length; i += ROWS_PER_INSERT) {
      const part = d.results.slice(i, i + ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (const r of part) params.push(d.batch_id, r.kind, r.id, r.seq, r.verdict, JSON.stringify(r.reasons), r.verified_at, e.position);
      await tx.query(
        `INSERT INTO verification_results (batch_id, target_kind, target_id, seq, verdict, reasons, verified_at, position) VALUES ${part.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (batch_id, target_kind, target_id) DO NOTHING`,
        params,
      );
    }
    await tx.query(
      `UPDATE verification_batches SET
         done = (SELECT COUNT(*) FROM verification_results WHERE batch_id = ?),
         invalid = (SELECT COUNT(*) FROM verification_results WHERE batch_id = ? AND verdict = 'invalid')
       WHERE batch_id = ?`,
      [d.batch_id, d.batch_id, d.batch_id],
    );
    await tx.query('UPDATE verification_batches SET completed_at = ? WHERE batch_id = ? AND completed_at IS NULL AND done >= total', [e.recorded_at, d.batch_id]);
  }
}
