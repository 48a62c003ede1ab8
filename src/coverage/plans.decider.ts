/**
 * The rules of a plan stream (registered once per job or workflow; amended
 * only by adding the next version), decided once. Pure: state in, events or
 * a typed error (409) out.
 */
import { ConflictError } from '../common/errors';
import type { PlanAmended, PlanRegistered, PlanVersionData } from './coverage.events';

/** Decide registering `data` (version 1) given the plan the subject already has (null: none). 409 `plan_exists`. */
export function decideRegister(existingPlanId: string | null, data: PlanVersionData): [PlanRegistered] {
  if (existingPlanId !== null) {
    const { kind, id } = data.subject;
    throw new ConflictError('plan_exists', `${kind} ${id} already has plan ${existingPlanId}: amend it instead (POST /api/plans/${existingPlanId}/amendments)`, { plan_id: existingPlanId });
  }
  return [{ type: 'PlanRegistered', data }];
}

/**
 * Decide amending a plan at `currentVersion` with `data` (its `version` the
 * next one). `supersedes` is the version the client names (null: none
 * named): 409 `plan_version_conflict` when it is not the current one.
 */
export function decideAmend(planId: string, currentVersion: number, supersedes: number | null, data: PlanVersionData): [PlanAmended] {
  if (supersedes !== null && supersedes !== currentVersion) {
    throw new ConflictError('plan_version_conflict', `plan ${planId} is at version ${currentVersion}, not ${supersedes}`, { current_version: currentVersion });
  }
  return [{ type: 'PlanAmended', data }];
}
