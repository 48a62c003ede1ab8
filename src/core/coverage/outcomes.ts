/**
 * Outcome evidence in a coverage report (issue 18; rev 09: "collect outcome
 * evidence from the system that actually owns the effect").
 *
 * Pure. Matching is by receipt id: an outcome answers the recorded call whose
 * receipt id it names, for the job (or workflow) it names only (issue 26).
 * Several outcomes may answer one call; among those of the required system
 * and effect the latest in ledger order (the order of
 * `outcomes`) decides, and the earlier ones are shown as superseded by it.
 * Documented in docs/coverage.md ("Outcome evidence").
 */
import { receiptOfDocument, isObject } from '../aer1';
import type { OutcomeResult } from '../outcomes/outcome';
import type { OutcomeRequirement, PlanSubject } from './plan';
import type { ActionReport, EvidenceItem, Finding } from './types';

/** An outcome status of an expected action that requires one, most severe first. */
export const OUTCOME_STATUSES = ['contradicted', 'unconfirmed', 'wrong_system', 'confirmed'] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

/** One recorded outcome report, as the reconciliation reads it (the fields of a report that verified). */
export interface OutcomeRecord {
  outcome_id: string;
  job_id: string;
  receipt_id: string;
  effect: string;
  result: OutcomeResult;
  observed_at: string;
  system: string;
  output_hash: string;
}

/** One outcome as a report shows it beside the call it answers. */
export interface OutcomeItem {
  outcome_id: string;
  system: string;
  effect: string;
  result: OutcomeResult;
  observed_at: string;
  output_hash: string;
  /** True only for the one outcome that decided the call's status. */
  counted: boolean;
  /** The later outcome of the same system and effect that supersedes this one (the latest in ledger order wins), or null. */
  superseded_by: string | null;
  /** Why it is not counted (`superseded`, `other_system`, `other_effect`), or why it is (`latest`). */
  note: 'latest' | 'superseded' | 'other_system' | 'other_effect' | 'information';
}

/** The outcome status of one piece of accepted evidence of an action. */
export interface EvidenceOutcome {
  seq: number;
  receipt_id: string | null;
  /** What the agent's receipt says (`success` for a core receipt or transport status "ok"). */
  receipt_outcome: EvidenceItem['outcome'];
  status: OutcomeStatus;
  /** The outcome that decided the status (the latest of the required system and effect), or null. */
  deciding_outcome: string | null;
  /** Milliseconds from the receipt's own time to the deciding outcome's `observed_at`; null when either is unknown. */
  elapsed_ms: number | null;
  /** True when the deciding confirmation came after `within_seconds`. */
  late: boolean;
  /** Every outcome naming this call's receipt id, in ledger order. */
  outcomes: OutcomeItem[];
  detail: string;
}

/** The outcome section of an expected action that requires an outcome. */
export interface ActionOutcome {
  required: { effect: string; from_system: string; within_seconds: number | null };
  status: OutcomeStatus;
  evidence: EvidenceOutcome[];
  detail: string;
}

/** Outcomes answering recorded calls of actions that require none (or unplanned calls): information, never counted. */
export interface OutcomeInformation {
  seq: number;
  receipt_id: string;
  /** The expected action whose evidence the call is, or null (unplanned, or not accepted evidence). */
  action_id: string | null;
  outcomes: OutcomeItem[];
}

/** The report's `outcomes` member (present when the plan requires an outcome or any recorded call has one). */
export interface OutcomesSection {
  matched_by: 'receipt_id';
  counts: { required: number; confirmed: number; contradicted: number; unconfirmed: number; wrong_system: number; outcomes_matched: number };
  information: OutcomeInformation[];
  statement: string;
}

export const OUTCOMES_STATEMENT =
  'An outcome is the observation of the system that owns the effect, accepted only from a key that speaks for that system; it does not change the provenance class of the call it answers (S5). Matching is by receipt id; among outcomes of the required system and effect the latest in ledger order decides.';

/** What outcome evidence does not prove (added to a report's `does_not_prove` when it has an `outcomes` member). */
export const OUTCOME_LIMIT =
  'An outcome is the owning system\'s statement of what it observed, bound to its bytes by its output commitment: the ledger checks that the reporting key speaks for that system, not that the observation is true (S13).';

/**
 * Whether an outcome naming `jobId` is about `subject` (issue 26): for a job,
 * its id exactly; for a workflow, its `workflow_id` (a UUID, compared
 * lowercase). An outcome counts only for the subject it names, even when
 * another subject's records name the same receipt.
 */
