/**
 * Expected-action plans (rev 09 article, "coverage plan"): validation and
 * normalization. Pure: no framework or I/O imports; the service and the
 * `aer1 coverage` CLI both use it.
 *
 * Every problem is reported, not only the first (spec README reading 11).
 */
import { describe, has, isObject, isUuid, JsonObject, provenanceKind } from '../aer1';
import { identifierProblem, IDENTIFIER_MAX_LENGTH } from '../text';
import { canonicalDigest } from './canonical';

/** Any `EXECUTED BY <system>` provenance class. */
export const EXECUTED_BY_ANY = 'EXECUTED BY *';

/** Accepted provenance when a plan names none: anything the recording system executed, and gateway observations. */
export const DEFAULT_ACCEPTED_PROVENANCE: readonly string[] = [EXECUTED_BY_ANY, 'OBSERVED VIA GATEWAY'];

export type UnplannedPolicy = 'flag' | 'allow';

/** What a plan is about: one job timeline, or one workflow (session). */
export type PlanSubject = { kind: 'job'; id: string } | { kind: 'workflow'; id: string };

/** One expected action, normalized (every default filled in). */
export interface ExpectedAction {
  action_id: string;
  tool: string;
  min_count: number;
  /** null: no upper bound. */
  max_count: number | null;
  /** Sorted, without duplicates. `EXECUTED BY *` matches any `EXECUTED BY <system>`. */
  accepted_provenance: string[];
  must_succeed: boolean;
  /** Sorted, without duplicates: actions whose evidence must come first. */
  after: string[];
  /**
   * The outcome the owning system must confirm for this action's evidence
   * (issue 18). Absent when the plan requires none (the member is then left
   * out, so plans without it keep their digest).
   */
  outcome?: OutcomeRequirement;
}

/** `outcome: {effect, from_system, within_seconds?}` of an expected action. */
export interface OutcomeRequirement {
  /** The effect the system must confirm, e.g. `payment.settled` (compared exactly). */
  effect: string;
  /** The system that owns the effect: only its outcomes count (compared exactly with an outcome's `system`). */
  from_system: string;
  /** When set: the confirmation must be observed at most this many seconds after the receipt's own time (`created_at`, or `timestamp`). */
  within_seconds?: number;
}

/** A normalized plan: the content its digest covers. */
export interface NormalizedPlan {
  subject: PlanSubject;
  title: string;
  unplanned: UnplannedPolicy;
  /** In plan order (the order given): allocation follows it. */
  expected_actions: ExpectedAction[];
  /**
   * The owner whose keys must have recorded the subject's timeline (or
   * workflow) and the receipts its entries name: a key's `owner`, or for a
   * key without an owner its key name (docs/coverage.md, "Who recorded it").
   * Absent when the plan names none (the member is then left out, so plans
   * without it keep their digest).
   */
  recorded_by_owner?: string;
}

/** One problem found in a plan. */
export interface PlanProblem {
  /** Where: `title`, `expected_actions[2].after[0]`, ... */
  path: string;
  code: string;
  message: string;
}

export type PlanValidation = { ok: true; plan: NormalizedPlan } | { ok: false; problems: PlanProblem[] };

/** `id`: the one identifier limit of the service (src/core/text.ts). */
export const LIMITS = { title: 500, actions: 500, id: IDENTIFIER_MAX_LENGTH, tool: 500, provenance: 200, after: 100 };

const PLAN_MEMBERS = new Set(['job_id', 'workflow_id', 'title', 'expected_actions', 'unplanned', 'recorded_by_owner']);
const ACTION_MEMBERS = new Set(['action_id', 'tool', 'min_count', 'max_count', 'accepted_provenance', 'must_succeed', 'after', 'outcome']);
const OUTCOME_REQUIREMENT_MEMBERS = new Set(['effect', 'from_system', 'within_seconds']);

/** True when `p` is a provenance class a plan may name: a valid S5 class, or `EXECUTED BY *`. */
export function isPlanProvenance(p: unknown): p is string {
  return p === EXECUTED_BY_ANY || provenanceKind(p) !== null;
}

/** Whether `provenanceClass` (as recorded) is one of `accepted`. Case-sensitive; an invalid class is never accepted. */
export function provenanceAccepted(accepted: readonly string[], provenanceClass: string | null): boolean {
  if (provenanceClass === null) return false;
  const kind = provenanceKind(provenanceClass);
  if (kind === null) return false;
  if (kind === 'executed' && accepted.includes(EXECUTED_BY_ANY)) return true;
  return accepted.includes(provenanceClass);
}

