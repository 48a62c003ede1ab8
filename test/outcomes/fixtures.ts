/** Outcome reports for tests (issue 18): a payment system's observation of a recorded call, with a correct output commitment. */
import { sha256Hex } from '../../src/core/aer1';
import { StepSpec } from '../coverage/fixtures';
import { uuidFor } from '../coverage/fixtures';

export interface OutcomeSpec {
  /** A name the outcome id is derived from (stable). */
  name: string;
  job_id: string;
  receipt_id: string;
  result?: 'confirmed' | 'failed' | 'reversed' | 'not_found';
  effect?: string;
  system?: string;
  observed_at?: string;
  /** The observation text (its UTF-8 bytes are committed). */
  observation?: string;
}

/** A valid outcome report: canonical bytes strict base64, output_hash their SHA-256. */
export function outcomeFor(s: OutcomeSpec): Record<string, string> {
  const bytes = Buffer.from(s.observation ?? JSON.stringify({ ledger: s.system ?? 'PAYMENTS', receipt: s.receipt_id, state: s.result ?? 'confirmed' }), 'utf8');
  return {
    outcome_id: uuidFor(`outcome/${s.name}`),
    job_id: s.job_id,
    receipt_id: s.receipt_id,
    effect: s.effect ?? 'payment.settled',
    result: s.result ?? 'confirmed',
    observed_at: s.observed_at ?? '2026-10-01T12:01:00Z',
    system: s.system ?? 'PAYMENTS',
    canonical_bytes: bytes.toString('base64'),
    output_hash: 'sha256:' + sha256Hex(bytes),
  };
}

/** A payment job: look up the customer, then send the payment (the one call whose effect the payment system owns). */
export const PAYMENT_STEPS: StepSpec[] = [{ tool: 'fetch_customer' }, { tool: 'send_payment' }];

/** The plan for {@link PAYMENT_STEPS}: the payment requires a `payment.settled` confirmation from PAYMENTS. */
export function paymentPlan(job: string, outcome: Record<string, unknown> = { effect: 'payment.settled', from_system: 'PAYMENTS' }): Record<string, unknown> {
  return {
    job_id: job,
    title: 'Pay supplier invoice',
    unplanned: 'flag',
    expected_actions: [
      { action_id: 'lookup', tool: 'fetch_customer' },
      { action_id: 'pay', tool: 'send_payment', after: ['lookup'], outcome },
    ],
  };
}