export function outcomeNamesSubject(jobId: string, subject: PlanSubject): boolean {
  return subject.kind === 'job' ? jobId === subject.id : jobId.toLowerCase() === subject.id.toLowerCase();
}

/** The receipt's own time (`created_at`, or transport `timestamp`) in ms since the epoch, or null. */
export function receiptTime(doc: unknown): number | null {
  const r = receiptOfDocument(doc);
  if (!isObject(r)) return null;
  const t = typeof r.created_at === 'string' ? r.created_at : typeof r.timestamp === 'string' ? r.timestamp : null;
  if (t === null) return null;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms : null;
}

/** Outcomes grouped by lowercase receipt id, each list in ledger order. */
export function outcomesByReceipt(outcomes: readonly OutcomeRecord[]): Map<string, OutcomeRecord[]> {
  const by = new Map<string, OutcomeRecord[]>();
  for (const o of outcomes) {
    const k = o.receipt_id.toLowerCase();
    const list = by.get(k) ?? [];
    list.push(o);
    by.set(k, list);
  }
  return by;
}

function item(o: OutcomeRecord, counted: boolean, supersededBy: string | null, note: OutcomeItem['note']): OutcomeItem {
  return { outcome_id: o.outcome_id.toLowerCase(), system: o.system, effect: o.effect, result: o.result, observed_at: o.observed_at, output_hash: o.output_hash, counted, superseded_by: supersededBy, note };
}

/**
 * The outcome status of one accepted evidence item `e` of an action that
 * requires `req`; `all` are the outcomes naming its receipt id, in ledger
 * order; `receiptMs` the receipt's own time.
 */
export function judgeEvidenceOutcome(e: EvidenceItem, req: OutcomeRequirement, all: readonly OutcomeRecord[], receiptMs: number | null): EvidenceOutcome {
  const named = all.filter((o) => o.system === req.from_system && o.effect === req.effect);
  const latest = named.length > 0 ? named[named.length - 1] : null;
  const items = all.map((o) => {
    if (o.system !== req.from_system) return item(o, false, null, 'other_system');
    if (o.effect !== req.effect) return item(o, false, null, 'other_effect');
    return o === latest ? item(o, true, null, 'latest') : item(o, false, latest!.outcome_id.toLowerCase(), 'superseded');
  });
  const base = { seq: e.seq, receipt_id: e.receipt_id, receipt_outcome: e.outcome, outcomes: items };
  if (latest === null) {
    const others = all.filter((o) => o.system !== req.from_system);
    if (others.length > 0) {
      const systems = [...new Set(others.map((o) => JSON.stringify(o.system)))].join(', ');
      return { ...base, status: 'wrong_system', deciding_outcome: null, elapsed_ms: null, late: false, detail: `seq ${e.seq}: outcomes only from ${systems}, not from ${JSON.stringify(req.from_system)}: shown, never counted` };
    }
    const otherEffects = all.length > 0 ? ` (${all.length} outcome(s) of ${JSON.stringify(req.from_system)} for other effects)` : '';
    return { ...base, status: 'unconfirmed', deciding_outcome: null, elapsed_ms: null, late: false, detail: `seq ${e.seq}: no outcome ${JSON.stringify(req.effect)} from ${JSON.stringify(req.from_system)}${otherEffects}` };
  }
  const observed = Date.parse(latest.observed_at);
  const elapsed = receiptMs !== null && Number.isFinite(observed) ? observed - receiptMs : null;
  const deciding = latest.outcome_id.toLowerCase();
  const at = `seq ${e.seq}: ${JSON.stringify(req.from_system)} reports ${latest.result} for ${JSON.stringify(req.effect)} (outcome ${deciding}, observed ${latest.observed_at})`;
  if (latest.result === 'confirmed') {
    if (req.within_seconds !== undefined) {
      if (elapsed === null) return { ...base, status: 'unconfirmed', deciding_outcome: deciding, elapsed_ms: null, late: false, detail: `${at}, but the window of ${req.within_seconds} s cannot be judged: the receipt's own time is not known` };
      if (elapsed > req.within_seconds * 1000) {
        return { ...base, status: 'unconfirmed', deciding_outcome: deciding, elapsed_ms: elapsed, late: true, detail: `${at}, ${elapsed / 1000} s after the receipt's time: late (within_seconds ${req.within_seconds}), not a confirmation within the window` };
      }
    }
    return { ...base, status: 'confirmed', deciding_outcome: deciding, elapsed_ms: elapsed, late: false, detail: `${at}${req.within_seconds !== undefined ? `, within ${req.within_seconds} s` : ''}` };
  }
  const earlierConfirmation = named.slice(0, -1).find((o) => o.result === 'confirmed');
  if (earlierConfirmation) {
    return { ...base, status: 'contradicted', deciding_outcome: deciding, elapsed_ms: elapsed, late: false, detail: `${at}: it supersedes the confirmation ${earlierConfirmation.outcome_id.toLowerCase()} (observed ${earlierConfirmation.observed_at})` };
  }
  if (e.outcome !== 'failure') {
    return { ...base, status: 'contradicted', deciding_outcome: deciding, elapsed_ms: elapsed, late: false, detail: `${at}, while the agent's receipt ${e.receipt_id ?? ''} ${e.outcome === 'success' ? 'says the call succeeded' : 'is not recorded'}` };
  }
  return { ...base, status: 'unconfirmed', deciding_outcome: deciding, elapsed_ms: elapsed, late: false, detail: `${at}; the agent's receipt also records a failure: the effect is not confirmed` };
}

