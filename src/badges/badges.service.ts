import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { isUuid } from '../core/aer1';
import { badgeSvg, jobBadge, receiptBadge, workflowBadge } from '../core/badge';
import { NotFoundError } from '../common/errors';
import { CheckpointLocator } from '../log/checkpoint-locator';
import { ReceiptsService } from '../receipts/receipts.service';
import { TimelineVerificationService } from '../timelines/timeline-verification.service';
import { WorkflowsService } from '../workflows/workflows.service';
import { isObject } from '../core/aer1';
import { DatabaseService } from '../database/database.service';
import { OutcomeReads } from '../outcomes/outcome-reads';

/** A rendered badge and its entity tag (a hash of the markup: the same verdict and checkpoint give the same tag). */
export interface RenderedBadge {
  svg: string;
  etag: string;
}

function rendered(svg: string): RenderedBadge {
  return { svg, etag: `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"` };
}

/**
 * Verify badges: each verdict recomputed now by the same code as the
 * verify endpoints (`GET /api/receipts/{id}/verify`, `/api/jobs/{id}/verify`,
 * `/api/workflows/{id}/verify`), with the deciding outcome against the
 * receipt (or any receipt of the job) in one indexed query, drawn by
 * src/core/badge.ts. Unknown records
 * are 404 `not_found`.
 */
@Injectable()
export class BadgesService {
  constructor(
    private readonly receipts: ReceiptsService,
    private readonly timelines: TimelineVerificationService,
    private readonly workflows: WorkflowsService,
    private readonly checkpoints: CheckpointLocator,
    private readonly db: DatabaseService,
    private readonly outcomes: OutcomeReads,
  ) {}

  async receipt(id: string): Promise<RenderedBadge> {
    if (!isUuid(id)) throw new NotFoundError('receipt', id);
    const { row, result, receipt } = await this.receipts.verifyStored(id);
    const status = isObject(receipt) ? receipt.status : undefined;
    const against = await this.outcomes.decidingAgainst(this.db, { receipt: row.id });
    const cp = await this.checkpoints.locate({ kind: 'receipt', id: row.id, position: Number(row.position) });
    return rendered(badgeSvg(receiptBadge(row.raw === '' ? 'erased' : result.verdict, row.superseded_by ?? null, status, against?.row ?? null), cp?.size));
  }

  async job(jobId: string): Promise<RenderedBadge> {
    const v = await this.timelines.verify(jobId);
    const against = await this.outcomes.decidingAgainst(this.db, { job: jobId });
    const cp = await this.checkpoints.locate({ kind: 'job', id: jobId, position: null });
    return rendered(badgeSvg(jobBadge(v.assessment, v.binding_attestation, against?.row ?? null), cp?.size));
  }

  async workflow(id: string): Promise<RenderedBadge> {
    if (!isUuid(id)) throw new NotFoundError('workflow', id);
    const { report } = await this.workflows.verifyStored(id);
    const cp = await this.checkpoints.locate({ kind: 'workflow', id: report.workflow_id, position: null });
    return rendered(badgeSvg(workflowBadge(report.verification_status, report.findings.length), cp?.size));
  }
}
