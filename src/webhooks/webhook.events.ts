/**
 * What a webhook can subscribe to, and the `data` each sends. A delivery's
 * body is the Standard Webhooks envelope `{"type", "timestamp", "data"}`
 * (timestamp: when the event happened, RFC 3339 UTC).
 */
import type { Finding } from '../core/coverage/types';

/** `coverage.report.issued`: a coverage report was recorded (POST /api/coverage-reports). */
export interface CoverageReportIssuedPayload {
  report_id: string;
  /** The report's JSON URL. */
  url: string;
  /** The report's subject, as in the report. */
  subject: { job_id: string } | { workflow_id: string };
  /** `full_coverage` or `findings`. */
  result: string;
  findings: Finding[];
  digest: string;
  as_of_position: number;
  issued_at: string;
}

/** One result of a batch that did not verify. */
export interface BatchFailure {
  kind: string;
  id: string;
  verdict: string;
  reasons: string[];
}

/** `verification.batch.completed`: every target of a verification batch has a recorded result. */
export interface BatchCompletedPayload {
  batch_id: string;
  url: string;
  total: number;
  /** Results whose verdict is not `valid`. */
  invalid: number;
  completed_at: string;
  /** The results whose verdict is not `valid`, in target order (at most {@link MAX_BATCH_FAILURES}). */
  failures: BatchFailure[];
  /** True when there were more failures than listed. */
  failures_truncated: boolean;
}

/** Failures listed in one `verification.batch.completed` delivery. */
export const MAX_BATCH_FAILURES = 1000;

/**
 * `ledger.checkpoint.witness_lag`: a witness has not cosigned the log's
 * current checkpoint for longer than allowed. Emitted by the witness
 * machinery (`WebhookDispatcher.emit('ledger.checkpoint.witness_lag', …)`).
 */
export interface WitnessLagPayload {
  /** The log's origin line. */
  origin: string;
  /** The witness's name (its verifier key name). */
  witness: string;
  /** Size of the log's newest checkpoint. */
  checkpoint_size: number;
  /** Size of the newest checkpoint this witness cosigned; null: none yet. */
  cosigned_size: number | null;
  /** Seconds since the newest checkpoint was published without this witness's cosignature. */
  lag_seconds: number;
  /** The lag allowed before this event is sent, in seconds. */
  threshold_seconds: number;
}

/** Every event type and its payload. */
export interface WebhookPayloads {
  'coverage.report.issued': CoverageReportIssuedPayload;
  'verification.batch.completed': BatchCompletedPayload;
  'ledger.checkpoint.witness_lag': WitnessLagPayload;
}

export type WebhookEventType = keyof WebhookPayloads;

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = ['coverage.report.issued', 'verification.batch.completed', 'ledger.checkpoint.witness_lag'];
