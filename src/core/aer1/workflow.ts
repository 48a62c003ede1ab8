/**
 * Workflow receipts (S8): structure (S8, tables 2 and 3), the Merkle root
 * (S8.1), the verification procedure (S8.2) and reading 10.
 */
import { isHex64, isUuid, uuidKey } from './identifiers';
import { merkleRoot, MERKLE_CONSTRUCTION } from './merkle';
import { ReceiptResult, verifyReceipt } from './receipt';
import { describe, Findings, has, isNonEmptyString, isObject, JsonObject, VerificationResultBase } from './result';
import { isRfc3339 } from './rfc3339';

/** Per-step outcome (S8.2 step 2); provenance is per step and never upgraded (step 6). */
export interface StepOutcome {
  seq: unknown;
  receipt_id: string | null;
  /** `verified` when the step receipt verified, `failed` when it did not, `missing` when it was not at hand. */
  receipt: 'verified' | 'failed' | 'missing' | 'not_supplied';
  reasons: string[];
  provenance_class: string | null;
  /** Whether the step's receipt_hash equals the step receipt's output commitment (bare hex); the draft leaves the construction open, so this is informational. */
  receipt_hash_matches_output_hash: boolean | null;
  result?: ReceiptResult;
}

/** The result of verifying a workflow receipt. */
export interface WorkflowResult extends VerificationResultBase {
  kind: 'workflow';
  workflow_id: string | null;
  receipt_id: string | null;
  steps: StepOutcome[];
  merkle: { construction: string; declared: unknown; computed: string | null; confirmed: boolean };
  /** The workflow output hash cannot be confirmed without the bytes it was computed over (S8.1). */
  output_hash_confirmed: false;
}

const WORKFLOW_LIMITS = [
  'A passing Merkle root confirms the step sequence is intact as recorded; it confirms nothing the step receipts did not observe (S8.2 step 6).',
  'Provenance applies per step; the workflow receipt does not upgrade the provenance of its steps.',
  'The workflow output_hash covers implementation-defined bytes that are not part of the receipt; it is not confirmed here (S8.1).',
];

/**
 * Verify a workflow receipt (S8.2), given either the workflow receipt alone
 * or `{workflow, step_receipts}`. Without step receipts the best verdict is
 * `incomplete` (`step_receipts_unavailable`); a step without its receipt gives
 * `step_receipt_missing` (also incomplete); a failing step receipt makes the
 * workflow `invalid` (`step_receipt_invalid`).
 *
 * `stepReceipts` given directly overrides the wrapper's (the ledger passes
 * the receipts it holds, keyed by lowercase id).
 */