/** The worst status of the list (contradicted > unconfirmed > wrong_system > confirmed). */
function worst(statuses: OutcomeStatus[]): OutcomeStatus {
  return OUTCOME_STATUSES.find((s) => statuses.includes(s)) ?? 'confirmed';
}

/**
 * Add the outcome status to every action that requires one, and list the
 * other outcomes as information. Returns the findings (`outcome_contradicted`,
 * `outcome_unconfirmed`, `outcome_wrong_system`) and the section; the
 * section is null when the plan requires no outcome and no recorded call has
 * one (the report then has no `outcomes` member, as before).
 */
export function reconcileOutcomes(
  actions: ActionReport[],
  requirements: ReadonlyMap<string, OutcomeRequirement>,
  items: readonly EvidenceItem[],
  outcomes: readonly OutcomeRecord[],
  receipts: ReadonlyMap<string, unknown>,
): { findings: Finding[]; section: OutcomesSection | null } {
  const byReceipt = outcomesByReceipt(outcomes);
  const findings: Finding[] = [];
  const counts = { required: 0, confirmed: 0, contradicted: 0, unconfirmed: 0, wrong_system: 0, outcomes_matched: 0 };
  const judged = new Set<number>();
  for (const a of actions) {
    const req = requirements.get(a.action_id);
    if (!req) continue;
    counts.required++;
    const evidence = a.evidence.map((e) => {
      judged.add(e.seq);
      const id = e.receipt_id?.toLowerCase();
      const all = id ? (byReceipt.get(id) ?? []) : [];
      const doc = id ? receipts.get(id) : undefined;
      return judgeEvidenceOutcome(e, req, all, doc === undefined ? null : receiptTime(doc));
    });
    const status: OutcomeStatus = evidence.length === 0 ? 'unconfirmed' : worst(evidence.map((x) => x.status));
    const detail =
      evidence.length === 0
        ? `no accepted evidence of ${a.action_id}: nothing for ${JSON.stringify(req.from_system)} to confirm`
        : evidence.filter((x) => x.status === status).map((x) => x.detail).join('; ');
    a.outcome = { required: { effect: req.effect, from_system: req.from_system, within_seconds: req.within_seconds ?? null }, status, evidence, detail };
    counts[status]++;
    if (status !== 'confirmed') findings.push({ code: `outcome_${status}`, action_id: a.action_id, message: `${a.action_id} (${a.tool}): outcome ${status}: ${detail}` });
  }
  const actionOf = new Map<number, string>();
  for (const a of actions) for (const e of a.evidence) actionOf.set(e.seq, a.action_id);
  const information: OutcomeInformation[] = [];
  for (const e of items) {
    const id = e.receipt_id?.toLowerCase();
    const all = id ? byReceipt.get(id) : undefined;
    if (!all || all.length === 0) continue;
    counts.outcomes_matched += all.length;
    if (judged.has(e.seq)) continue;
    information.push({ seq: e.seq, receipt_id: id!, action_id: actionOf.get(e.seq) ?? null, outcomes: all.map((o) => item(o, false, null, 'information')) });
  }
  if (counts.required === 0 && counts.outcomes_matched === 0) return { findings, section: null };
  return { findings, section: { matched_by: 'receipt_id', counts, information, statement: OUTCOMES_STATEMENT } };
}
