/**
 * Findings about a workflow receipt beside its verdict (S8.2 step 5: "report
 * only what the stored observations support"). A finding never changes the
 * verdict: the draft gives a step's `receipt_hash` no construction and leaves
 * `status` and `verify_url` to the producer, so these are reported, not judged.
 */
import { isHex64, uuidKey } from './identifiers';
import { isObject } from './result';
import { WORKFLOW_FINDING_CODES } from './reasons';

/** One finding: its code, the step it concerns (seq, or null for the workflow), and a sentence. */
export interface WorkflowFinding {
  code: (typeof WORKFLOW_FINDING_CODES)[number];
  step: number | null;
  message: string;
}

/**
 * Compare the workflow's declarations with what its step receipts at hand
 * record, and its `verify_url` with `ledgerOrigin` (the origin of this
 * ledger's public base URL; null skips the comparison):
 * - `step_status_mismatch`: the step says `"ok"` while the step receipt's
 *   `status` is another value, or the reverse (only receipts that record a status);
 * - `step_receipt_hash_mismatch`: the step's `receipt_hash` differs from the
 *   step receipt's output hash (bare hex);
 * - `verify_url_foreign`: the declared `verify_url` is an http(s) URL on
 *   another origin than this ledger's.
 * Steps whose receipt is not at hand give no finding.
 */
export function workflowFindings(workflow: unknown, stepReceipts: Map<string, unknown> | undefined, ledgerOrigin: string | null): WorkflowFinding[] {
  const out: WorkflowFinding[] = [];
  if (!isObject(workflow)) return out;
  const steps = Array.isArray(workflow.steps) ? (workflow.steps as unknown[]) : [];
  steps.forEach((s, i) => {
    if (!isObject(s) || typeof s.receipt_id !== 'string') return;
    const r = stepReceipts?.get(uuidKey(s.receipt_id));
    if (!isObject(r)) return;
    const seq = Number.isSafeInteger(s.seq) ? (s.seq as number) : i + 1;
    if (typeof s.status === 'string' && typeof r.status === 'string' && (s.status === 'ok') !== (r.status === 'ok')) {
      out.push({ code: 'step_status_mismatch', step: seq, message: `step ${seq} declares status "${s.status}" but its step receipt records status "${r.status}"` });
    }
    const declared = typeof r.output_hash === 'string' ? r.output_hash.replace(/^sha256:/, '') : null;
    if (declared !== null && isHex64(s.receipt_hash) && declared !== s.receipt_hash) {
      out.push({ code: 'step_receipt_hash_mismatch', step: seq, message: `step ${seq} declares receipt_hash ${s.receipt_hash} but its step receipt's output hash is ${declared}` });
    }
  });
  if (ledgerOrigin !== null && typeof workflow.verify_url === 'string') {
    const origin = originOf(workflow.verify_url);
    if (origin !== null && origin !== ledgerOrigin) {
      out.push({ code: 'verify_url_foreign', step: null, message: `verify_url points at ${origin}, not at this ledger (${ledgerOrigin})` });
    }
  }
  return out;
}

/** The origin (`scheme://host[:port]`, lowercase) of an http(s) URL, or null. */
export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}
