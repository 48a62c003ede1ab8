/**
 * Parts of a coverage report's input that the one assembler
 * (src/core/coverage/assemble.ts, called by the server and by
 * `aer1 verify-pack`) builds from events: the plan version in force with its
 * `plan_meta`, and the outcome reports (issue 18) answering the recorded calls.
 *
 * Pure: no database, no file.
 */
import type { OutcomeResult } from '../outcomes/outcome';
import { OutcomeRecord, outcomeNamesSubject } from './outcomes';
import type { NormalizedPlan, PlanSubject } from './plan';
import type { ReconcileInput } from './types';

/** A recorded plan version, as a `plan_versions` row or a pack's `plan/<plan_id>/<version>` member holds it. */
export interface PlanVersionInput {
  plan_id: string;
  version: number;
  /** The normalized plan's canonical JSON text. */
  plan: string;
  digest: string;
  registered_at: string;
  /** Ledger position of the version's event. */
  position: number;
}

/**
 * The plan in force as of ledger position `asOf`: of the versions recorded at
 * or below it (ordered by position), the last. `usable` lists them in that
 * order. Null when none is recorded at or below `asOf` (the server answers
 * 422 `no_plan`). `plan` is null when that version's content was erased
 * (issue 29: its `plan` is '', the read models' mark; nothing can be
 * reconciled against it). Throws SyntaxError when the version's `plan` is
 * other text that is not JSON.
 */
export function planInForce<T extends PlanVersionInput>(versions: readonly T[], asOf: number): { used: T; usable: T[]; plan: NormalizedPlan | null } | null {
  const usable = versions.filter((v) => v.position <= asOf).sort((a, b) => a.position - b.position);
  if (usable.length === 0) return null;
  const used = usable[usable.length - 1];
  return { used, usable, plan: used.plan === '' ? null : (JSON.parse(used.plan) as NormalizedPlan) };
}

/**
 * The report's `plan_meta` for the plan in force (`usable`: the versions at or
 * below the report's position in ledger order, the last in force, as
 * {@link planInForce} gives them); `first` is the position of the first
 * recorded event of the execution, or null when nothing is recorded
 * (docs/coverage.md, "registered after execution began").
 */
export function planMeta(usable: readonly PlanVersionInput[], first: number | null): ReconcileInput['plan_meta'] {
  const used = usable[usable.length - 1];
  return {
    plan_id: used.plan_id,
    version: used.version,
    digest: used.digest,
    registered_at: used.registered_at,
    registered_position: used.position,
    execution_first_position: first,
    superseded_versions: usable.slice(0, -1).map((v) => v.version),
  };
}

/**
 * One recorded outcome report: an `outcomes` row, or the data of an
 * `OutcomeReported` event (src/outcomes/outcomes.events.ts) with the event's
 * position. Its fields were verified when it was recorded.
 */
export interface OutcomeSource {
  /** Ledger position of its `OutcomeReported` event. */
  position: number;
  outcome_id: string;
  job_id: string;
  receipt_id: string;
  effect: string;
  result: string;
  observed_at: string;
  system: string;
  output_hash: string;
}

/**
 * The report's `outcomes` input (issue 18): the outcome reports naming
 * `subject` (its job id, or a workflow's id: issue 26, {@link outcomeNamesSubject};
 * not filtered when absent, `reconcile` filters again) and answering one of `receiptIds` (the receipts the subject's entries or
 * workflow steps name, lowercase; corrections are not included) recorded at
 * or below `asOf`, in ledger order, with the ids lowercased (as the
 * `outcomes` read model stores them).
 */
export function outcomeInputs(found: readonly OutcomeSource[], receiptIds: Iterable<string>, asOf: number, subject?: PlanSubject): OutcomeRecord[] {
  const ids = new Set([...receiptIds].map((x) => x.toLowerCase()));
  return found
    .filter((o) => o.position <= asOf && ids.has(o.receipt_id.toLowerCase()) && (subject === undefined || outcomeNamesSubject(o.job_id, subject)))
    .sort((a, b) => a.position - b.position)
    .map((o) => ({
      outcome_id: o.outcome_id.toLowerCase(),
      job_id: o.job_id,
      receipt_id: o.receipt_id.toLowerCase(),
      effect: o.effect,
      result: o.result as OutcomeResult,
      observed_at: o.observed_at,
      system: o.system,
      output_hash: o.output_hash,
    }));
}
