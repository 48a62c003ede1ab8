/**
 * The subject phase: the pack is about its header's subject and holds all
 * of it (docs/evidence-pack.md); see {@link bindSubject}.
 */
import { isObject } from '../aer1';
import { outcomeNamesSubject } from '../coverage/outcomes';
import type { PlanSubject } from '../coverage/plan';
import { PackEvents, retainedOf } from './events';
import { memberName } from './format';
import type { PackRecords } from './members';
import { parseText, RecordRef, Tally } from './result';

/** What the subject phase reads: the header's subject, the events, the records and the members the manifest lists that the pack lacks. */
export interface SubjectInput extends Pick<PackRecords, 'receipts' | 'entries' | 'commitments' | 'workflows' | 'plans' | 'reports' | 'outcomes' | 'notRecorded' | 'erased'> {
  subject: { kind: string; id: string } | null;
  events: PackEvents;
  /** Members the manifest lists that the pack lacks (each already a `member_missing` failure). */
  missing: ReadonlySet<string>;
}

/**
 * `subject`: the pack is about its header's subject and holds all of it.
 * Every event is on a stream of the subject or of one of its records
 * (`timeline:<job>` or `workflow:<id>`, `receipt:<id>`, `plan:<plan_id>`,
 * `coverage:<report_id>`, `outcome:<id>`), every record's event is on its
 * own stream, the plans and reports are about the subject, every outcome
 * names the subject (its job, or the workflow's id) and answers a receipt the
 * subject's entries or workflow steps name (so no outcome of another call or
 * job can enter a recomputed report), and every receipt the entries or
 * workflow steps name, or a correction (S9) supersedes to, has a
 * `receipt/<id>` member (recorded: a pass; or stated by the server as not
 * recorded: no pass, listed by the caller). Whether each stream is held
 * whole is the completeness phase's (streams.ts), from the signed heads;
 * this phase returns what it needs: the job or workflow and the receipts
 * named, each with the action naming it.
 */
