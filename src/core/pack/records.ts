/**
 * The records phase: no id or seq held twice (`duplicate`), every record's
 * event is in the pack and carries exactly the record's bytes
 * (`leaf_bytes`), every plan's digest (`plan_digest`), and the AER-1
 * verdicts of the receipts and outcome reports (`aer1_verdict`), each judged
 * as it is read against its event.
 */
import { isObject, ReceiptResult, verifyReceipt } from '../aer1';
import { canonicalDigest, canonicalJson } from '../coverage/canonical';
import { ndjsonTexts } from '../coverage/assemble';
import { verifyOutcome } from '../outcomes/outcome';
import type { PackEvents } from './events';
import { memberName } from './format';
import type { PackRecords } from './members';
import { PackDeps, parseText, RecordRef, Tally } from './result';

type Obj = Record<string, unknown>;

/** A record's event data, read once per event; null when the event is missing, withheld or of another type (said here). */
export class LeafData {
  private readonly parsed = new Map<number, Obj | null>();

  constructor(
    private readonly events: PackEvents,
    private readonly missing: ReadonlySet<string>,
    private readonly t: Tally,
  ) {}

  of(ref: RecordRef, type: string | string[]): Obj | null {
    const ev = this.events.get(ref.position);
    if (ev === undefined) {
      // A listed event the pack lacks is named once (member_missing), not again on the records it backs.
      if (this.missing.has(memberName.event(ref.position))) this.t.notChecked.push(`${ref.member}: against its event (position ${ref.position}), which is missing from the pack`);
      else this.t.fail(ref.member, 'leaf_bytes', `its event (position ${ref.position}) is not in the pack`);
      return null;
    }
    if (ev === null) return null; // withheld: said above
    if (ev.data === null) return null; // erased (issue 29): listed by the events phase, never checked as content
    const types = Array.isArray(type) ? type : [type];
    if (!types.includes(ev.type)) {
      this.t.fail(ref.member, 'leaf_bytes', `the event at position ${ref.position} is a ${ev.type}, not ${types.join(' or ')}`);
      return null;
    }
    // Parsed once per event: an import's one event backs every entry it recorded.
    let d = this.parsed.get(ref.position);
    if (d === undefined) {
      const v = parseText(ev.data);
      d = isObject(v) ? (v as Obj) : null;
      this.parsed.set(ref.position, d);
    }
    return d;
  }

  /** The record's bytes are its event's (`leaf_bytes`). */
  same(ref: RecordRef, ok: boolean, what: string): void {
    if (ok) this.t.pass('leaf_bytes');
    else this.t.fail(ref.member, 'leaf_bytes', `${what} differs from the bytes in its event (leaf ${ref.position - 1}): altered`);
  }
}

/** What the records phase found: the receipts' and outcome reports' verdicts, counted, and the receipts held by id. */
export interface RecordVerdicts {
  receipts: Record<string, number>;
  outcomes: Record<string, number>;
  receiptDocs: Map<string, unknown>;
}

/** One member per id, per seq: a second one (whatever its name) is refused, and both are checked. */
function dupes<T>(t: Tally, list: readonly T[], key: (x: T) => string | number, member: (x: T) => string, what: string): void {
  const seen = new Map<string | number, string>();
  for (const x of list) {
    const k = key(x);
    const prev = seen.get(k);
    if (prev !== undefined) t.fail(member(x), 'duplicate', `${what} ${String(k)} is also held by ${prev}`);
    else seen.set(k, member(x));
  }
}

