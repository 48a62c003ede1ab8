/** Allocation: which recorded evidence counts for which expected action (docs/coverage.md#matching-rules; the rules are restated on {@link allocate}). */
import { ExpectedAction, NormalizedPlan, provenanceAccepted } from './plan';
import { noEvidence } from './evidence';
import { EvidenceItem } from './types';

export interface Allocation {
  action: ExpectedAction;
  evidence: EvidenceItem[];
  over: EvidenceItem[];
  reported: EvidenceItem[];
  unassigned: EvidenceItem[];
}

/** Whether `e` is accepted evidence for `a`: an accepted provenance class, and a recorded receipt (if any) that agrees with the entry (never upgraded). */
function accepts(a: ExpectedAction, e: EvidenceItem): boolean {
  return e.receipt_provenance_class === undefined && !noEvidence(e) && provenanceAccepted(a.accepted_provenance, e.provenance_class);
}

/**
 * The matching rules (docs/coverage.md). Per tool, entries in seq order:
 * 1. in plan order, each action takes up to min_count of the earliest
 *    unassigned entries it accepts;
 * 2. in plan order, each action takes further unassigned accepted entries
 *    up to max_count (no max_count: all of them);
 * 3. an accepted entry still unassigned (every action of the tool that
 *    accepts it is at its max_count) is over_count evidence of the last
 *    action of the tool, in plan order, that accepts it;
 * 4. in plan order, each action still short of min_count takes as many
 *    unassigned entries of its tool (provenance it does not accept; never
 *    an entry whose receipt disagrees on tool or bytes) as it is short:
 *    reported_only evidence;
 * 5. entries of a planned tool still unassigned are listed on the last
 *    action of the tool and count nowhere; entries of other tools are
 *    unplanned.
 */
export function allocate(plan: NormalizedPlan, recorded: EvidenceItem[]): { allocations: Allocation[]; unplanned: EvidenceItem[] } {
  const allocations: Allocation[] = plan.expected_actions.map((action) => ({ action, evidence: [], over: [], reported: [], unassigned: [] }));
  const byTool = new Map<string, EvidenceItem[]>();
  const unplanned: EvidenceItem[] = [];
  const planned = new Set(plan.expected_actions.map((a) => a.tool));
  for (const e of [...recorded].sort((x, y) => x.seq - y.seq)) {
    if (e.tool === null || !planned.has(e.tool)) unplanned.push(e);
    else {
      let list = byTool.get(e.tool);
      if (!list) byTool.set(e.tool, (list = []));
      list.push(e);
    }
  }
  const assigned = new Set<EvidenceItem>();
  const take = (list: EvidenceItem[], e: EvidenceItem): void => {
    list.push(e);
    assigned.add(e);
  };
  // Pass 1: min_count, earliest first.
  for (const al of allocations) {
    for (const e of byTool.get(al.action.tool) ?? []) {
      if (al.evidence.length >= al.action.min_count) break;
      if (!assigned.has(e) && accepts(al.action, e)) take(al.evidence, e);
    }
  }
  // Pass 2: up to max_count.
  for (const al of allocations) {
    const cap = al.action.max_count ?? Number.POSITIVE_INFINITY;
    for (const e of byTool.get(al.action.tool) ?? []) {
      if (al.evidence.length >= cap) break;
      if (!assigned.has(e) && accepts(al.action, e)) take(al.evidence, e);
    }
  }
  // Pass 3: over_count.
  // The allocations of each tool, in plan order (indexed once: a plan can name thousands of tools).
  const allocationsByTool = new Map<string, typeof allocations>();
  for (const al of allocations) {
    let list = allocationsByTool.get(al.action.tool);
    if (!list) allocationsByTool.set(al.action.tool, (list = []));
    list.push(al);
  }
  for (const [tool, entries] of byTool) {
    const ofTool = allocationsByTool.get(tool) ?? [];
    for (const e of entries) {
      if (assigned.has(e)) continue;
      const last = [...ofTool].reverse().find((al) => accepts(al.action, e));
      if (last) take(last.over, e);
    }
  }
  // Pass 4: reported_only.
  for (const al of allocations) {
    let short = al.action.min_count - al.evidence.length;
    for (const e of byTool.get(al.action.tool) ?? []) {
      if (short <= 0) break;
      if (!assigned.has(e) && !noEvidence(e)) {
        take(al.reported, e);
        short--;
      }
    }
  }
  // Pass 5: the rest of a planned tool.
  for (const [tool, entries] of byTool) {
    const ofTool = allocationsByTool.get(tool)!;
    const last = ofTool[ofTool.length - 1];
    for (const e of entries) if (!assigned.has(e)) take(last.unassigned, e);
  }
  return { allocations, unplanned };
}
