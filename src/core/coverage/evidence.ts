/** Receipts and recorded actions: what a timeline or workflow records, as evidence items for the plan (docs/coverage.md). */
import { decodeStrictBase64, isObject, JsonObject, receiptForm, receiptOfDocument, sha256Hex } from '../aer1';
import { CLOSE_MARKER_TOOL, ClosingMarker, ErasedEvidence, EvidenceItem, Outcome, ReceiptField, RecordedAction } from './types';

/** The outcome a receipt records: core form = success; transport `status` "ok" = success, anything else failure. */
export function receiptOutcome(doc: unknown): { outcome: Outcome; status: string | null; provenance_class: string | null } {
  const r = receiptOfDocument(doc);
  if (!isObject(r)) return { outcome: 'unknown', status: null, provenance_class: null };
  const provenance = typeof r.provenance_class === 'string' ? r.provenance_class : null;
  if (receiptForm(r) === 'core') return { outcome: 'success', status: null, provenance_class: provenance };
  const status = typeof r.status === 'string' ? r.status : null;
  return { outcome: status === 'ok' ? 'success' : 'failure', status, provenance_class: provenance };
}

/** Recorded actions of a timeline: seq (the entry's integer seq, else its 1-based position), tool, receipt id, provenance. */
export function actionsFromTimeline(entries: readonly unknown[]): RecordedAction[] {
  return entries.map((e, i) => {
    const o: JsonObject = isObject(e) ? e : {};
    const bytes = decodeStrictBase64(o.canonical_bytes);
    return {
      seq: Number.isSafeInteger(o.seq) ? (o.seq as number) : i + 1,
      tool: typeof o.tool === 'string' ? o.tool : null,
      receipt_id: typeof o.id === 'string' ? o.id : null,
      provenance_class: typeof o.provenance_class === 'string' ? o.provenance_class : null,
      bytes_hash: bytes === null ? null : sha256Hex(bytes),
    };
  });
}

/**
 * The ledger's closing marker of a timeline, or null: its last entry when
 * that entry's tool is {@link CLOSE_MARKER_TOOL} and it carries `close:
 * true`. Such an entry is the close, not an action; an entry with that tool
 * anywhere else, or without `close: true`, is an action like any other.
 */
export function closingMarker(entries: readonly unknown[]): ClosingMarker | null {
  const e = entries[entries.length - 1];
  if (!isObject(e) || e.tool !== CLOSE_MARKER_TOOL || e.close !== true) return null;
  return { seq: Number.isSafeInteger(e.seq) ? (e.seq as number) : entries.length, tool: CLOSE_MARKER_TOOL, receipt_id: typeof e.id === 'string' ? e.id : null };
}

/** Recorded actions of a workflow: its steps, with provenance from the step receipts (null when not recorded). */
export function actionsFromWorkflow(workflow: unknown, receipts: ReadonlyMap<string, unknown>): RecordedAction[] {
  const steps = isObject(workflow) && Array.isArray(workflow.steps) ? workflow.steps : [];
  return steps.map((s: unknown, i: number) => {
    const o: JsonObject = isObject(s) ? s : {};
    const id = typeof o.receipt_id === 'string' ? o.receipt_id : null;
    const receipt = id ? receipts.get(id.toLowerCase()) : undefined;
    return {
      seq: Number.isSafeInteger(o.seq) ? (o.seq as number) : i + 1,
      tool: typeof o.tool === 'string' ? o.tool : null,
      receipt_id: id,
      provenance_class: receipt === undefined ? null : receiptOutcome(receipt).provenance_class,
    };
  });
}

/** The tool a receipt names: core form `tool.name`, transport form `tool`. */
function receiptTool(r: JsonObject): unknown {
  return isObject(r.tool) ? r.tool.name : r.tool;
}

/**
 * Where the recorded receipt with an action's id disagrees with the action:
 * its tool, and for timeline entries its canonical bytes and its
 * `output_hash` (both against the entry's decoded bytes). Provenance is
 * compared separately (it is never upgraded, S5).
 */
export function receiptDisagreement(a: RecordedAction, doc: unknown): ReceiptField[] {
  const r = receiptOfDocument(doc);
  if (!isObject(r)) return [];
  const out: ReceiptField[] = [];
  if (a.tool !== null && receiptTool(r) !== a.tool) out.push('tool');
  if (a.bytes_hash !== undefined) {
    const bytes = decodeStrictBase64(r.canonical_bytes);
    if (a.bytes_hash === null || bytes === null || sha256Hex(bytes) !== a.bytes_hash) out.push('canonical_bytes');
    if (a.bytes_hash === null || r.output_hash !== `sha256:${a.bytes_hash}`) out.push('output_hash');
  }
  return out;
}

/** What an evidence item is judged with besides the receipts: corrections and the receipt owner check. */
export interface EvidenceContext {
  corrections?: ReadonlyMap<string, readonly string[]>;
  /** Recorder identities of receipts recorded by another owner (lowercase id -> owners). */
  otherOwner: ReadonlyMap<string, string[]>;
  /** Evidence whose content was erased (issue 29). */
  erased?: ErasedEvidence;
}

