/**
 * The write-time side of a plan's `recorded_by_owner` (docs/coverage.md,
 * "Who recorded it"): a timeline write for a job whose latest plan version
 * names an owner is refused to keys of another owner, so nobody can take the
 * job id first. The report judges the record whether or not this check ran.
 */
import { LedgerError } from '../common/errors';
import type { Principal } from '../auth/api-keys.service';
import type { Queryable } from '../database/rows';
import { PlansRepository } from './plans.repository';

/** The plans read model (stateless: every read runs on the `q` it is given). */
const plans = new PlansRepository();

/** A key's recorder identity: its owner, or its key name when it has none. */
export function recorderIdentity(p: Pick<Principal, 'owner' | 'name'>): string {
  return p.owner ?? p.name;
}

/**
 * 403 `not_plan_owner` when the latest plan version for job `jobId` names a
 * `recorded_by_owner` that is not `by`'s recorder identity (admins too: their
 * writes would not count as the owner's record). Call inside the write
 * transaction, before anything is written.
 */
export async function assertPlanOwner(q: Queryable, jobId: string, by: Pick<Principal, 'owner' | 'name'>): Promise<void> {
  const plan = await plans.latestPlanOfJob(q, jobId);
  if (plan === null) return;
  const owner = (JSON.parse(plan) as { recorded_by_owner?: unknown }).recorded_by_owner;
  if (typeof owner !== 'string' || owner === recorderIdentity(by)) return;
  throw new LedgerError(403, 'not_plan_owner', `the plan for job ${JSON.stringify(jobId)} names recorded_by_owner ${JSON.stringify(owner)}; this key records as ${JSON.stringify(recorderIdentity(by))}; nothing was recorded`, {
    reasons: ['not_plan_owner'],
    recorded_by_owner: owner,
  });
}
