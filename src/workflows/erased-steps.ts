/**
 * A workflow whose step receipts were erased (issue 29): the core (S8.2)
 * finds an erased step receipt's content nowhere and calls it `missing`;
 * the ledger knows it was recorded and erased, and says so. Pure.
 */
import { uuidKey, WorkflowResult } from '../core/aer1';
import type { StepOutcome } from '../core/aer1/workflow';

/** Stands in a step receipt map for a receipt the ledger holds whose content was erased (issue 29). */
export const ERASED = Symbol('erased');

/** Remove the {@link ERASED} entries from `held`; returns their keys (lowercase receipt ids). */
export function takeErased(held: Map<string, unknown>): string[] {
  const gone = [...held].filter(([, r]) => r === ERASED).map(([k]) => k);
  for (const k of gone) held.delete(k);
  return gone;
}

/** A step's outcome, `erased` when its receipt was recorded and its content erased since. */
export type StepReceiptOutcome = StepOutcome['receipt'] | 'erased';

/** {@link WorkflowResult} with erased steps named: `partly_erased` when nothing failed and nothing else is missing. */
export type WorkflowResultAfterErasure = Omit<WorkflowResult, 'steps' | 'verdict'> & { verdict: WorkflowResult['verdict'] | 'partly_erased'; steps: (Omit<StepOutcome, 'receipt'> & { receipt: StepReceiptOutcome })[] };

/**
 * `result` (from {@link verifyWorkflow} given the step receipts held, erased
 * ones left out) with the steps whose receipt was erased (`erased`: lowercase
 * receipt id to the erasure's statement) marked `erased` instead of
 * `missing`, `step_receipt_missing` dropped when no other step is missing, a
 * check `step_receipts.erased` (ok null: not re-checked) naming them, and
 * the verdict `partly_erased` when nothing else is wrong (never `valid`; a
 * failed check still makes it `invalid`).
 */
export function withErasedSteps(result: WorkflowResult, erased: ReadonlyMap<string, string>): WorkflowResultAfterErasure {
  if (erased.size === 0) return result;
  const named: string[] = [];
  const steps = result.steps.map((s) => {
    const statement = s.receipt_id !== null && s.receipt === 'missing' ? erased.get(uuidKey(s.receipt_id)) : undefined;
    if (statement === undefined) return s;
    named.push(`step ${String(s.seq)} (receipt ${s.receipt_id}): ${statement}`);
    return { ...s, receipt: 'erased' as const, reasons: [] };
  });
  if (named.length === 0) return result;
  const stillMissing = steps.filter((s) => s.receipt === 'missing').length;
  const reasons = stillMissing > 0 ? result.reasons : result.reasons.filter((r) => r !== 'step_receipt_missing');
  const checks = result.checks.map((c) =>
    c.name === 'step_receipts.present' && stillMissing === 0 ? { name: c.name, ok: true, detail: `${steps.length - named.length} step receipts at hand; ${named.length} recorded and erased since` } : c,
  );
  checks.push({ name: 'step_receipts.erased', ok: null, detail: `content erased (issue 29), not re-checked: ${named.join('; ')}` });
  return { ...result, steps, reasons, checks, verdict: reasons.length === 0 ? 'partly_erased' : result.verdict };
}
