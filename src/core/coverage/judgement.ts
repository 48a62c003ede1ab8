/** Judgement: the status of each expected action from its allocation (docs/coverage.md). */
import { Allocation } from './allocation';
import { ACTION_STATUSES, ActionReport, ActionStatus } from './types';

export function judge(allocations: Allocation[]): ActionReport[] {
  const byId = new Map(allocations.map((al) => [al.action.action_id, al]));
  return allocations.map((al) => {
    const a = al.action;
    const counted = [...al.evidence, ...al.over];
    const successful = counted.filter((e) => e.outcome === 'success').length;
    const failedCount = counted.filter((e) => e.outcome === 'failure').length;
    const unknown = counted.filter((e) => e.outcome === 'unknown').length;
    const n = al.evidence.length;
    const conditions = new Set<ActionStatus>();
    const notes: string[] = [];
    if (n < a.min_count) {
      if (n + al.reported.length >= a.min_count) {
        conditions.add('reported_only');
        notes.push(`${n} of ${a.min_count} required entries have an accepted provenance class; ${al.reported.length} more are only reported (${[...new Set(al.reported.map((e) => e.receipt_provenance_class ?? e.provenance_class ?? 'unknown provenance'))].join(', ')})`);
      } else {
        conditions.add('missing');
        notes.push(`${n} of ${a.min_count} required entries with an accepted provenance class${al.reported.length ? ` (and ${al.reported.length} only reported)` : ''}`);
      }
    }
    // failed: success required, evidence exists, fewer than min_count successful (unknown outcomes are not failures).
    if (a.must_succeed && counted.length > 0 && counted.length - failedCount < a.min_count) {
      conditions.add('failed');
      notes.push(`${failedCount} of ${counted.length} accepted entries recorded a failure; success was required`);
    }
    const order: ActionReport['order'] = [];
    if (a.after.length > 0 && n > 0) {
      const first = al.evidence[0].seq;
      for (const b of a.after) {
        const pre = byId.get(b)!;
        if (pre.evidence.length < pre.action.min_count) {
          order.push({ after: b, ok: false, detail: `${b} has no complete accepted evidence (${pre.evidence.length} of ${pre.action.min_count})` });
        } else {
          const done = pre.evidence[pre.action.min_count - 1].seq;
          const ok = done < first;
          order.push({ after: b, ok, detail: ok ? `${b} complete at seq ${done}, before seq ${first}` : `${b} complete only at seq ${done}, not before seq ${first}` });
        }
      }
      if (order.some((o) => !o.ok)) {
        conditions.add('out_of_order');
        notes.push(order.filter((o) => !o.ok).map((o) => o.detail).join('; '));
      }
    }
    if (al.over.length > 0) {
      conditions.add('over_count');
      notes.push(`${n + al.over.length} accepted entries, max_count ${a.max_count}`);
    }
    if (conditions.size === 0) conditions.add('covered');
    const list = ACTION_STATUSES.filter((s) => conditions.has(s));
    const status = list[0];
    if (status === 'covered') notes.push(`${n} accepted entr${n === 1 ? 'y' : 'ies'} (min_count ${a.min_count}${a.max_count !== null ? `, max_count ${a.max_count}` : ''})`);
    if (unknown > 0) notes.push(`${unknown} without a recorded receipt: outcome unknown`);
    return {
      action_id: a.action_id,
      tool: a.tool,
      status,
      conditions: list,
      min_count: a.min_count,
      max_count: a.max_count,
      must_succeed: a.must_succeed,
      accepted_provenance: a.accepted_provenance,
      after: a.after,
      evidence: al.evidence,
      over_count_evidence: al.over,
      reported_only_evidence: al.reported,
      unaccepted_unassigned: al.unassigned,
      successful_count: successful,
      failed_count: failedCount,
      unknown_outcome_count: unknown,
      order,
      detail: notes.join('; '),
    };
  });
}
