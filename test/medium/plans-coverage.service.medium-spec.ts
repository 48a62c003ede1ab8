/**
 * PlansService and CoverageService on their real repositories and database,
 * without HTTP: register / amend (the version a client names is checked) and
 * a coverage report issued from the events.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoverageService } from '../../src/coverage/coverage.service';
import { PlansRepository } from '../../src/coverage/plans.repository';
import { PlansService } from '../../src/coverage/plans.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { streams } from '../../src/ledger/streams';
import { TimelinesService } from '../../src/timelines/timelines.service';
import { body, DIALECTS, Medium, startMedium } from './harness';

const example = (name: string): string => readFileSync(join(__dirname, '../../examples/coverage', name), 'utf8');

describe.each(DIALECTS)('%s: PlansService and CoverageService (medium)', (dialect) => {
  let m: Medium;
  let plans: PlansService;
  beforeAll(async () => {
    m = await startMedium(dialect);
    plans = m.get(PlansService);
  });
  afterAll(async () => m?.close());

  it('given a registered plan, when it is amended naming the current version, then version 2 supersedes 1; a stale version is 409 plan_version_conflict', async () => {
    const by = await m.principal('compliance');
    const doc = { ...JSON.parse(example('plan.json')), job_id: 'job-m-plan' };
    const v1 = await plans.register(body(doc), by);
    expect(v1).toMatchObject({ version: 1, superseded_by: null, reason: null });
    await expect(plans.register(body(doc), by)).rejects.toMatchObject({ status: 409, code: 'plan_exists', details: { plan_id: v1.plan_id } });

    const amendment = { ...doc, title: 'amended', reason: 'scope', supersedes_version: 1 };
    delete (amendment as Record<string, unknown>).job_id;
    const v2 = await plans.amend(v1.plan_id, body(amendment), by);
    expect(v2).toMatchObject({ plan_id: v1.plan_id, version: 2, reason: 'scope', superseded_by: null });
    await expect(plans.amend(v1.plan_id, body(amendment), by)).rejects.toMatchObject({
      status: 409,
      code: 'plan_version_conflict',
      message: `plan ${v1.plan_id} is at version 2, not 1`,
      details: { current_version: 2 },
    });
    expect((await plans.get(v1.plan_id)).versions.map((v) => [v.version, v.superseded_by])).toEqual([
      [1, 2],
      [2, null],
    ]);
    const events = await m.get(LedgerService).readStream(streams.plan(v1.plan_id));
    expect(events.map((e) => [e.type, e.stream_position])).toEqual([
      ['PlanRegistered', 1],
      ['PlanAmended', 2],
    ]);
    expect(await m.get(PlansRepository).latestVersionNumber(m.db, v1.plan_id)).toBe(2);
  });

  it('given a plan and the example timeline, when a coverage report is issued, then it is recorded with its digest and reads back verified', async () => {
    const compliance = await m.principal('compliance');
    const producer = await m.principal('producer');
    const auditor = await m.principal('auditor');
    await plans.register(body(example('plan.json')), compliance);
    await m.get(TimelinesService).import('job-kyc-42', body(example('timeline.json')), producer);
    const issued = await m.get(CoverageService).issue(body({ job_id: 'job-kyc-42' }), auditor);
    expect(issued.as_of_position).toBe((await m.get(LedgerService).head())!.position - 1);
    const stored = await m.get(CoverageService).get(issued.report_id);
    expect(stored).toMatchObject({ report_id: issued.report_id, digest: issued.digest, digest_verified: true, issued_by: { key_id: auditor.key_id } });
    expect(stored.report?.result).toBe(issued.result);
    expect(stored.report?.subject).toEqual({ job_id: 'job-kyc-42' });
  });
});