export function bindSubject(p: SubjectInput, t: Tally): SubjectBound {
  const none: SubjectBound = { record: null, named: new Map() };
  const s = p.subject;
  if (!s || typeof s.id !== 'string' || !['job', 'workflow', 'coverage_report'].includes(s.kind)) {
    t.fail('header', 'subject', 'the header names no subject {kind: job/workflow/coverage_report, id}');
    return none;
  }
  const subjectOf = (report: unknown): { kind: string; id: string } | null => {
    const sub = isObject(report) && isObject(report.subject) ? report.subject : null;
    if (sub && typeof sub.job_id === 'string') return { kind: 'job', id: sub.job_id };
    if (sub && typeof sub.workflow_id === 'string') return { kind: 'workflow', id: sub.workflow_id.toLowerCase() };
    return null;
  };
  let record: { kind: string; id: string } | null;
  if (s.kind === 'coverage_report') {
    const own = p.reports.find((r) => r.report_id === s.id);
    record = own ? subjectOf(own.report) : null;
    // Its report erased (issue 29, named by position): listed as erased (members phase), its subject no longer read from it.
    const erased = p.erased.some((e) => e.member === memberName.report(s.id));
    if (!own && !erased && !p.missing.has(memberName.report(s.id))) t.fail('header', 'subject', `the pack is about coverage report ${s.id} but holds no report/${s.id}`);
    for (const r of p.reports) if (r.report_id !== s.id) t.fail(r.member, 'subject', `a report other than ${s.id}, the pack's subject`);
  } else record = { kind: s.kind, id: s.kind === 'workflow' ? s.id.toLowerCase() : s.id };
  if (!record) return none;
  const home = record.kind === 'job' ? `timeline:${record.id}` : `workflow:${record.id}`;
  // The ledger serves no pack of a job without entries (404) nor of a workflow it does not hold: a job or
  // workflow pack without its records is a forgery stripped of them, whatever else it holds.
  const listedMissing = [...p.missing].some((m) => m.startsWith(s.kind === 'job' ? 'entry/' : 'workflow/'));
  if (s.kind === 'job' && p.entries.length === 0 && !listedMissing) t.fail('header', 'subject', `the pack is about job ${s.id} but holds no entry of its timeline`);
  if (s.kind === 'workflow' && p.workflows.length === 0 && !listedMissing) t.fail('header', 'subject', `the pack is about workflow ${s.id} but holds no workflow receipt`);
  const okSubject = (sub: { kind: string; id: string } | null): boolean => sub !== null && sub.kind === record.kind && sub.id === record.id;

  // Each record's event on the record's own stream.
  const onStream = (ref: RecordRef, stream: string): void => {
    const ev = p.events.get(ref.position);
    if (!ev) return; // missing (leaf_bytes) or withheld (not checked)
    if (ev.stream_id === stream) t.pass('subject');
    else t.fail(ref.member, 'subject', `its event (position ${ref.position}) is on stream ${ev.stream_id}, not ${stream}`);
  };
  for (const r of p.receipts) onStream(r, `receipt:${r.id}`);
  for (const e of p.entries) onStream(e, home);
  for (const c of p.commitments) onStream(c, home);
  for (const w of p.workflows) {
    if (record.kind !== 'workflow' || w.id !== record.id) t.fail(w.member, 'subject', `a workflow receipt of ${w.id}, not of the pack's subject`);
    onStream(w, `workflow:${w.id}`);
  }
  for (const pl of p.plans) {
    onStream(pl, `plan:${pl.plan_id}`);
    const plan = parseText(pl.plan);
    const sub = isObject(plan) && isObject(plan.subject) ? (plan.subject as { kind: string; id: string }) : null;
    if (pl.plan !== '' && !okSubject(sub && { kind: sub.kind, id: sub.kind === 'workflow' ? String(sub.id).toLowerCase() : sub.id })) t.fail(pl.member, 'subject', `a plan for another subject (${JSON.stringify(sub)})`);
  }
  for (const o of p.outcomes) onStream(o, `outcome:${o.id}`);
  for (const r of p.reports) {
    onStream(r, `coverage:${r.report_id}`);
    if (!okSubject(subjectOf(r.report))) t.fail(r.member, 'subject', `a report on another subject (${JSON.stringify(subjectOf(r.report))})`);
  }

  // The receipts the subject's entries and workflow steps name (what its outcomes may answer), and those a correction supersedes to.
  // With the action that names each: `entry <seq> (tool <name>)` or `step <k> of workflow receipt <member>`.
  const named = new Map<string, string>();
  const lower = (id: unknown): string | null => (typeof id === 'string' ? id.toLowerCase() : null);
  const action = (seq: unknown, tool: unknown): string => `entry ${String(seq)}${typeof tool === 'string' ? ` (tool ${JSON.stringify(tool.slice(0, 200))})` : ''}`;
  const name = (x: string | null, by: string): void => void (x !== null && !named.has(x) && named.set(x, by));
  for (const e of p.entries) {
    const doc = parseText(e.raw);
    if (isObject(doc)) name(lower(doc.id), action(e.seq, doc.tool));
  }
  for (const w of p.workflows) {
    const doc = parseText(w.raw);
    if (isObject(doc) && Array.isArray(doc.steps)) doc.steps.forEach((st, k) => isObject(st) && name(lower(st.receipt_id), `step ${k + 1} of ${w.member}${typeof st.tool === 'string' ? ` (tool ${JSON.stringify(st.tool.slice(0, 200))})` : ''}`));
  }

  // Every event on a stream of the subject or of one of its records: the records held, the receipts its entries name
  // (held or not: a missing receipt member is its own failure, its event is not foreign), and the records of members
  // the manifest lists that the pack lacks.
  const missingStreams = [...p.missing].flatMap((m) => {
    const [kind, id] = [m.slice(0, m.indexOf('/')), m.slice(m.indexOf('/') + 1)];
    if (kind === 'receipt') return [`receipt:${id}`];
    if (kind === 'outcome') return [`outcome:${id}`];
    if (kind === 'report') return [`coverage:${id}`];
    if (kind === 'plan') return [`plan:${id.slice(0, id.lastIndexOf('/'))}`];
    return [];
  });
  // Erased events (issue 29): the receipts their retained data names, and the streams of the PayloadsErased events that erased them.
  for (const [position, ev] of p.events) {
    if (!ev?.erased) continue;
    const kept = retainedOf(p.events, position);
    if (kept && ev.type === 'TimelineEntryAppended') name(lower(kept.receipt_id), `${action(kept.seq, kept.tool)}, erased`);
    if (kept && ev.type === 'TimelineImported' && Array.isArray(kept.entries)) for (const x of kept.entries) if (isObject(x)) name(lower(x.receipt_id), `${action(x.seq, x.tool)}, erased`);
    const by = p.events.get(ev.erased.position);
    if (by && by.type === 'PayloadsErased') missingStreams.push(by.stream_id);
  }
  const allowed = new Set<string>([home, ...p.receipts.map((r) => `receipt:${r.id}`), ...[...named.keys()].map((x) => `receipt:${x}`), ...p.plans.map((x) => `plan:${x.plan_id}`), ...p.reports.map((r) => `coverage:${r.report_id}`), ...p.outcomes.map((o) => `outcome:${o.id}`), ...missingStreams]);
  // The gaps in each stream are the completeness phase's (streams.ts: stream_incomplete, walked from the signed heads).
  for (const [position, ev] of p.events) {
    if (ev && !allowed.has(ev.stream_id)) t.fail(memberName.event(position), 'subject', `an event of stream ${ev.stream_id}, which is neither the subject's (${home}) nor one of its records'`);
  }

  // Every receipt named (by an entry, a workflow step, a correction) has its member: a recorded one passes; one the
  // server states is not recorded is listed (not_checked) and never counted as a pass.
  const held = new Set(p.receipts.map((r) => r.id));
  const stated = new Set(p.notRecorded.map((r) => r.id));
  const need = (id: unknown, by: string): void => {
    if (typeof id !== 'string') return;
    const x = id.toLowerCase();
    if (held.has(x)) t.pass('subject');
    else if (stated.has(x) || p.missing.has(memberName.receipt(x))) return; // stated: listed; missing: its own failure
    else t.fail(memberName.receipt(x), 'subject', `${by} names receipt ${x}, which the pack does not hold (a receipt/<id> member, recorded or stated not recorded)`);
  };
  for (const e of p.entries) {
    const doc = parseText(e.raw);
    if (isObject(doc)) need(doc.id, e.member);
  }
  for (const w of p.workflows) {
    const doc = parseText(w.raw);
    if (isObject(doc) && Array.isArray(doc.steps)) for (const st of doc.steps) if (isObject(st)) need(st.receipt_id, w.member);
  }
  for (const [position, ev] of p.events) {
    if (!ev || ev.type !== 'ReceiptCorrected') continue;
    const d = parseText(ev.data);
    if (isObject(d)) need(d.superseded_by, `${memberName.event(position)} (a correction)`);
  }

  // Every outcome answers a call of the subject: a receipt its entries or workflow steps name (not a correction:
  // the server matches outcomes to those ids only). Withheld entries or workflow receipts name nothing checkable here.
  const namedUnknown = p.entries.some((e) => e.raw === null) || p.workflows.some((w) => w.raw === null) || [...p.missing].some((m) => m.startsWith('entry/') || m.startsWith('workflow/'));
  for (const o of p.outcomes) {
    const ev = p.events.get(o.position);
    const d = ev && ev.type === 'OutcomeReported' ? parseText(ev.data) : undefined;
    if (!isObject(d)) continue; // missing or withheld (leaf_bytes, not checked)
    // It names the subject (issue 26): an outcome counts only for the job (or workflow) it names.
    const jobId = typeof d.job_id === 'string' ? d.job_id : '';
    if (!outcomeNamesSubject(jobId, record as PlanSubject)) {
      t.fail(o.member, 'subject', `an outcome of job ${JSON.stringify(jobId)}, not of the pack's subject ${record.kind} ${record.id}: it counts only for the job it names`);
      continue;
    }
    if (namedUnknown) continue;
    const rid = typeof d.receipt_id === 'string' ? d.receipt_id.toLowerCase() : '';
    if (named.has(rid)) t.pass('subject');
    else t.fail(o.member, 'subject', `an outcome of receipt ${rid}, which the subject's entries and workflow steps do not name`);
  }
  return { record: record as SubjectBound['record'], named };
}

/** What the subject phase found: the job or workflow whose records the pack holds, and the receipts its entries or steps name (lowercase) with the action naming each. */
export interface SubjectBound {
  record: { kind: 'job' | 'workflow'; id: string } | null;
  named: Map<string, string>;
}