/** Check every record against its event (see the module comment). */
export function checkRecords(r: PackRecords, events: PackEvents, leaf: LeafData, deps: PackDeps, t: Tally): RecordVerdicts {
  dupes(t, r.receipts, (x) => x.id, (x) => x.member, 'receipt');
  dupes(t, r.entries, (e) => e.seq, (e) => e.member, 'entry seq');
  dupes(t, r.commitments, (c) => c.id, (c) => c.member, 'commitment');
  dupes(t, r.reports, (x) => x.report_id, (x) => x.member, 'report');
  dupes(t, r.plans, (p) => `${p.plan_id}/${p.version}`, (p) => p.member, 'plan version');
  dupes(t, r.workflows, (w) => w.position, (w) => w.member, 'workflow receipt at position');
  dupes(t, r.outcomes, (o) => o.id, (o) => o.member, 'outcome');
  const out: RecordVerdicts = { receipts: {}, outcomes: {}, receiptDocs: new Map() };
  // A record that says its content was erased (issue 29): its event must be erased in the pack (by an erasure it holds, checkErasures).
  for (const x of r.erased) {
    // Backed: listed under what was not checked (never counted as a check passed on content).
    if (!events.get(x.position)?.erased) t.fail(x.member, 'payload_commitment', `it says its content was erased, but its event (position ${x.position}) is not erased in the pack`);
  }
  for (const x of r.receipts) {
    const d = leaf.of(x, 'ReceiptRecorded');
    if (x.raw === null) continue; // withheld: counted and listed when read
    if (d) leaf.same(x, d.raw === x.raw && String(d.id).toLowerCase() === x.id, 'the receipt');
    const p = deps.parseJson(Buffer.from(x.raw, 'utf8'));
    const result: ReceiptResult = verifyReceipt(p.ok ? p.value : undefined);
    out.receipts[result.verdict] = (out.receipts[result.verdict] ?? 0) + 1;
    if (result.verdict === 'valid') t.pass('aer1_verdict');
    else t.fail(x.member, 'aer1_verdict', `AER-1 verdict ${result.verdict} (${result.reasons.join(', ')})`);
    if (p.ok && !out.receiptDocs.has(x.id)) out.receiptDocs.set(x.id, p.value);
  }
  // Outcome reports (issue 18): each against its event, and verified again (its output commitment).
  for (const o of r.outcomes) {
    const d = leaf.of(o, 'OutcomeReported');
    if (o.raw === null) continue; // withheld: counted and listed when read
    const p = deps.parseJson(Buffer.from(o.raw, 'utf8'));
    const result = verifyOutcome(p.ok ? p.value : undefined);
    // The report is recomputed from the event's fields: they must be the ones its raw bytes state.
    const f = result.fields;
    const fieldsSame = f === null || (d !== null && d.job_id === f.job_id && d.receipt_id === f.receipt_id.toLowerCase() && d.effect === f.effect && d.result === f.result && d.observed_at === f.observed_at && d.system === f.system && d.output_hash === f.output_hash);
    if (d) leaf.same(o, d.raw === o.raw && String(d.outcome_id).toLowerCase() === o.id && d.receipt_id === o.receipt_id && fieldsSame, 'the outcome report (its bytes, or the fields its event states for them)');
    out.outcomes[result.verdict] = (out.outcomes[result.verdict] ?? 0) + 1;
    if (result.verdict === 'valid') t.pass('aer1_verdict');
    else t.fail(o.member, 'aer1_verdict', `the outcome report's verdict is ${result.verdict} (${result.reasons.join(', ')})`);
  }
  // Entries: each against its event (an append, or its line of an import).
  const importTexts = new Map<number, string[] | unknown[] | null>();
  for (const e of r.entries) {
    const seq = e.seq;
    if (e.raw === null || Number.isNaN(seq)) continue; // withheld (listed when read) or no seq (failed member_name)
    const d = leaf.of(e, ['TimelineEntryAppended', 'TimelineImported']);
    if (!d) continue;
    if (events.get(e.position)?.type === 'TimelineEntryAppended') leaf.same(e, d.raw === e.raw && d.seq === seq, 'the entry');
    else {
      if (!importTexts.has(e.position)) {
        const raw = typeof d.raw === 'string' ? d.raw : '';
        const arr = d.format === 'ndjson' ? ndjsonTexts(raw) : parseText(raw);
        importTexts.set(e.position, Array.isArray(arr) ? arr : null);
      }
      const all = importTexts.get(e.position);
      const at = all ? all[seq - 1] : undefined;
      leaf.same(e, typeof at === 'string' ? at === e.raw : at !== undefined && JSON.stringify(at) === JSON.stringify(parseText(e.raw)), 'the entry');
    }
  }
  for (const c of r.commitments) {
    const d = leaf.of(c, 'EndpointCommitmentRecorded');
    if (d && c.raw !== null) leaf.same(c, d.raw === c.raw && d.id === c.id, 'the commitment');
  }
  for (const w of r.workflows) {
    const d = leaf.of(w, 'WorkflowReceiptRecorded');
    if (d && w.raw !== null) leaf.same(w, d.raw === w.raw && d.workflow_id === w.id, 'the workflow receipt');
  }
  for (const p of r.plans) {
    const d = leaf.of(p, ['PlanRegistered', 'PlanAmended']);
    if (p.withheld) continue;
    let digestOk = false;
    try {
      digestOk = canonicalDigest(JSON.parse(p.plan)) === p.digest;
    } catch {
      digestOk = false;
    }
    if (!digestOk) t.fail(p.member, 'plan_digest', `the plan's canonical SHA-256 is not its digest ${p.digest}: altered`);
    else t.pass('plan_digest');
    if (d) leaf.same(p, canonicalJson(d.plan) === p.plan && d.digest === p.digest && d.version === p.version && d.plan_id === p.plan_id && d.registered_at === p.registered_at, 'the plan version');
  }
  return out;
}
