/**
 * One entry point for every kind of AER-1 document.
 */
import { CommitmentResult, verifyCommitment } from './commitment';
import { commitmentAsWritten } from './commitment-text';
import { TimelineResult, verifyTimeline } from './chain';
import { ReceiptResult, verifyReceipt } from './receipt';
import { DocumentKind, has, isObject } from './result';
import { verifyWorkflow, WorkflowResult } from './workflow';

export type AnyResult = ReceiptResult | TimelineResult | CommitmentResult | WorkflowResult;

/**
 * Infer the kind of a parsed document from its shape: an array is a chain;
 * `{timeline, commitment}` a commitment (so is a bare commitment, which then
 * fails for want of its timeline); `type: verifiable-workflow-receipt`,
 * `steps`, or `{workflow: ...}` a workflow; anything else a receipt
 * (including a JSON-RPC `tools/call` response). Returns null for a
 * non-object, non-array value.
 */
export function detectKind(doc: unknown): DocumentKind | null {
  if (Array.isArray(doc)) return 'chain';
  if (!isObject(doc)) return null;
  if (has(doc, 'timeline') && has(doc, 'commitment')) return 'commitment';
  if (has(doc, 'final_entry_digest') && has(doc, 'entry_count') && !has(doc, 'canonical_bytes')) return 'commitment';
  if (doc.type === 'verifiable-workflow-receipt' || has(doc, 'steps') || (has(doc, 'workflow') && !has(doc, 'type'))) return 'workflow';
  return 'receipt';
}

/** Verify `doc` as `kind` (default: inferred; an uninferable value is verified as a receipt and fails `not_object`). */
export function verifyDocument(doc: unknown, kind?: DocumentKind | 'auto'): AnyResult {
  const k = kind && kind !== 'auto' ? kind : (detectKind(doc) ?? 'receipt');
  switch (k) {
    case 'receipt':
      return verifyReceipt(doc);
    case 'chain':
      return verifyTimeline(doc);
    case 'commitment':
      return verifyCommitment(doc);
    case 'workflow':
      return verifyWorkflow(doc);
  }
}

/**
 * {@link verifyDocument} for a document read from JSON text, with the rules
 * only the text shows applied too: reading 9, a commitment's `entry_count`
 * written `7.0` or `7e0` (it parses to 7) makes a `{timeline, commitment}`
 * document `invalid_commitment`. `text` is the JSON text `doc` was parsed
 * from, the document sitting at `at` in it (member names from the top-level
 * object: `[]` for a file holding the document, `['input']` for an
 * `aer1 verify --batch` line). Every path that verifies a document it read
 * as text goes through here, so a file and a batch line get one verdict.
 */
export function verifyDocumentText(doc: unknown, text: string, at: readonly string[], kind?: DocumentKind | 'auto'): AnyResult {
  const r = verifyDocument(doc, kind);
  if (r.kind === 'commitment' && isObject(doc) && has(doc, 'timeline')) return commitmentAsWritten(r, text, [...at, 'commitment']);
  return r;
}