/**
 * An action whose entry or receipt was erased (issue 29): judged on what the
 * ledger retained and found at ingestion (the receipt's tool, provenance,
 * status and verdict), its bytes no longer compared; `evidence_erased` says so.
 */
function erasedEvidenceItem(a: RecordedAction, receipts: ReadonlyMap<string, unknown>, ctx: EvidenceContext, entryErased: boolean): EvidenceItem {
  const id = a.receipt_id?.toLowerCase();
  const kept = id ? ctx.erased?.receipts.get(id) : undefined;
  const base = { seq: a.seq, receipt_id: a.receipt_id, tool: a.tool, provenance_class: a.provenance_class };
  const mark = (recorded_verdict: string | null) => ({ entry: entryErased, receipt: kept !== undefined, recorded_verdict });
  if (kept === undefined) {
    // Only the entry was erased: its receipt is held and judged as always, but for the bytes the entry no longer has.
    const held = evidenceItem({ ...a, bytes_hash: undefined }, receipts, { ...ctx, erased: undefined });
    return { ...held, evidence_erased: mark(ctx.erased?.timeline_recorded_verdict ?? 'valid') };
  }
  const success = kept.form === 'core' || kept.status === 'ok';
  const item: EvidenceItem = { ...base, outcome: success ? 'success' : 'failure', receipt_status: kept.form === 'core' ? null : kept.status, receipt_recorded: true, evidence_erased: mark(kept.recorded_verdict) };
  const mismatch: ReceiptField[] = [];
  if (a.tool !== null && kept.tool !== null && kept.tool !== a.tool) mismatch.push('tool');
  if (kept.provenance_class !== null && kept.provenance_class !== a.provenance_class) {
    item.receipt_provenance_class = kept.provenance_class;
    mismatch.push('provenance_class');
  }
  const others = id ? ctx.otherOwner.get(id) : undefined;
  if (others) {
    item.receipt_recorded_by = others;
    mismatch.push('recorded_by');
  }
  if (mismatch.length > 0) item.receipt_mismatch = mismatch;
  return item;
}

export function evidenceItem(a: RecordedAction, receipts: ReadonlyMap<string, unknown>, ctx: EvidenceContext = { otherOwner: new Map() }): EvidenceItem {
  const id = a.receipt_id?.toLowerCase();
  const doc = id ? receipts.get(id) : undefined;
  const entryErased = ctx.erased?.entries.has(a.seq) ?? false;
  if (ctx.erased && (entryErased || (id !== undefined && ctx.erased.receipts.has(id)))) return erasedEvidenceItem(a, receipts, ctx, entryErased);
  if (doc === undefined) {
    return { seq: a.seq, receipt_id: a.receipt_id, tool: a.tool, provenance_class: a.provenance_class, outcome: 'unknown', receipt_status: null, receipt_recorded: false };
  }
  const original = receiptOutcome(doc);
  // A corrected receipt (S9): the latest correction replaces its content; the entry still names the original.
  const chain = id ? ctx.corrections?.get(id) : undefined;
  const latestDoc = chain && chain.length > 0 ? receipts.get(chain[chain.length - 1]) : undefined;
  const o = latestDoc === undefined ? original : receiptOutcome(latestDoc);
  const item: EvidenceItem = { seq: a.seq, receipt_id: a.receipt_id, tool: a.tool, provenance_class: a.provenance_class, outcome: o.outcome, receipt_status: o.status, receipt_recorded: true };
  // Bytes and output hash are compared with the receipt the entry names; the tool with it and its latest correction.
  const mismatch = receiptDisagreement(a, doc);
  if (latestDoc !== undefined && !mismatch.includes('tool') && receiptDisagreement({ ...a, bytes_hash: undefined }, latestDoc).includes('tool')) mismatch.unshift('tool');
  if (o.provenance_class !== null && o.provenance_class !== a.provenance_class) {
    item.receipt_provenance_class = o.provenance_class;
    mismatch.push('provenance_class');
  }
  const others = id ? ctx.otherOwner.get(id) : undefined;
  if (others) {
    item.receipt_recorded_by = others;
    mismatch.push('recorded_by');
  }
  if (mismatch.length > 0) item.receipt_mismatch = mismatch;
  if (chain && chain.length > 0) {
    item.superseded_by = chain[chain.length - 1];
    item.correction_chain = [...chain];
    item.original_outcome = original.outcome;
    item.original_status = original.status;
    if (latestDoc === undefined) {
      // The correction's document is not at hand: the outcome is unknown, never the original's.
      item.outcome = 'unknown';
      item.receipt_status = null;
    }
  }
  return item;
}

/** An entry whose receipt disagrees on more than provenance: it is no evidence at all. */
export function noEvidence(e: EvidenceItem): boolean {
  return e.receipt_mismatch !== undefined && e.receipt_mismatch.some((f) => f !== 'provenance_class');
}
