/** Every component schema of the OpenAPI document, one set per module. */
import { KEY_SCHEMAS } from '../auth/dto/keys.schemas';
import { ERASED_RECORD_SCHEMAS } from '../erasure/erasure.schemas';
import { EVIDENCE_SCHEMAS } from '../evidence/dto/evidence.schemas';
import { COVERAGE_SCHEMAS } from '../coverage/dto/coverage.schemas';
import { LEDGER_SCHEMAS } from '../ledger/ledger.schemas';
import { LOG_SCHEMAS } from '../log/log.schemas';
import { OUTCOME_SCHEMAS } from '../outcomes/dto/outcomes.schemas';
import { ERASURE_SCHEMAS } from '../erasure/dto/erasure.schemas';
import { RECEIPT_SCHEMAS } from '../receipts/dto/receipts.schemas';
import { TIMELINE_SCHEMAS } from '../timelines/dto/timelines.schemas';
import { BATCH_SCHEMAS } from '../verification-queue/dto/batches.schemas';
import { WEBHOOK_SCHEMAS } from '../webhooks/dto/webhooks.schemas';
import { WORKFLOW_SCHEMAS } from '../workflows/dto/workflows.schemas';
import { COMMON_SCHEMAS } from './common.schemas';
import type { Schema } from './openapi';

export const API_SCHEMAS: Record<string, Schema>[] = [COMMON_SCHEMAS, RECEIPT_SCHEMAS, TIMELINE_SCHEMAS, WORKFLOW_SCHEMAS, COVERAGE_SCHEMAS, BATCH_SCHEMAS, KEY_SCHEMAS, LEDGER_SCHEMAS, LOG_SCHEMAS, WEBHOOK_SCHEMAS, OUTCOME_SCHEMAS, EVIDENCE_SCHEMAS, ERASURE_SCHEMAS, ERASED_RECORD_SCHEMAS];