export function verifyWorkflow(input: unknown, stepReceipts?: Map<string, unknown>): WorkflowResult {
  const f = new Findings();
  let doc: unknown = input;
  let supplied: Map<string, unknown> | null = stepReceipts ?? null;
  if (isObject(input) && !has(input, 'type') && has(input, 'workflow')) {
    doc = input.workflow;
    if (!supplied && has(input, 'step_receipts')) {
      supplied = new Map();
      if (Array.isArray(input.step_receipts)) {
        for (const r of input.step_receipts) {
          if (isObject(r) && typeof r.id === 'string') supplied.set(uuidKey(r.id), r);
        }
      } else {
        f.check('step_receipts', false, 'step_receipts must be an array of receipts', 'invalid_field:step_receipts');
      }
    }
  }
  const result: WorkflowResult = {
    kind: 'workflow',
    verdict: 'invalid',
    reasons: [],
    checks: f.checks,
    limits: [...WORKFLOW_LIMITS],
    workflow_id: null,
    receipt_id: null,
    steps: [],
    merkle: { construction: MERKLE_CONSTRUCTION, declared: null, computed: null, confirmed: false },
    output_hash_confirmed: false,
  };
  if (!f.check('object', isObject(doc), isObject(doc) ? undefined : 'the workflow receipt is not a JSON object', 'not_object')) {
    result.reasons = f.reasons;
    return result;
  }
  const w = doc as JsonObject;
  const present = (name: string): boolean =>
    f.check(`${name}.present`, has(w, name), has(w, name) ? undefined : `required member ${name} is absent`, `missing_field:${name}`);

  if (present('type')) {
    const ok = w.type === 'verifiable-workflow-receipt';
    f.check('type', ok, ok ? undefined : `expected "verifiable-workflow-receipt", got ${describe(w.type)}`, 'invalid_type');
  }
  if (present('version')) {
    const ok = w.version === '1';
    f.check('version', ok, ok ? undefined : `expected "1", got ${describe(w.version)}`, 'unsupported_version');
  }
  if (present('workflow_id')) {
    if (typeof w.workflow_id === 'string') result.workflow_id = w.workflow_id;
    f.check('workflow_id', isUuid(w.workflow_id), isUuid(w.workflow_id) ? undefined : `not a UUID: ${describe(w.workflow_id)}`, 'invalid_id');
  }
  if (present('receipt_id')) {
    if (typeof w.receipt_id === 'string') result.receipt_id = w.receipt_id;
    f.check('receipt_id', isUuid(w.receipt_id), isUuid(w.receipt_id) ? undefined : `not a UUID: ${describe(w.receipt_id)}`, 'invalid_id');
    if (isUuid(w.receipt_id) && isUuid(w.workflow_id)) {
      const distinct = uuidKey(w.receipt_id) !== uuidKey(w.workflow_id);
      f.check('receipt_id.distinct', distinct, distinct ? undefined : 'receipt_id must differ from workflow_id', 'receipt_id_equals_workflow_id');
    }
  }
  for (const name of ['session_id', 'goal'] as const) {
    if (present(name)) {
      const ok = isNonEmptyString(w[name]);
      f.check(name, ok, ok ? undefined : `must be a non-empty string, got ${describe(w[name])}`, `invalid_field:${name}`);
    }
  }
  if (present('status')) {
    const ok = isNonEmptyString(w.status);
    f.check('status', ok, ok ? undefined : `must be a non-empty string, got ${describe(w.status)}`, 'invalid_status');
  }
  for (const name of ['merkle_root', 'output_hash'] as const) {
    if (present(name)) {
      const ok = isHex64(w[name]);
      f.check(`${name}.format`, ok, ok ? undefined : `must be 64 lowercase hex (no prefix), got ${describe(w[name])}`, `invalid_field:${name}`);
    }
  }
  if (present('verify_url')) {
    const ok = isHttpUrl(w.verify_url);
    f.check('verify_url', ok, ok ? undefined : `must be an http(s) URL, got ${describe(w.verify_url)}`, 'invalid_field:verify_url');
  }

  // Steps (S8 table 3; S8.2 step 3).
  const ids: string[] = [];
  let idsComplete = true;
  if (present('steps')) {
    const steps = w.steps;
    if (!Array.isArray(steps)) {
      f.check('steps', false, 'steps must be an array', 'invalid_field:steps');
      idsComplete = false;
    } else if (steps.length === 0) {
      f.check('steps', false, 'a workflow has at least one step', 'empty_steps');
      idsComplete = false;
    } else {
      const malformed: string[] = [];
      const badTimes: string[] = [];
      const gaps: string[] = [];
      const seen = new Map<string, number>();
      const dups: string[] = [];
      steps.forEach((s: unknown, i: number) => {
        const where = `step ${i + 1}`;
        if (!isObject(s)) {
          malformed.push(`${where} is not an object`);
          idsComplete = false;
          return;
        }
        const problems: string[] = [];
        if (!Number.isSafeInteger(s.seq)) problems.push(`seq ${describe(s.seq)}`);
        else if (s.seq !== i + 1) gaps.push(`${where} has seq ${s.seq as number}, expected ${i + 1}`);
        if (!isNonEmptyString(s.tool)) problems.push(`tool ${describe(s.tool)}`);
        if (!isUuid(s.receipt_id)) problems.push(`receipt_id ${describe(s.receipt_id)}`);
        if (!isHex64(s.receipt_hash)) problems.push(`receipt_hash ${describe(s.receipt_hash)}`);
        if (!isNonEmptyString(s.status)) problems.push(`status ${describe(s.status)}`);
        if (problems.length) malformed.push(`${where}: ${problems.join(', ')}`);
        for (const t of ['started_at', 'ended_at'] as const) {
          if (!isRfc3339(s[t])) badTimes.push(`${where} ${t} ${describe(s[t])}`);
        }
        if (typeof s.receipt_id === 'string') {
          ids.push(s.receipt_id);
          const key = uuidKey(s.receipt_id);
          const first = seen.get(key);
          if (first !== undefined) dups.push(`${where} repeats the receipt_id of step ${first}`);
          else seen.set(key, i + 1);
        } else idsComplete = false;
      });
      f.check('steps.members', malformed.length === 0, malformed.length ? malformed.join('; ') : `${steps.length} steps`, 'invalid_step');
      f.check('steps.timestamps', badTimes.length === 0, badTimes.length ? badTimes.join('; ') : undefined, 'invalid_step_timestamp');
      f.check('steps.seq', gaps.length === 0, gaps.length ? gaps.join('; ') : 'ordered 1..n', 'step_seq_not_contiguous');
      f.check('steps.unique_receipt_ids', dups.length === 0, dups.length ? dups.join('; ') : undefined, 'duplicate_step_receipt_id');
    }
  } else idsComplete = false;

  // Merkle root (S8.1, S8.2 step 4).
  result.merkle.declared = has(w, 'merkle_root') ? w.merkle_root : null;
  if (idsComplete && ids.length > 0) {
    const computed = merkleRoot(ids);
    result.merkle.computed = computed;
    if (isHex64(w.merkle_root)) {
      const ok = computed === w.merkle_root;
      result.merkle.confirmed = ok;
      f.check('merkle_root', ok, ok ? `recomputed ${computed}` : `declared ${w.merkle_root}, recomputed ${computed}`, 'merkle_root_mismatch');
    } else f.check('merkle_root', null, 'not compared: the declared root is malformed');
  } else f.check('merkle_root', null, 'not computed: the step receipt ids are incomplete');

  // Step receipts (S8.2 step 2): each must verify on its own.
  const steps = Array.isArray(w.steps) ? w.steps : [];
  const missing: string[] = [];
  const failing: string[] = [];
  for (const s of steps) {
    const rid = isObject(s) && typeof s.receipt_id === 'string' ? s.receipt_id : null;
    const outcome: StepOutcome = {
      seq: isObject(s) ? s.seq : null,
      receipt_id: rid,
      receipt: 'not_supplied',
      reasons: [],
      provenance_class: null,
      receipt_hash_matches_output_hash: null,
    };
    if (supplied && rid) {
      const r = supplied.get(uuidKey(rid));
      if (r === undefined) {
        outcome.receipt = 'missing';
        missing.push(rid);
      } else {
        const rr = verifyReceipt(r);
        outcome.result = rr;
        outcome.reasons = rr.reasons;
        outcome.provenance_class = rr.provenance.class;
        outcome.receipt = rr.verdict === 'valid' ? 'verified' : 'failed';
        if (rr.verdict !== 'valid') failing.push(`${rid}: ${rr.reasons.join(', ')}`);
        const declared = isObject(r) && typeof r.output_hash === 'string' ? r.output_hash.replace(/^sha256:/, '') : null;
        if (declared !== null && isObject(s) && typeof s.receipt_hash === 'string') outcome.receipt_hash_matches_output_hash = declared === s.receipt_hash;
      }
    }
    result.steps.push(outcome);
  }
  if (!supplied) {
    f.check('step_receipts', false, 'the step receipts are not at hand: the workflow cannot be reported verified (S8.2 step 2)', 'step_receipts_unavailable');
  } else {
    if (missing.length) f.check('step_receipts.present', false, `no receipt for ${missing.join(', ')}`, 'step_receipt_missing');
    else f.check('step_receipts.present', true, `${steps.length} step receipts at hand`);
    f.check('step_receipts.verify', failing.length === 0, failing.length ? failing.join('; ') : undefined, 'step_receipt_invalid');
  }
  f.check('output_hash', null, 'not confirmed: the workflow output bytes are implementation-defined and not part of the receipt (S8.1)');

  result.reasons = f.reasons;
  result.verdict = f.verdict();
  return result;
}

/**
 * The step receipts a ledger holds, as {@link verifyWorkflow} should be given
 * them: undefined when it holds none, so the answer is the one for a workflow
 * given without step receipts (`step_receipts_unavailable`), exactly as
 * `aer1 verify` answers for the same document; with some held, one it does not
 * hold is `step_receipt_missing`.
 */
export function stepReceiptsAtHand(held: Map<string, unknown>): Map<string, unknown> | undefined {
  return held.size === 0 ? undefined : held;
}

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}
