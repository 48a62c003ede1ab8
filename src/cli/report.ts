/**
 * The readable report of `aer1 verify`: kind, verdict, every check, the
 * recomputed values, provenance beside the recorded fields (never
 * upgraded, S5 / S7.3 / S8.2 step 6) and the result's `limits` under
 * "What this does not prove".
 *
 * Every string that comes from the input is passed through {@link safe}:
 * control characters and bidirectional overrides are escaped so a
 * document cannot rewrite the terminal or reorder what is shown.
 */
import {
  AnyResult,
  Check,
  CommitmentResult,
  has,
  isObject,
  JsonObject,
  provenanceKind,
  PROVENANCE_MEANING,
  ReceiptResult,
  TimelineResult,
  receiptOfDocument,
  WorkflowResult,
} from '../core/aer1';
import { visibleSegments } from '../core/text';
import type { LineCounts } from './input';

/** How an NDJSON timeline was read (streamed chains only). */
export interface NdjsonStats extends LineCounts {
  format: 'ndjson';
}

/**
 * Escape what a terminal would act on or hide (C0/C1 controls, DEL, bidi
 * and other invisible format characters, unpaired surrogates; the set of
 * `visibleSegments` in src/core/text.ts, shared with the pages) as
 * `\uXXXX`; cut to `max` characters.
 */
export function safe(s: string, max = 200): string {
  const escaped = visibleSegments(s)
    .map((g) => ('text' in g ? g.text : g.codePoint > 0xffff ? `\\u{${g.codePoint.toString(16)}}` : '\\u' + g.codePoint.toString(16).padStart(4, '0')))
    .join('');
  return escaped.length > max ? `${escaped.slice(0, max - 3)}...` : escaped;
}

/** A recorded value as text: strings as they are (escaped), anything else as short JSON. */
function show(v: unknown, max = 100): string {
  if (v === undefined) return '(absent)';
  if (typeof v === 'string') return safe(v, max);
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return safe(s, max);
}

const MARK = { true: '\u2713', false: '\u2717', null: '\u2013' } as const;

function mark(ok: boolean | null): string {
  return ok === null ? MARK.null : ok ? MARK.true : MARK.false;
}

class Out {
  readonly lines: string[] = [];
  line(s = ''): void {
    this.lines.push(s);
  }
  heading(s: string): void {
    if (this.lines.length > 0 && this.lines[this.lines.length - 1] !== '') this.line();
    this.line(s);
  }
  /** Aligned `label  value` rows. */
  table(rows: [string, string][], indent = '  '): void {
    const w = Math.max(0, ...rows.map(([k]) => k.length));
    for (const [k, v] of rows) this.line(`${indent}${k.padEnd(w)}  ${v}`.trimEnd());
  }
  text(): string {
    return this.lines.join('\n') + '\n';
  }
}

function checks(out: Out, list: Check[], title: string | null = 'Checks'): void {
  if (title !== null) out.heading(title);
  if (list.length === 0) {
    out.line('  (none)');
    return;
  }
  const w = Math.max(...list.map((c) => c.name.length));
  for (const c of list) {
    const detail = c.detail !== undefined ? `  ${safe(c.detail, 400)}` : '';
    out.line(`  ${mark(c.ok)} ${c.name.padEnd(w)}${detail}`.trimEnd());
  }
}

function verdictBlock(out: Out, r: { verdict: string; reasons: string[] }): void {
  out.line(`Verdict: ${r.verdict.toUpperCase()}`);
  out.line(`Reasons: ${r.reasons.length ? r.reasons.map((x) => safe(x)).join(', ') : 'none'}`);
}

function limits(out: Out, ...lists: string[][]): void {
  const seen = new Set<string>();
  out.heading('What this does not prove');
  for (const l of lists.flat()) {
    if (seen.has(l)) continue;
    seen.add(l);
    out.line(`  - ${l}`);
  }
}

/** `[CLASS]` beside a recorded field; unknown classes are shown as such, never mapped to a known one. */
function provenanceTag(cls: unknown): string {
  if (cls === undefined || cls === null) return '[no provenance class]';
  if (typeof cls !== 'string') return `[invalid provenance class ${show(cls, 40)}]`;
  return provenanceKind(cls) ? `[${safe(cls, 60)}]` : `[unrecognised provenance class "${safe(cls, 60)}"]`;
}

function provenanceMeaning(cls: unknown): string {
  const k = provenanceKind(cls);
  return k ? PROVENANCE_MEANING[k] : 'not one of the S5 classes: attests nothing';
}

// ---------------------------------------------------------------- receipt