function sortedUnique(xs: string[]): string[] {
  return [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Validate a plan document and fill in defaults. A registration names exactly
 * one of `job_id` / `workflow_id`; an amendment (`inherit` given) may omit it
 * and keeps the plan's subject (naming another one is a problem).
 */
export function validatePlan(input: unknown, options: { inherit?: PlanSubject } = {}): PlanValidation {
  const problems: PlanProblem[] = [];
  const add = (path: string, code: string, message: string): void => {
    problems.push({ path, code, message });
  };
  if (!isObject(input)) return { ok: false, problems: [{ path: '', code: 'not_object', message: 'a plan is a JSON object' }] };
  const p = input as JsonObject;
  for (const k of Object.keys(p)) if (!PLAN_MEMBERS.has(k)) add(k, 'unknown_member', `unknown member ${describe(k)}`);

  // Subject.
  let subject: PlanSubject | null = null;
  const hasJob = has(p, 'job_id');
  const hasWorkflow = has(p, 'workflow_id');
  if (hasJob && hasWorkflow) add('job_id', 'two_subjects', 'give job_id or workflow_id, not both');
  else if (hasJob) {
    const idProblem = typeof p.job_id === 'string' && p.job_id.length > 0 ? identifierProblem('job_id', p.job_id) : null;
    if (typeof p.job_id !== 'string' || p.job_id.length === 0) add('job_id', 'invalid_job_id', `job_id must be a non-empty string of at most ${LIMITS.id} characters, got ${describe(p.job_id)}`);
    else if (idProblem) add('job_id', idProblem.code, idProblem.message);
    else subject = { kind: 'job', id: p.job_id };
  } else if (hasWorkflow) {
    if (!isUuid(p.workflow_id)) add('workflow_id', 'invalid_workflow_id', `workflow_id must be a UUID, got ${describe(p.workflow_id)}`);
    else subject = { kind: 'workflow', id: p.workflow_id.toLowerCase() };
  } else if (!options.inherit) add('job_id', 'missing_subject', 'a plan names the job (job_id) or the workflow (workflow_id) it covers');
  if (options.inherit) {
    if (subject && (subject.kind !== options.inherit.kind || subject.id !== options.inherit.id)) {
      add(subject.kind === 'job' ? 'job_id' : 'workflow_id', 'subject_changed', `an amendment keeps the plan's ${options.inherit.kind} ${describe(options.inherit.id)}`);
    }
    subject = options.inherit;
  }

  // Title.
  if (!has(p, 'title')) add('title', 'missing_title', 'title is required');
  else if (typeof p.title !== 'string' || p.title.trim().length === 0 || p.title.length > LIMITS.title) add('title', 'invalid_title', `title must be a non-blank string of at most ${LIMITS.title} characters`);

  // Unplanned policy.
  let unplanned: UnplannedPolicy = 'flag';
  if (has(p, 'unplanned')) {
    if (p.unplanned === 'flag' || p.unplanned === 'allow') unplanned = p.unplanned;
    else add('unplanned', 'invalid_unplanned', `unplanned must be "flag" or "allow", got ${describe(p.unplanned)}`);
  }

  // Who must have recorded the subject.
  let recordedByOwner: string | undefined;
  if (has(p, 'recorded_by_owner')) {
    const o = p.recorded_by_owner;
    const problem = typeof o === 'string' && o.length > 0 ? identifierProblem('recorded_by_owner', o) : null;
    if (typeof o !== 'string' || o.length === 0) add('recorded_by_owner', 'invalid_recorded_by_owner', `recorded_by_owner must be a non-empty string of at most ${LIMITS.id} characters (an owner name, or the name of a key without an owner), got ${describe(o)}`);
    else if (problem) add('recorded_by_owner', 'invalid_recorded_by_owner', problem.message);
    else recordedByOwner = o;
  }

  // Actions.
  const actions: ExpectedAction[] = [];
  if (!has(p, 'expected_actions')) add('expected_actions', 'missing_expected_actions', 'expected_actions is required');
  else if (!Array.isArray(p.expected_actions) || p.expected_actions.length === 0) add('expected_actions', 'invalid_expected_actions', 'expected_actions must be a non-empty array');
  else if (p.expected_actions.length > LIMITS.actions) add('expected_actions', 'too_many_actions', `at most ${LIMITS.actions} expected actions`);
  else {
    const seen = new Map<string, number>();
    const rawAfter: { index: number; after: unknown[] }[] = [];
    p.expected_actions.forEach((a: unknown, i: number) => {
      const at = `expected_actions[${i}]`;
      if (!isObject(a)) {
        add(at, 'invalid_action', 'an expected action is a JSON object');
        return;
      }
      for (const k of Object.keys(a)) if (!ACTION_MEMBERS.has(k)) add(`${at}.${k}`, 'unknown_member', `unknown member ${describe(k)}`);
      let ok = true;
      const actionIdProblem = typeof a.action_id === 'string' && a.action_id.length > 0 ? identifierProblem(`${at}.action_id`, a.action_id) : null;
      if (typeof a.action_id !== 'string' || a.action_id.length === 0) {
        add(`${at}.action_id`, 'invalid_action_id', `action_id must be a non-empty string of at most ${LIMITS.id} characters, got ${describe(a.action_id)}`);
        ok = false;
      } else if (actionIdProblem) {
        add(`${at}.action_id`, actionIdProblem.code, actionIdProblem.message);
        ok = false;
      } else if (seen.has(a.action_id)) {
        add(`${at}.action_id`, 'duplicate_action_id', `action_id ${describe(a.action_id)} is already used by expected_actions[${seen.get(a.action_id)}]`);
        ok = false;
      } else seen.set(a.action_id, i);
      if (typeof a.tool !== 'string' || a.tool.length === 0 || a.tool.length > LIMITS.tool) {
        add(`${at}.tool`, 'invalid_tool', `tool must be a non-empty string, got ${describe(a.tool)}`);
        ok = false;
      }
      let min = 1;
      if (has(a, 'min_count')) {
        if (!Number.isSafeInteger(a.min_count) || (a.min_count as number) < 1) {
          add(`${at}.min_count`, 'invalid_min_count', `min_count must be an integer >= 1, got ${describe(a.min_count)}`);
          ok = false;
        } else min = a.min_count as number;
      }
      let max: number | null = null;
      if (has(a, 'max_count') && a.max_count !== null) {
        if (!Number.isSafeInteger(a.max_count) || (a.max_count as number) < 1) {
          add(`${at}.max_count`, 'invalid_max_count', `max_count must be an integer >= 1 (or null), got ${describe(a.max_count)}`);
          ok = false;
        } else {
          max = a.max_count as number;
          if (max < min) {
            add(`${at}.max_count`, 'max_below_min', `max_count ${max} is below min_count ${min}`);
            ok = false;
          }
        }
      }
      let accepted = [...DEFAULT_ACCEPTED_PROVENANCE];
      if (has(a, 'accepted_provenance')) {
        const ap = a.accepted_provenance;
        if (!Array.isArray(ap) || ap.length === 0) {
          add(`${at}.accepted_provenance`, 'invalid_accepted_provenance', 'accepted_provenance must be a non-empty array of provenance classes');
          ok = false;
        } else {
          ap.forEach((c: unknown, k: number) => {
            if (!isPlanProvenance(c) || (c as string).length > LIMITS.provenance) {
              add(`${at}.accepted_provenance[${k}]`, 'invalid_provenance', `not a provenance class (S5: "EXECUTED BY <system>", "OBSERVED VIA GATEWAY", "LOGGED BY AGENT", or "EXECUTED BY *"): ${describe(c)}`);
              ok = false;
            }
          });
          accepted = ap as string[];
        }
      }
      let mustSucceed = true;
      if (has(a, 'must_succeed')) {
        if (typeof a.must_succeed !== 'boolean') {
          add(`${at}.must_succeed`, 'invalid_must_succeed', `must_succeed must be a boolean, got ${describe(a.must_succeed)}`);
          ok = false;
        } else mustSucceed = a.must_succeed;
      }
      let after: unknown[] = [];
      if (has(a, 'after')) {
        if (!Array.isArray(a.after) || a.after.length > LIMITS.after) {
          add(`${at}.after`, 'invalid_after', `after must be an array of action ids (at most ${LIMITS.after})`);
          ok = false;
        } else after = a.after;
      }
      rawAfter.push({ index: i, after });
      let outcome: OutcomeRequirement | undefined;
      if (has(a, 'outcome')) {
        const r = outcomeRequirement(a.outcome, `${at}.outcome`, add);
        if (r === null) ok = false;
        else outcome = r;
      }
      if (ok) {
        actions.push({
          action_id: a.action_id as string,
          tool: a.tool as string,
          min_count: min,
          max_count: max,
          accepted_provenance: sortedUnique(accepted),
          must_succeed: mustSucceed,
          after: [],
          ...(outcome !== undefined ? { outcome } : {}),
        });
      } else {
        actions.push(null as unknown as ExpectedAction); // placeholder: keeps indexes; never returned
      }
    });

    // `after`: names existing actions, not itself; then no cycles.
    const graph = new Map<string, string[]>();
    for (const { index, after } of rawAfter) {
      const a = p.expected_actions[index] as JsonObject;
      const self = typeof a?.action_id === 'string' ? a.action_id : null;
      const names: string[] = [];
      after.forEach((n, k) => {
        const where = `expected_actions[${index}].after[${k}]`;
        if (typeof n !== 'string' || !seen.has(n)) add(where, 'unknown_after', `after names no expected action: ${describe(n)}`);
        else if (n === self) add(where, 'after_self', `action ${describe(n)} cannot come after itself`);
        else names.push(n);
      });
      if (actions[index]) actions[index].after = sortedUnique(names);
      if (self !== null && seen.get(self) === index) graph.set(self, sortedUnique(names));
    }
    for (const cycle of findCycles(graph, [...seen.keys()])) {
      add('expected_actions', 'after_cycle', `the after constraints form a cycle: ${cycle.map((c) => describe(c)).join(' -> ')}`);
    }
  }

  if (problems.length > 0 || subject === null) {
    if (subject === null && problems.length === 0) add('job_id', 'missing_subject', 'a plan names its job or workflow');
    return { ok: false, problems };
  }
  return { ok: true, plan: { subject, title: p.title as string, unplanned, expected_actions: actions, ...(recordedByOwner !== undefined ? { recorded_by_owner: recordedByOwner } : {}) } };
}

/** Validate `outcome: {effect, from_system, within_seconds?}`; null (with problems added) when it is not one. */
function outcomeRequirement(v: unknown, at: string, add: (path: string, code: string, message: string) => void): OutcomeRequirement | null {
  if (!isObject(v)) {
    add(at, 'invalid_outcome', 'outcome must be an object {effect, from_system, within_seconds?}');
    return null;
  }
  let ok = true;
  for (const k of Object.keys(v)) {
    if (!OUTCOME_REQUIREMENT_MEMBERS.has(k)) {
      add(`${at}.${k}`, 'unknown_member', `unknown member ${describe(k)}`);
      ok = false;
    }
  }
  for (const name of ['effect', 'from_system'] as const) {
    const s = v[name];
    const problem = typeof s === 'string' && s.length > 0 ? identifierProblem(`${at}.${name}`, s) : null;
    if (typeof s !== 'string' || s.length === 0) {
      add(`${at}.${name}`, `invalid_outcome_${name}`, `${name} must be a non-empty string of at most ${LIMITS.id} characters, got ${describe(s)}`);
      ok = false;
    } else if (problem) {
      add(`${at}.${name}`, problem.code, problem.message);
      ok = false;
    }
  }
  let within: number | undefined;
  if (has(v, 'within_seconds') && v.within_seconds !== null) {
    if (!Number.isSafeInteger(v.within_seconds) || (v.within_seconds as number) < 1) {
      add(`${at}.within_seconds`, 'invalid_within_seconds', `within_seconds must be an integer >= 1 (or absent), got ${describe(v.within_seconds)}`);
      ok = false;
    } else within = v.within_seconds as number;
  }
  if (!ok) return null;
  return { effect: v.effect as string, from_system: v.from_system as string, ...(within !== undefined ? { within_seconds: within } : {}) };
}

/**
 * Every elementary cycle reachable in a DFS over `order` (each reported
 * once, starting from its first node in `order`), for the error list.
 */
function findCycles(graph: Map<string, string[]>, order: string[]): string[][] {
  const state = new Map<string, 1 | 2>(); // 1 on stack, 2 done
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (n: string): void => {
    state.set(n, 1);
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      const s = state.get(m);
      if (s === 1) cycles.push([...stack.slice(stack.indexOf(m)), m]);
      else if (s === undefined) visit(m);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of order) if (!state.has(n)) visit(n);
  return cycles;
}

/** The plan digest: SHA-256 over the canonical JSON of the normalized plan. */
export function planDigest(plan: NormalizedPlan): string {
  return canonicalDigest(plan);
}

/** The subject as an object member pair: `{job_id}` or `{workflow_id}`. */
export function subjectMember(s: PlanSubject): { job_id: string } | { workflow_id: string } {
  return s.kind === 'job' ? { job_id: s.id } : { workflow_id: s.id };
}
