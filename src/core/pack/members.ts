/**
 * Record members as read (receipts, entries, commitments, workflow
 * receipts, plans, reports, outcome reports): each is named as the format
 * names it (`member_name`) and kept, with its bytes or null when withheld.
 * Every record member is kept (a list, never a map a later member could
 * overwrite); the records phase (records.ts) checks them against their events.
 */
import { memberName } from './format';
import { RecordRef, Tally } from './result';

type Obj = Record<string, unknown>;

/** The record members of a pack, in file order. */
export class PackRecords {
  readonly receipts: (RecordRef & { id: string; raw: string | null })[] = [];
  readonly entries: (RecordRef & { seq: number; raw: string | null })[] = [];
  readonly commitments: (RecordRef & { id: string; raw: string | null })[] = [];
  readonly workflows: (RecordRef & { id: string; raw: string | null })[] = [];
  /** `receipt/<id>` members stating that a named receipt is not in the ledger (`recorded: false`). */
  readonly notRecorded: (RecordRef & { id: string })[] = [];
  readonly plans: (RecordRef & { plan_id: string; version: number; digest: string; registered_at: string; plan: string; withheld: boolean })[] = [];
  readonly reports: (RecordRef & { report_id: string; digest: string; report: unknown; recorders: unknown; other_jobs: unknown })[] = [];
  readonly outcomes: (RecordRef & { id: string; receipt_id: string; raw: string | null })[] = [];
  /** Record members that say their content was erased (issue 29): each is checked against its event's erasure. */
  readonly erased: RecordRef[] = [];
}

/** A record member's name must be exactly the one the format gives it (src/core/pack/format.ts `memberName`). */
function named(t: Tally, name: string, expected: string | null, form: string): void {
  if (expected === name) t.pass('member_name');
  else t.fail(name, 'member_name', expected === null ? `its fields do not make a name of the form ${form}` : `the record it holds is named ${expected} by the format: a member under another name is refused`);
}

/** A record's bytes: null (withheld, counted and listed; or erased, listed and checked against its event) when the pack does not carry them. */
function rawOf(t: Tally, name: string, raw: unknown, r: PackRecords, m: Obj): string | null {
  if (typeof raw === 'string') return raw;
  const er = m.erased;
  if (raw === null && typeof er === 'object' && er !== null) {
    const e = er as Obj;
    r.erased.push({ member: name, position: Number(m.position) });
    t.notChecked.push(`${name}: content erased on ${String(e.erased_at)} by ${String(e.by)} (${String(e.legal_basis)}): ${String(e.reason)} (erasure event at position ${String(e.position)}); recorded, never checked as content`);
    return null;
  }
  t.counts.withheld_records++;
  t.notChecked.push(`${name}: bytes withheld`);
  return null;
}

/** Read one record member `m` named `name`; false when the name is of no record kind. */
export function recordMember(r: PackRecords, name: string, m: Obj, t: Tally): boolean {
  if (name.startsWith('receipt/')) {
    t.counts.receipts++;
    const id = typeof m.id === 'string' ? m.id : '';
    named(t, name, id !== '' && id === id.toLowerCase() ? memberName.receipt(id) : null, 'receipt/<id> with its lowercase id');
    if (m.recorded === false && m.position === null && m.raw === null) {
      // The server's statement, not a record: nothing here can be checked, so it is listed and the pack is not verified
      // (a recorded receipt swapped for this statement, its event dropped, reads the same offline).
      r.notRecorded.push({ member: name, position: NaN, id });
      t.counts.not_recorded++;
      t.notChecked.push(`${name}: the ledger states that this receipt, named by the subject, is not recorded as of the checkpoint; that cannot be checked offline`);
      return true;
    }
    r.receipts.push({ member: name, position: Number(m.position), id, raw: rawOf(t, name, m.raw, r, m) });
  } else if (name.startsWith('entry/')) {
    t.counts.entries++;
    const seq = typeof m.seq === 'number' && Number.isSafeInteger(m.seq) && m.seq >= 1 ? m.seq : null;
    named(t, name, seq === null ? null : memberName.entry(seq), 'entry/<seq> with a seq from 1');
    r.entries.push({ member: name, position: Number(m.position), seq: seq ?? NaN, raw: rawOf(t, name, m.raw, r, m) });
  } else if (name.startsWith('commitment/')) {
    t.counts.commitments++;
    const id = typeof m.id === 'string' ? m.id : '';
    named(t, name, id ? memberName.commitment(id) : null, 'commitment/<id>');
    r.commitments.push({ member: name, position: Number(m.position), id, raw: rawOf(t, name, m.raw, r, m) });
  } else if (name.startsWith('workflow/')) {
    t.counts.workflows++;
    const id = typeof m.id === 'string' ? m.id : '';
    named(t, name, id && typeof m.position === 'number' ? memberName.workflow(id, m.position) : null, 'workflow/<id>/<position>');
    r.workflows.push({ member: name, position: Number(m.position), id, raw: rawOf(t, name, m.raw, r, m) });
  } else if (name.startsWith('plan/')) {
    t.counts.plans++;
    named(t, name, typeof m.plan_id === 'string' && typeof m.version === 'number' ? memberName.plan(m.plan_id, m.version) : null, 'plan/<plan_id>/<version>');
    const plan = rawOf(t, name, m.plan, r, m);
    r.plans.push({ member: name, position: Number(m.position), plan_id: String(m.plan_id), version: Number(m.version), digest: String(m.digest), registered_at: String(m.registered_at), plan: plan ?? '', withheld: plan === null });
  } else if (name.startsWith('report/')) {
    t.counts.reports++;
    named(t, name, typeof m.report_id === 'string' ? memberName.report(m.report_id) : null, 'report/<report_id>');
    // Erased (issue 29, named by position): listed and checked against its event's erasure, never recomputed.
    if (m.report === null && typeof m.erased === 'object' && m.erased !== null) {
      rawOf(t, name, null, r, m);
      return true;
    }
    r.reports.push({ member: name, position: Number(m.position), report_id: String(m.report_id), digest: String(m.digest), report: m.report, recorders: m.recorders, other_jobs: m.other_jobs });
  } else if (name.startsWith('outcome/')) {
    t.counts.outcomes++;
    const id = typeof m.id === 'string' ? m.id : '';
    named(t, name, id !== '' && id === id.toLowerCase() ? memberName.outcome(id) : null, 'outcome/<id> with its lowercase id');
    r.outcomes.push({ member: name, position: Number(m.position), id, receipt_id: typeof m.receipt_id === 'string' ? m.receipt_id : '', raw: rawOf(t, name, m.raw, r, m) });
  } else return false;
  return true;
}