function receiptSection(out: Out, r: ReceiptResult, doc: unknown): void {
  const raw = receiptOfDocument(doc);
  out.heading('Recomputed');
  out.table([
    ['output_hash', r.computed.output_hash ?? '(not computable: canonical_bytes did not decode)'],
    ['canonical byte length', r.computed.canonical_byte_length === null ? '(not computable)' : String(r.computed.canonical_byte_length)],
  ]);
  if (!isObject(raw)) return;
  const rec = raw as JsonObject;
  const cls = rec.provenance_class;
  const tag = provenanceTag(cls);
  const fields: [string, string][] = [];
  const add = (name: string, value: string): void => {
    fields.push([name, value]);
  };
  add('id', show(rec.id));
  if (r.form === 'transport') {
    add('tool', show(rec.tool));
    add('timestamp', show(rec.timestamp));
    if (has(rec, 'tool_context')) add('tool_context', show(rec.tool_context, 80));
    add('status', show(rec.status));
  } else {
    const t = rec.tool;
    add('tool', isObject(t) ? `${show(t.name, 60)} ${show(t.version, 30)} (scope ${show(t.scope, 40)})` : show(t));
    add('created_at', show(rec.created_at));
  }
  add('output_hash', show(rec.output_hash));
  add('verification_status', show(rec.verification_status));
  out.heading(`Recorded fields (${r.form ?? 'unknown'} form${r.wrapped_in === 'jsonrpc' ? ', taken from a JSON-RPC tools/call result._receipt' : ''}); provenance beside each, never upgraded`);
  const w = Math.max(...fields.map(([k]) => k.length));
  const vw = Math.min(72, Math.max(...fields.map(([, v]) => v.length)));
  for (const [k, v] of fields) out.line(`  ${k.padEnd(w)}  ${v.padEnd(vw)}  ${tag}`);
  out.line(`  provenance: ${show(cls)}: ${provenanceMeaning(cls)}`);
}

// ---------------------------------------------------------------- chain

const LIST_ENTRIES = 20;

function chainSection(out: Out, r: TimelineResult, ndjson?: NdjsonStats, title = 'Recomputed', binding?: boolean): void {
  const truncation =
    binding === undefined
      ? 'not excluded by the chain alone (S7.3); check an endpoint commitment with --commitment'
      : binding
        ? 'excluded up to the binding commitment (its published_at): count and final digest match'
        : 'not excluded: the endpoint commitment does not bind this timeline';
  out.heading(title);
  out.table([
    ['job_id', r.job_id === null ? '(none)' : show(r.job_id)],
    ['entry count', String(r.entry_count)],
    ['closed', r.closed ? 'yes (the last entry carries close: true)' : 'no'],
    ['final entry digest', r.final_entry_digest ?? '(not computable: the last entry is malformed)'],
    ['construction', r.construction === '-07' ? '-07 (S7.1)' : r.construction === '-06' ? '-06 (historical, S7.4)' : '(links do not hold)'],
    ['truncation', truncation],
  ]);
  if (ndjson) {
    out.line(
      `  input: NDJSON, ${ndjson.lines} lines (${ndjson.blank_lines} blank, ${ndjson.not_json_lines} not JSON${
        ndjson.not_json_lines ? `: line${ndjson.not_json_lines > 1 ? 's' : ''} ${ndjson.not_json_at.join(', ')}${ndjson.not_json_lines > ndjson.not_json_at.length ? ', ...' : ''}` : ''
      })`,
    );
  }
  if (r.entries && r.entries.length > 0) {
    out.heading('Entry digests (recomputed under S7.1)');
    const n = r.entries.length;
    const shown = n <= LIST_ENTRIES ? r.entries : [...r.entries.slice(0, LIST_ENTRIES / 2), null, ...r.entries.slice(n - LIST_ENTRIES / 2)];
    const w = String(n).length;
    for (const e of shown) {
      if (e === null) {
        out.line(`  ... ${n - LIST_ENTRIES} more ...`);
        continue;
      }
      const seq = e.seq === null ? '?' : String(e.seq);
      const problems = e.reasons.length ? `  (${e.reasons.join(', ')})` : '';
      out.line(`  entry ${String(e.index + 1).padStart(w)}  seq ${seq.padEnd(w)}  ${e.entry_digest ?? '(not computable)'}${problems}`);
    }
  }
  out.heading('Provenance, as recorded (count per class; chaining upgrades nothing, S7.3)');
  const classes = Object.entries(r.provenance);
  if (classes.length === 0) out.line('  (no provenance classes recorded)');
  else {
    const rows = classes.map(([cls, count]): [string, string] => [`${safe(cls, 60)}`, `${String(count).padStart(String(r.entry_count).length)}  ${provenanceMeaning(cls)}`]);
    out.table(rows);
  }
}

// ---------------------------------------------------------------- commitment

