/** The plan decider, pure: given the plan state, then events or a 409. */
import { thrown } from '../helpers/errors';
import { PlanVersionData } from '../../src/coverage/coverage.events';
import { decideAmend, decideRegister } from '../../src/coverage/plans.decider';

describe('plan decider', () => {
  const data = { plan_id: 'p', version: 1, subject: { kind: 'job', id: 'j' }, plan: {}, digest: 'd', registered_at: 't' } as unknown as PlanVersionData;
  it('given no plan for the subject, then PlanRegistered; given one, then 409 plan_exists', () => {
    expect(decideRegister(null, data)).toEqual([{ type: 'PlanRegistered', data }]);
    const e = thrown(() => decideRegister('p0', data));
    expect([e.code, e.message, e.details]).toEqual(['plan_exists', 'job j already has plan p0: amend it instead (POST /api/plans/p0/amendments)', { plan_id: 'p0' }]);
  });

  it('given version 2, when an amendment names version 2 or none, then PlanAmended; naming 1, then 409 plan_version_conflict', () => {
    const next = { ...data, version: 3 };
    expect(decideAmend('p', 2, 2, next)).toEqual([{ type: 'PlanAmended', data: next }]);
    expect(decideAmend('p', 2, null, next)).toEqual([{ type: 'PlanAmended', data: next }]);
    const e = thrown(() => decideAmend('p', 2, 1, next));
    expect([e.code, e.message, e.details]).toEqual(['plan_version_conflict', 'plan p is at version 2, not 1', { current_version: 2 }]);
  });
});