function commitmentSection(out: Out, r: CommitmentResult): void {
  out.heading('Endpoint commitment');
  out.line(r.binding ? '  Binding: YES: the commitment binds the visible -07 timeline up to its published_at' : '  Binding: NO: the commitment does not bind this timeline');
  const c = isObject(r.commitment) ? (r.commitment as JsonObject) : null;
  if (c) {
    out.table([
      ['', 'declared  /  computed'],
      ['job_id', `${show(c.job_id)}  /  ${r.computed.job_id === null ? '(none)' : show(r.computed.job_id)}`],
      ['entry_count', `${show(c.entry_count)}  /  ${r.computed.entry_count}`],
      ['final_entry_digest', `${show(c.final_entry_digest)}  /  ${r.computed.final_entry_digest ?? '(not computable)'}`],
      ['published_at', show(c.published_at)],
    ]);
  } else out.line(`  commitment: ${show(r.commitment)} (not an object)`);
  if (r.witness) {
    out.heading('Witness (as given, not checked)');
    out.table(Object.entries(r.witness).map(([k, v]): [string, string] => [k, show(v)]));
  }
}

// ---------------------------------------------------------------- workflow

function workflowSection(out: Out, r: WorkflowResult): void {
  out.heading('Merkle root (S8.1)');
  out.table([
    ['construction', r.merkle.construction],
    ['declared', r.merkle.declared === null ? '(absent)' : show(r.merkle.declared)],
    ['computed', r.merkle.computed ?? '(not computable: step receipt ids incomplete)'],
  ]);
  if (r.merkle.confirmed) out.line(`  ${MARK.true} Merkle root confirmed: it recomputes from the ${r.steps.length} step receipt ids`);
  else if (r.merkle.computed === null) out.line(`  ${MARK.null} Merkle root not computed`);
  else if (typeof r.merkle.declared === 'string' && /^[0-9a-f]{64}$/.test(r.merkle.declared)) out.line(`  ${MARK.false} Merkle root mismatch: the declared root does not recompute`);
  else out.line(`  ${MARK.null} Merkle root not compared: the declared root is malformed`);

  out.heading('Steps (provenance per step, never upgraded by the workflow receipt)');
  if (r.steps.length === 0) out.line('  (no steps)');
  for (const s of r.steps) {
    const receipt =
      s.receipt === 'verified' ? 'receipt verified' : s.receipt === 'failed' ? `receipt FAILED (${s.reasons.join(', ')})` : s.receipt === 'missing' ? 'receipt missing' : 'receipt not supplied';
    const prov = s.receipt === 'verified' || s.receipt === 'failed' ? provenanceTag(s.provenance_class) : '[provenance unknown: no step receipt]';
    const hash = s.receipt_hash_matches_output_hash === null ? '' : s.receipt_hash_matches_output_hash ? '  receipt_hash = output_hash' : '  receipt_hash != output_hash (informational)';
    out.line(`  step ${show(s.seq, 12)}  ${s.receipt_id === null ? '(no receipt_id)' : show(s.receipt_id, 60)}  ${receipt}  ${prov}${hash}`);
  }
  out.heading('Output hash');
  out.line(`  ${MARK.null} not confirmed: the workflow output bytes are implementation-defined and not part of the receipt (S8.1)`);
}

// ---------------------------------------------------------------- entry point

/** The full readable report for one verified document. */
export function renderReport(result: AnyResult, opts: { source: string; doc?: unknown; ndjson?: NdjsonStats }): string {
  const out = new Out();
  let kind: string = result.kind;
  if (result.kind === 'receipt' && result.form) kind = `receipt (${result.form} form${result.wrapped_in === 'jsonrpc' ? ', from a JSON-RPC response' : ''})`;
  if (result.kind === 'chain') kind = `chain (hash-chained job timeline${opts.ndjson ? ', NDJSON, streamed' : ''})`;
  if (result.kind === 'commitment') kind = `commitment (endpoint commitment checked against a timeline${opts.ndjson ? ', NDJSON, streamed' : ''})`;
  if (result.kind === 'workflow') kind = 'workflow (verifiable workflow receipt)';
  out.line(`AER-1 verification of ${safe(opts.source)}`);
  out.line(`Kind: ${kind}`);
  verdictBlock(out, result);
  checks(out, result.checks);

  switch (result.kind) {
    case 'receipt':
      receiptSection(out, result, opts.doc);
      limits(out, result.limits);
      break;
    case 'chain':
      chainSection(out, result, opts.ndjson);
      limits(out, result.limits);
      break;
    case 'commitment':
      commitmentSection(out, result);
      out.heading(`Timeline: ${result.timeline.verdict.toUpperCase()}${result.timeline.reasons.length ? ` (${result.timeline.reasons.join(', ')})` : ''}`);
      checks(out, result.timeline.checks, null);
      chainSection(out, result.timeline, opts.ndjson, 'Timeline, recomputed', result.binding);
      limits(out, result.limits, result.timeline.limits);
      break;
    case 'workflow':
      workflowSection(out, result);
      limits(out, result.limits);
      break;
  }
  return out.text();
}
